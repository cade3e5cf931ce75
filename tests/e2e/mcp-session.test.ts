// The MCP server as one framework, through the real SDK client (or raw pipes where a
// well-behaved client cannot misbehave on cue) against the compiled binary: every tool logs
// through the one handler, errors are phrased for a model, check_messages marks mail read
// only once its answer was written, agent2agent's times are integers, and one session posts
// under one identity.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, exitWithin, readUntil, tempDir, testStore, until } from "../harness/run";
import { connect, INIT, INITIALIZED, spawnRaw, text } from "../harness/mcp";
import { mailIn, recordOf } from "./fixtures/core";

setDefaultTimeout(90_000);

const box = (store: string, agent: string, where: "new" | "claim" | "cur") => mailIn(store, agent, where).filter((f) => !f.startsWith("."));
const checkMessages = (id: number) =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "check_messages", arguments: {} } });

async function sendAs(store: string, from: string, to: string, body: string): Promise<string> {
  const r = await a2a(["send", to, "-", "--as", from, "--json"], { dir: store, stdin: body });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).id;
}

describe("a2a mcp: one framework", () => {
  test("messaging tools write one A2A_LOG line per call, errors included", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_AGENT: "alice", A2A_LOG: "1" });
    try {
      expect((await s.json("send_message", { to_id: "bob", message: "hi" })).ok).toBe(true);
      await s.call("check_messages");
      const bad = await s.call("reply", { message_id: "nope", message: "x" });
      expect(bad.isError).toBe(true);
      await s.json("publish_topic", { topic: "ci.build", message: "green" });
      const log = await s.stderr.waitFor(/publish_topic -> ok in/);
      expect(log).toMatch(/a2a mcp: send_message -> ok in \d+\.\d{3} s/);
      expect(log).toMatch(/a2a mcp: check_messages -> ok in/);
      expect(log).toMatch(/a2a mcp: reply -> EUSAGE in/);
    } finally {
      await s.close();
    }
  });

  test("errors from messaging and slot tools are phrased with tool parameters and carry code and data", async () => {
    using d = testStore();
    expect((await a2a(["policy", "allowlist", "--as", "bob"], { dir: d.path })).code).toBe(0);
    const s = await connect(d.path, { A2A_AGENT: "alice" });
    try {
      const denied = await s.call("send_message", { to_id: "bob", message: "let me in" });
      expect(denied.isError).toBe(true);
      expect(text(denied)).toMatch(/^a2a: bob does not accept messages from alice \(policy allowlist\): ask bob to run the shell command `a2a allow alice --as bob` \(ask your user to run it\) \(EDENIED\)$/);
      expect(denied.structuredContent).toMatchObject({ ok: false, error: "EDENIED", data: { to: "bob", from: "alice", policy: "allowlist" } });
      expect(box(d.path, "bob", "new")).toEqual([]);

      await s.json("agent_publish", { name: "job", result: "v1" });
      const conflict = await s.call("agent_publish", { name: "job", result: "v2", if_version: 0 });
      expect(conflict.isError).toBe(true);
      expect(text(conflict)).toContain("retry with if_version: 1");
      expect(text(conflict)).not.toContain("--if-version");
      expect(conflict.structuredContent).toMatchObject({ error: "ECONFLICT", data: { slot: "job", version: 1, expected: 0 } });
    } finally {
      await s.close();
    }
  });

  test("agent2agent's times are integer Unix seconds in every agent2agent tool", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_AGENT: "alice" });
    try {
      const ints: number[] = [];
      const started = await s.json("agent_start", { name: "researcher", task: "prices" });
      ints.push(started.started_at);
      const record = recordOf(d.path, "researcher");
      expect(started.started_at).toBe(Math.floor(record.started_at)); // the record keeps milliseconds
      const published = await s.json("agent_publish", { name: "researcher", result: "42" });
      ints.push(published.published_at);
      const waited = await s.json("agent_wait", { name: "researcher", timeout: 5 });
      ints.push(waited.published_at, waited.started_at);
      const status = await s.json("agent_status");
      ints.push(status.agents[0].started_at, status.agents[0].published_at);
      const sent = await s.json("agent_send", { channel: "team", message: "done" });
      ints.push(sent.created_at);
      const recv = await s.json("agent_recv", { channel: "team" });
      ints.push(recv.messages[0].created_at);
      expect(ints).toHaveLength(8);
      for (const t of ints) {
        expect(Number.isInteger(t)).toBe(true);
        expect(t).toBeGreaterThan(1.7e9);
      }
      expect(waited.waited_secs).toBeGreaterThanOrEqual(0); // a2a's own fields may keep fractions
    } finally {
      await s.close();
    }
  });

  test("one session, one identity: channels, topics, mail and replies all post as whoami's name", async () => {
    using d = testStore();
    const s = await connect(d.path); // no A2A_AGENT: the name comes from the working directory
    try {
      const me = (await s.json("whoami")).name;
      expect(me).toMatch(/^[A-Za-z0-9._-]+$/);
      await s.json("agent_start", { name: "builder" }); // a slot is not an identity
      expect((await s.json("agent_send", { channel: "team", message: "one" })).sender).toBe(me);
      expect((await s.json("agent_send", { channel: "team", message: "two", sender: "bob" })).sender).toBe("bob"); // agent2agent's override
      await s.json("publish_topic", { topic: "team", message: "three" });
      const channel = await s.json("agent_recv", { channel: "team" });
      expect(channel.messages.map((m: any) => [m.sender, m.content])).toEqual([[me, "one"], ["bob", "two"], [me, "three"]]);

      await s.json("send_message", { to_id: "ops", message: "four" });
      const got = JSON.parse((await a2a(["recv", "--as", "ops", "--json"], { dir: d.path })).stdout);
      expect([got.from, got.body]).toEqual([me, "four"]);
      const question = await sendAs(d.path, "ops", me, "five?");
      await s.json("reply", { message_id: question, message: "five" });
      const answer = JSON.parse((await a2a(["recv", "--as", "ops", "--json"], { dir: d.path })).stdout);
      expect([answer.from, answer.body, answer.reply_to]).toEqual([me, "five", question]);
    } finally {
      await s.close();
    }
  });
});

describe("a2a mcp: check_messages marks mail read only once its answer was written", () => {
  test("through the client: returned, then read, nothing left claimed", async () => {
    using d = testStore();
    const id = await sendAs(d.path, "ops", "box", "hello");
    const s = await connect(d.path, { A2A_AGENT: "box" });
    try {
      const r = await s.call("check_messages");
      expect((r.structuredContent as any).messages.map((m: any) => m.id)).toEqual([id]);
      await until(() => box(d.path, "box", "cur").length === 1, 20_000, "the message to be marked read");
      expect(box(d.path, "box", "cur")).toEqual([`${id}.json`]);
      expect([...box(d.path, "box", "new"), ...box(d.path, "box", "claim")]).toEqual([]);
      expect(((await s.call("check_messages")).structuredContent as any).count).toBe(0);
    } finally {
      await s.close();
    }
  });

  test("a client that goes away while the answer is being written leaves the mail unread", async () => {
    using d = testStore();
    const body = "x".repeat(300_000); // the answer (~600 KB) cannot fit in a pipe nobody reads
    const id = await sendAs(d.path, "ops", "box", body);
    using scratch = tempDir();
    const pidFile = join(scratch.path, "reader.pid");
    // The "client" forwards the first line (initialize's answer), then stops reading and sits in
    // `sleep`, holding the pipe; killing it closes the server's stdout under the write.
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("A2A_")) base[k] = v;
    const p = Bun.spawn({
      cmd: ["bash", "-c", 'exec 3>&1; "$A2A_BIN" mcp | { head -n 1 >&3; echo $BASHPID > "$PID_FILE"; exec sleep 600; }; exit "${PIPESTATUS[0]}"'],
      env: { ...base, A2A_BIN: BIN, A2A_DIR: d.path, A2A_AGENT: "box", A2A_LOG: "1", PID_FILE: pidFile },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let stderr = "";
    const stderrDone = readUntil(p.stderr, (t) => ((stderr = t), false), 60_000);
    p.stdin.write(INIT + "\n");
    expect(await readUntil(p.stdout, (t) => t.includes('"id":1'))).toContain('"id":1');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"), 20_000, "the reader to stop reading");
    p.stdin.write(INITIALIZED + "\n" + checkMessages(2) + "\n");
    // The handler has returned (its log line) and the message is claimed: the answer is being written.
    await until(() => /check_messages -> ok in/.test(stderr), 20_000, "check_messages to return");
    expect(box(d.path, "box", "claim")).toHaveLength(1);
    expect(box(d.path, "box", "cur")).toEqual([]);
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    p.stdin.end();
    expect(await exitWithin(p, 20_000)).toBe(0); // the server's own exit status
    await stderrDone;
    expect(stderr).toMatch(/check_messages: 1 message\(s\) left unread: the (answer could not be written|server closed before the answer was written)/);
    expect(box(d.path, "box", "new")).toEqual([`${id}.json`]);
    expect([...box(d.path, "box", "claim"), ...box(d.path, "box", "cur")]).toEqual([]);
  });

  test("a client that closes right after asking: each message is unread, or read and in what it was sent", async () => {
    using d = testStore();
    for (let round = 0; round < 4; round++) {
      const id = await sendAs(d.path, "ops", "box", `round ${round}`);
      const p = spawnRaw(d.path, { A2A_AGENT: "box" });
      p.stdin.write(INIT + "\n" + INITIALIZED + "\n" + checkMessages(2) + "\n");
      p.stdin.end(); // gone right after the request
      const out = await new Response(p.stdout).text(); // everything the server wrote, to EOF
      expect(await exitWithin(p, 20_000)).toBe(0);
      const read = box(d.path, "box", "cur").includes(`${id}.json`);
      const unread = box(d.path, "box", "new").includes(`${id}.json`);
      expect(box(d.path, "box", "claim")).toEqual([]);
      expect(read !== unread).toBe(true); // exactly one place: never lost
      if (read) expect(out).toContain(`round ${round}`);
      if (unread) await a2a(["ack", id, "--as", "box"], { dir: d.path }); // the next round starts clean
    }
  });
});
