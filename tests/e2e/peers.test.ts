// Peers and the messaging tools of `a2a mcp`, driven by the real SDK client against the
// compiled binary: claude-peers-compatible tools, push notifications, stable names across
// restarts, presence that disappears with the server, and stale entries swept by `a2a peers`.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { literal } from "../harness/pg";
import { a2a, exitWithin, isDatabaseStore, storeExists, storeSql, tempDir, testStore } from "../harness/run";
import { connect, INIT, spawnRaw, type Session } from "../harness/mcp";

setDefaultTimeout(120_000);

const ChannelSchema = z.object({ method: z.literal("notifications/claude/channel"), params: z.object({ content: z.string(), meta: z.record(z.string(), z.string()) }) });
type Channel = z.infer<typeof ChannelSchema>["params"];

interface Peer extends Session {
  pushes: Channel[];
  nextPush(): Promise<Channel>;
}

// One `a2a mcp` in `cwd` with a client that records channel notifications; `json` gives a
// tool's structuredContent.
async function peer(store: string, cwd: string, env: Record<string, string> = {}): Promise<Peer> {
  const pushes: Channel[] = [];
  const waiting: ((c: Channel) => void)[] = [];
  const setup = (client: Client) =>
    client.setNotificationHandler(ChannelSchema as any, (n: any) => {
      const w = waiting.shift();
      if (w) w(n.params);
      else pushes.push(n.params);
    });
  const s = await connect(store, env, { cwd, stderr: "ignore", name: "peers-test", setup });
  return {
    ...s,
    json: s.structured,
    pushes,
    nextPush: () => (pushes.length ? Promise.resolve(pushes.shift()!) : new Promise((r) => waiting.push(r))),
  };
}

// The peers present in the store: the files of peers/, or its rows on a database store, named
// as files are.
const peerFiles = (store: string): string[] => {
  if (!isDatabaseStore(store)) return existsSync(join(store, "peers")) ? readdirSync(join(store, "peers")) : [];
  return storeExists(store) ? storeSql(store, "select name from peers order by name").split("\n").filter(Boolean).map((n) => `${n}.json`) : [];
};
const projDir = (root: string, name: string) => {
  const p = join(root, name);
  mkdirSync(p, { recursive: true });
  return p;
};

describe("a2a mcp messaging", () => {
  test("offers claude-peers' tools with their argument names, plus whoami, reply and topics", async () => {
    using d = tempDir();
    using s = testStore();
    const p = await peer(s.path, projDir(d.path, "proj"));
    try {
      const { tools } = await p.client.listTools();
      const args = Object.fromEntries(tools.map((t) => [t.name, Object.keys(t.inputSchema.properties ?? {})]));
      expect(args.list_peers).toEqual(["scope"]);
      expect(args.send_message).toEqual(expect.arrayContaining(["to_id", "message"]));
      expect(args.set_summary).toEqual(["summary"]);
      expect(args.check_messages).toEqual(["limit"]);
      expect(args.whoami).toEqual([]);
      expect(args.reply).toEqual(["message_id", "message"]);
      expect({ publish_topic: args.publish_topic, read_topic: args.read_topic, ack_messages: args.ack_messages }).toEqual({
        publish_topic: ["topic", "message"],
        read_topic: ["pattern", "from_start", "limit"],
        ack_messages: ["message_ids"],
      });
      expect(p.client.getInstructions()).toMatch(/check_messages/);
      expect(p.client.getInstructions()).toMatch(/untrusted/);
    } finally {
      await p.close();
    }
    const named = await peer(s.path, projDir(d.path, "proj"), { A2A_AGENT: "reviewer" });
    try {
      expect(await named.json("whoami")).toMatchObject({ name: "reviewer", source: "A2A_AGENT", cwd: join(d.path, "proj") });
    } finally {
      await named.close();
    }
  });

  test("two servers exchange messages; the push arrives, and the message stays unread until check_messages", async () => {
    using d = tempDir();
    using s = testStore();
    const store = s.path;
    const a = await peer(store, projDir(d.path, "api"));
    const b = await peer(store, projDir(d.path, "web"));
    try {
      expect((await a.json("whoami")).name).toBe("api");
      expect((await b.json("whoami")).name).toBe("web");
      await b.json("set_summary", { summary: "building the login page" });
      const seen = await a.json("list_peers", { scope: "machine" });
      expect(seen.peers.map((p: any) => [p.id, p.summary])).toEqual([["web", "building the login page"]]);

      const sent = await a.json("send_message", { to_id: "web", message: "which port does the API use?" });
      const push = await b.nextPush();
      expect(push.meta).toMatchObject({ from: "api", message_id: sent.id });
      expect(Object.keys(push.meta).every((k) => /^[A-Za-z0-9_]+$/.test(k))).toBe(true);
      expect(push.content).toContain("which port does the API use?");
      expect(push.content).toContain("untrusted input");

      // The push delivered nothing: the message is still unread, and every result says so.
      const w = await b.call("whoami");
      expect((w.structuredContent as any).unread).toBe("1 unread message: call check_messages");
      expect(w.content.map((c: any) => c.text)).toContain("1 unread message: call check_messages");
      const got = await b.call("check_messages");
      expect((got.content[0] as any).text).toContain(`--- message ${sent.id} from api`);
      expect((got.structuredContent as any).messages.map((m: any) => [m.id, m.from, m.body])).toEqual([[sent.id, "api", "which port does the API use?"]]);
      expect((await b.json("check_messages")).count).toBe(0);

      const answer = await b.json("reply", { message_id: sent.id, message: "8080" });
      const back = await a.nextPush();
      expect(back.meta).toMatchObject({ from: "web", message_id: answer.id, reply_to: sent.id });
      const inbox = await a.json("check_messages");
      expect(inbox.messages.map((m: any) => [m.from, m.body, m.reply_to])).toEqual([["web", "8080", sent.id]]);

      // The CLI and the tools share the inbox.
      const cli = await a2a(["send", "web", "from a shell", "--as", "ops"], { dir: store });
      expect(cli.code).toBe(0);
      expect((await b.nextPush()).meta.from).toBe("ops");
      const refused = await b.call("reply", { message_id: "1700000000000000-abcd-zz-abcdef", message: "x" });
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as any).text).toMatch(/^a2a: no message 1700000000000000-abcd-zz-abcdef in the inbox of web: .*\(ENOTFOUND\)$/);
    } finally {
      await a.close();
      await b.close();
    }
    expect(peerFiles(store)).toEqual([]);
  });

  test("a restarted peer keeps its name and its unread mail; a suffix only while the name is held", async () => {
    using d = tempDir();
    using s = testStore();
    const store = s.path;
    const cwd = projDir(d.path, "My Project!");
    const first = await peer(store, cwd);
    const name = (await first.json("whoami")).name;
    expect(name).toBe("My-Project");
    const second = await peer(store, cwd);
    expect((await second.json("whoami")).name).toBe("My-Project-2");
    await first.close();
    await second.close();
    expect(peerFiles(store)).toEqual([]);

    // Mail for an agent that is not running waits.
    expect((await a2a(["send", name, "while you were out", "--as", "boss"], { dir: store })).code).toBe(0);
    const again = await peer(store, cwd);
    try {
      const me = await again.json("whoami");
      expect(me).toMatchObject({ name, unread_count: 1, unread: "1 unread message: call check_messages" });
      expect((await again.json("check_messages")).messages.map((m: any) => m.body)).toEqual(["while you were out"]);
      const later = await peer(store, cwd); // the second name is remembered too
      expect((await later.json("whoami")).name).toBe("My-Project-2");
      await later.close();
    } finally {
      await again.close();
    }
  });

  test("a server whose stdin closes exits and leaves no presence behind", async () => {
    using d = tempDir();
    using s = testStore();
    const store = s.path;
    const p = spawnRaw(store, {}, { cwd: projDir(d.path, "solo") });
    p.stdin.write(INIT + "\n");
    const reader = p.stdout.getReader();
    const first = await reader.read(); // the initialize answer: presence is registered by now
    expect(new TextDecoder().decode(first.value)).toContain('"id":1');
    expect(peerFiles(store)).toEqual(["solo.json"]);
    p.stdin.end();
    expect(await exitWithin(p, 15_000)).toBe(0);
    expect(peerFiles(store)).toEqual([]);
  });

  test("publish_topic and read_topic share the topics with the CLI and remember the position", async () => {
    using d = tempDir();
    using s = testStore();
    const store = s.path;
    const p = await peer(store, projDir(d.path, "watcher"));
    try {
      expect((await p.json("read_topic", { pattern: "ci.>" })).count).toBe(0);
      await a2a(["pub", "ci.build", "green", "--as", "ci"], { dir: store });
      await p.json("publish_topic", { topic: "ci.deploy", message: "started" });
      const r = await p.call("read_topic", { pattern: "ci.>" });
      expect((r.content[0] as any).text).toContain("untrusted input");
      expect((r.structuredContent as any).messages.map((m: any) => [m.topic, m.from, m.body])).toEqual([["ci.build", "ci", "green"], ["ci.deploy", "watcher", "started"]]);
      expect((await p.json("read_topic", { pattern: "ci.>" })).count).toBe(0);
      const sub = await a2a(["sub", "ci.deploy", "--from-start", "--json"], { dir: store });
      expect(JSON.parse(sub.stdout)).toMatchObject({ topic: "ci.deploy", from: "watcher", body: "started" });
    } finally {
      await p.close();
    }
  });
});

describe("a2a peers", () => {
  test("lists live peers by scope; a dead one is shown as gone once and swept, its inbox kept", async () => {
    using d = tempDir();
    using s = testStore();
    const store = s.path;
    const cwd = projDir(d.path, "repo");
    mkdirSync(join(cwd, ".git"));
    const live = await peer(store, join(cwd));
    try {
      const dead = Bun.spawnSync(["true"]).pid;
      const now = Date.now() / 1000;
      const ghost = JSON.stringify({ a2a: 1, name: "ghost", host: hostname(), pid: dead, cwd, git_root: cwd, tty: null, summary: "", started_at: now, heartbeat: now, heartbeat_ms: 10000 }) + "\n";
      // A peer whose process died without a word: its record left as it was, a file or a row.
      if (!isDatabaseStore(store)) writeFileSync(join(store, "peers", "ghost.json"), ghost);
      else storeSql(store, `insert into peers (name, record, host, pid, started_at, heartbeat) values ('ghost', ${literal(ghost)}, ${literal(hostname())}, ${dead}, ${now}, ${now})`);
      expect((await a2a(["send", "ghost", "for later", "--as", "repo"], { dir: store })).code).toBe(0);
      const r = await a2a(["peers", "--json"], { dir: store, cwd });
      expect(r.code).toBe(0);
      const l = JSON.parse(r.stdout);
      expect(l.peers.map((p: any) => p.name)).toEqual(["repo"]);
      expect(l.gone.map((p: any) => p.name)).toEqual(["ghost"]);
      expect(peerFiles(store)).toEqual(["repo.json"]);
      expect(JSON.parse((await a2a(["inbox", "--as", "ghost", "--json"], { dir: store })).stdout).counts.unread).toBe(1);

      const scoped = async (scope: string, where: string) => JSON.parse((await a2a(["peers", "--scope", scope, "--json"], { dir: store, cwd: where })).stdout).peers.length;
      const sub = projDir(cwd, "src");
      expect(await scoped("repo", sub)).toBe(1);
      expect(await scoped("directory", sub)).toBe(0);
      expect(await scoped("directory", cwd)).toBe(1);
      expect(await scoped("machine", d.path)).toBe(1);
      expect(await scoped("repo", d.path)).toBe(0);
      expect((await a2a(["peers", "--scope", "galaxy"], { dir: store })).code).toBe(2);
    } finally {
      await live.close();
    }
  });

  test("each peer says which coding agent it is, from its MCP client's handshake", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = projDir(d.path, "mixed");
    const env = { A2A_LOG: "1" };
    const claude = await connect(s.path, env, { cwd, name: "claude-code" });
    const other = await connect(s.path, env, { cwd, name: "some-mcp-client" });
    try {
      await claude.stderr.waitFor(/client: claude-code 1\.0\.0/);
      await other.stderr.waitFor(/client: some-mcp-client 1\.0\.0/);
      const l = JSON.parse((await a2a(["peers", "--json"], { dir: s.path, cwd })).stdout);
      const by = Object.fromEntries(l.peers.map((p: any) => [p.name, [p.agent, p.client]]));
      expect(by).toEqual({ mixed: ["Claude Code", "claude-code 1.0.0"], "mixed-2": ["some-mcp-client", "some-mcp-client 1.0.0"] });
      const table = (await a2a(["peers"], { dir: s.path, cwd })).stdout;
      expect(table).toMatch(/^NAME\s+AGENT\s+STATE\s+SINCE\s+HOLDS\s+HOST/);
      expect(table).toMatch(/\nmixed\s+Claude Code\s/);
      const listed = await other.json("list_peers", { scope: "machine" });
      expect(listed.peers.map((p: any) => [p.name, p.agent])).toEqual([["mixed", "Claude Code"]]);
    } finally {
      await claude.close();
      await other.close();
    }
  });
});
