// Proof with real Claude Code: the @anthropic-ai/claude-code CLI, offline, against the
// Messages API stand-in (fixtures/messages-api.ts), with a sandbox HOME set up by
// `a2a setup claude`: real MCP (the compiled a2a mcp) and real hooks (a2a hook ...).
// If Claude Code cannot run here, each test prints a SKIPPED line saying why.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { a2a, collect, tempDir, testStore } from "../harness/run";
import { connect } from "../harness/mcp";
import { claude, session, setup, skipped, type ClaudeEnv } from "./fixtures/claude";
import { newText, standIn, toolResults, type Request } from "./fixtures/messages-api";

setDefaultTimeout(60_000);

// A sandbox: HOME, a store, project directories; a2a registered (user scope) with its hooks.
async function sandbox(path: string, store: string, dirs: string[]): Promise<ClaudeEnv & { dirs: string[] }> {
  const o = { home: join(path, "home"), store };
  mkdirSync(o.home);
  const made = dirs.map((d) => join(path, d));
  made.forEach((d) => mkdirSync(d));
  const r = await collect(setup(o));
  if (r.code !== 0) throw new Error(`a2a setup claude failed: ${r.stderr}`);
  return { ...o, dirs: made };
}

const inDir = (r: Request, dir: string) => r.raw.includes(`Primary working directory: ${dir}`) || r.raw.includes(dir);
const hasTool = (r: Request, t: string) => (r.body.tools ?? []).some((x: any) => x.name === t);

describe("real Claude Code", () => {
  test("claude mcp list shows a2a connected after a2a setup claude, and gone after --remove", async () => {
    if (await skipped("claude mcp list")) return;
    using d = tempDir();
    using store = testStore();
    const o = await sandbox(d.path, store.path, ["proj"]);
    const listed = await claude(["mcp", "list"], o.dirs[0], o);
    expect(listed.stdout).toMatch(/^a2a: .*a2a --dir \S+ mcp - ✔ Connected$/m);
    expect((await collect(setup(o, ["--remove"]))).code).toBe(0);
    const after = await claude(["mcp", "list"], o.dirs[0], o);
    expect(after.stdout).not.toMatch(/^a2a:/m);
  });

  test("two sessions hand work over through agent_wait and agent_publish", async () => {
    if (await skipped("the two-session handoff")) return;
    using d = tempDir();
    using store = testStore();
    const o = await sandbox(d.path, store.path, ["consumer", "producer"]);
    const [consumerDir, producerDir] = o.dirs;
    let consumerWaiting!: () => void;
    const waiting = new Promise<void>((r) => (consumerWaiting = r));
    const api = standIn((r) => {
      if (!hasTool(r, "mcp__a2a__agent_wait")) return [{ text: "ok" }]; // a side request without the tools
      const results = toolResults(r);
      if (inDir(r, consumerDir)) {
        if (!results.length) {
          consumerWaiting();
          return [{ tool: "mcp__a2a__agent_wait", input: { name: "design", timeout: 50 } }];
        }
        return [{ text: `consumer got: ${results.join(" ")}` }];
      }
      if (!results.length) return [{ tool: "mcp__a2a__agent_publish", input: { name: "design", result: "the spec, version 1" } }];
      return [{ text: "published" }];
    });
    try {
      const env = { ...o, apiUrl: api.url };
      const consumer = session("wait for the design", consumerDir, env);
      await waiting; // the consumer's agent_wait is on its way to a2a mcp
      const producer = await session("publish the design", producerDir, env);
      expect(producer.code).toBe(0);
      const c = await consumer;
      expect(c.code).toBe(0);
      expect(JSON.parse(c.stdout).result).toMatch(/^consumer got: .*"result":"the spec, version 1"/);
      const waited = api.requests.find((r) => inDir(r, consumerDir) && toolResults(r).length)!;
      expect(JSON.parse(toolResults(waited)[0])).toMatchObject({ ok: true, name: "design", result: "the spec, version 1", version: 1 });
    } finally {
      api.close();
    }
  });

  test("mail sent from a shell reaches a session through the Stop hook: the next request carries its reason", async () => {
    if (await skipped("mail through the Stop hook")) return;
    using d = tempDir();
    using store = testStore();
    const o = await sandbox(d.path, store.path, ["proj"]);
    const [proj] = o.dirs;
    // Another a2a mcp in the same directory already holds "proj": this session's server is
    // proj-2, and the hook must find that name (its own session's server), not derive one.
    const other = await connect(o.store, {}, { cwd: proj });
    let name = "";
    const api = standIn(async (r) => {
      if (!hasTool(r, "mcp__a2a__whoami")) return [{ text: "ok" }];
      const results = toolResults(r);
      const last = newText(r);
      if (/Stop hook/.test(last) && !results.length) return [{ tool: "mcp__a2a__check_messages", input: {} }];
      if (results.some((t) => /"count":1,"messages"/.test(t))) return [{ text: "read my mail" }]; // check_messages answered
      if (!results.length) return [{ tool: "mcp__a2a__whoami", input: {} }];
      name = JSON.parse(results[0]).name;
      if (!name) throw new Error(`whoami answered ${results[0]}`);
      const sent = await a2a(["send", name, "please review PR 7", "--as", "alice"], { dir: o.store });
      if (sent.code !== 0) throw new Error(sent.stderr);
      return [{ text: "nothing else to do" }];
    });
    try {
      const s = await session("who am I?", proj, { ...o, apiUrl: api.url });
      expect(s.code).toBe(0);
      expect(name).toBe("proj-2");
      const blocked = api.requests.find((r) => /Stop hook/.test(newText(r)))!;
      expect(blocked).toBeDefined();
      expect(newText(blocked)).toMatch(/1 unread a2a message for \\"proj-2\\" from alice: call check_messages/);
      const read = api.requests.find((r) => toolResults(r).some((t) => /please review PR 7/.test(t)));
      expect(read).toBeDefined();
      expect(JSON.parse(s.stdout).result).toBe("read my mail");
      // Read through check_messages: nothing is left unread, and the hook let the session stop.
      expect(JSON.parse((await a2a(["whoami", "--as", "proj-2", "--json"], { dir: o.store })).stdout).unread).toBe(0);
    } finally {
      api.close();
      await other.close();
    }
  });

  test("a worker session claims and completes the queue's tasks; its Stop hook sends it back while work waits", async () => {
    if (await skipped("the worker session")) return;
    using d = tempDir();
    using store = testStore();
    const o = { home: join(d.path, "home"), store: store.path };
    mkdirSync(o.home);
    const proj = join(d.path, "worker");
    mkdirSync(proj);
    // A worker: the queue's tools, and a Stop hook that waits a little for more work.
    const set = await collect(setup(o, ["--tools", "default,tasks", "--worker", "2s"]));
    expect(set.code).toBe(0);
    const ids = [];
    for (const p of ["build the parser", "build the lexer"]) ids.push((await a2a(["task", "add", "build", p], { dir: o.store })).stdout.trim());
    const api = standIn((r) => {
      if (!hasTool(r, "mcp__a2a__task_claim")) return [{ text: "ok" }];
      const results = toolResults(r);
      const last = results.at(-1);
      if (last) {
        const body = JSON.parse(last);
        if (body.token) return [{ tool: "mcp__a2a__task_done", input: { id: body.id, token: body.token, result: `did: ${body.payload}` } }];
        if (body.state === "done") return [{ text: `finished ${body.id}` }];
      }
      return [{ tool: "mcp__a2a__task_claim", input: { queue: "build" } }];
    });
    try {
      const s = await session("work the build queue", proj, { ...o, apiUrl: api.url });
      expect(s.code).toBe(0);
      const tasks = JSON.parse((await a2a(["task", "list", "build", "--json"], { dir: o.store })).stdout);
      expect(tasks.map((t: any) => [t.state, t.result]).sort()).toEqual([["done", "did: build the lexer"], ["done", "did: build the parser"]]);
      // After the first task the session wanted to stop; the hook named the claimable work.
      const sentBack = api.requests.find((r) => /Stop hook/.test(newText(r)) && /claimable tasks: build/.test(newText(r)));
      expect(sentBack).toBeDefined();
    } finally {
      api.close();
    }
  });
});
