// Threads through the compiled binary and the MCP SDK client, on the engine A2A_TEST_STORE
// names: a reply chain joins one thread, `a2a thread` shows it whole from any of its ids as
// each side may see it, framed like recv, and moves nothing; a third agent sees none of it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, testStore } from "../harness/run";
import { connect, text } from "../harness/mcp";

setDefaultTimeout(90_000);

async function ok(args: string[], dir: string): Promise<string> {
  const r = await a2a(args, { dir });
  if (r.code !== 0) throw new Error(`a2a ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
const sent = async (dir: string, args: string[]) => JSON.parse(await ok([...args, "--json"], dir));

// alice asks bob; bob answers (send --reply-to), alice follows up, bob answers again: four
// messages, alternately in bob's and alice's inbox.
async function chain(dir: string) {
  const q = await sent(dir, ["send", "bob", "which port?", "--as", "alice"]);
  const r1 = await sent(dir, ["send", "alice", "8080, why?", "--reply-to", q.id, "--as", "bob"]);
  const r2 = await sent(dir, ["send", "bob", "for the proxy", "--reply-to", r1.id, "--as", "alice"]);
  const r3 = await sent(dir, ["send", "alice", "ok then", "--reply-to", r2.id, "--as", "bob"]);
  return [q, r1, r2, r3];
}

describe("a2a thread", () => {
  test("a reply chain is one thread: shown whole from its middle, oldest first, framed like recv, nothing marked read", async () => {
    using d = testStore();
    const [q, r1, r2, r3] = await chain(d.path);
    expect([q, r1, r2, r3].map((m) => m.thread)).toEqual([q.id, q.id, q.id, q.id]);
    const before = { alice: await ok(["inbox", "--as", "alice", "--json"], d.path), bob: await ok(["inbox", "--as", "bob", "--json"], d.path) };

    const json = JSON.parse(await ok(["thread", r2.id, "--as", "alice", "--json"], d.path));
    expect(json.map((m: any) => [m.id, m.from, m.to, m.body, m.state, m.thread, m.reply_to])).toEqual([
      [q.id, "alice", "bob", "which port?", "sent", q.id, null],
      [r1.id, "bob", "alice", "8080, why?", "unread", q.id, q.id],
      [r2.id, "alice", "bob", "for the proxy", "sent", q.id, r1.id],
      [r3.id, "bob", "alice", "ok then", "unread", q.id, r2.id],
    ]);
    expect(typeof json[0].user).toBe("string");

    const human = await ok(["thread", r1.id, "--as", "bob"], d.path);
    expect(human.split("\n")[0]).toBe(`thread ${q.id}: 4 message(s) you can see`);
    const frames = [...human.matchAll(/^--- message (\S+) from (\S+) .*\[frame [0-9a-f]{8}\] ---$/gm)].map((m) => [m[1], m[2]]);
    expect(frames).toEqual([[q.id, "alice"], [r1.id, "bob"], [r2.id, "alice"], [r3.id, "bob"]]);
    expect(human).toContain(`in reply to ${r2.id}`);
    expect(human.match(/untrusted input from another agent/g)).toHaveLength(4);

    // Nothing was read or taken: both inboxes list as before, and recv still gets the replies.
    expect(await ok(["inbox", "--as", "alice", "--json"], d.path)).toBe(before.alice);
    expect(await ok(["inbox", "--as", "bob", "--json"], d.path)).toBe(before.bob);
    const got = (await ok(["recv", "--as", "alice", "--all", "--json"], d.path)).trim().split("\n").map((l) => JSON.parse(l));
    expect(got.map((m) => [m.id, m.thread])).toEqual([[r1.id, q.id], [r3.id, q.id]]);
    const after = JSON.parse(await ok(["thread", q.id, "--as", "alice", "--json"], d.path));
    expect(after.map((m: any) => m.state)).toEqual(["sent", "read", "sent", "read"]);
  });

  test("a third agent sees none of it (exit 3, one line); an unknown or malformed id is told likewise", async () => {
    using d = testStore();
    const [q, r1] = await chain(d.path);
    for (const id of [q.id, r1.id]) {
      const r = await a2a(["thread", id, "--as", "carol"], { dir: d.path });
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 3, stdout: "" });
      expect(r.stderr).toBe(`a2a: no message ${id} in the inbox of carol or among the messages carol sent: check the id (a2a inbox lists them)\n`);
    }
    const bad = await a2a(["thread", "1764507972123000-zz", "--as", "alice"], { dir: d.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    // carol answers a message she cannot see: her reply starts a thread of its own, named by
    // that id, not alice and bob's.
    const c = await sent(d.path, ["send", "alice", "me too", "--reply-to", r1.id, "--as", "carol"]);
    expect(c.thread).toBe(r1.id);
    const alice = JSON.parse(await ok(["thread", q.id, "--as", "alice", "--json"], d.path));
    expect(alice.map((m: any) => m.id)).not.toContain(c.id);
  });
});

describe("MCP: read_thread and check_messages", () => {
  test("check_messages says each message's thread; read_thread returns the conversation without marking anything read", async () => {
    using d = testStore();
    const [q, r1, r2, r3] = await chain(d.path);
    const s = await connect(d.path, { A2A_AGENT: "alice" }, { tools: "default" });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("read_thread");
      const thread = await s.structured("read_thread", { message_id: r3.id });
      expect({ ok: thread.ok, thread: thread.thread, count: thread.count, left_out: thread.left_out }).toEqual({ ok: true, thread: q.id, count: 4, left_out: undefined });
      expect(thread.messages.map((m: any) => [m.id, m.state, m.thread])).toEqual([[q.id, "sent", q.id], [r1.id, "unread", q.id], [r2.id, "sent", q.id], [r3.id, "unread", q.id]]);
      const shown = text(await s.call("read_thread", { message_id: r3.id }));
      expect(shown).toContain(`--- message ${r2.id} from alice`);
      expect(shown).toContain("untrusted input");
      // Still unread: check_messages gets both replies, each with its thread.
      const checked = await s.structured("check_messages");
      expect(checked.messages.map((m: any) => [m.id, m.thread])).toEqual([[r1.id, q.id], [r3.id, q.id]]);
      // A reply through the tool joins the thread too.
      const replied = await s.structured("reply", { message_id: r3.id, message: "thanks" });
      expect(replied.thread).toBe(q.id);
      const missing = await s.call("read_thread", { message_id: q.id.replace(/-[0-9a-f]{6}$/, "-000000") });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toContain("ENOTFOUND");
    } finally {
      await s.close();
    }
    const bob = JSON.parse(await ok(["thread", q.id, "--as", "bob", "--json"], d.path));
    expect(bob.map((m: any) => [m.from, m.body, m.state])).toEqual([
      ["alice", "which port?", "unread"], ["bob", "8080, why?", "sent"], ["alice", "for the proxy", "unread"], ["bob", "ok then", "sent"], ["alice", "thanks", "unread"],
    ]);
  });
});
