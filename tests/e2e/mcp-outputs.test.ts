// Every tool declares an outputSchema (cli/mcp/outputs.ts), and every result of every tool
// matches it: each call here goes through tests/harness/mcp.ts `connect`, whose SDK client
// checks the result against the listed schema and throws on a mismatch, and which checks that
// no field goes undeclared (the server checks the same against its own schema first). Each of
// the 38 tools is called on its ok path, and each that answers expected outcomes with ok: false
// (not_found, timeout, still_waiting, nothing_claimable, no_queue, dead) on those too. Runs on
// the engine under test (A2A_TEST_STORE: PostgreSQL).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ALL_TOOLS } from "../../cli/mcp/toolsets";
import { connect, type Session } from "../harness/mcp";
import { tempDir, testStore } from "../harness/run";

setDefaultTimeout(120_000);

// Tools with an ok: false answer of their own, and what it is.
const NOT_OK = ["agent_clear", "agent_tail", "agent_wait", "agent_wait_all", "task_claim", "task_wait", "lease_take", "reserve_files"];

function repository() {
  const d = tempDir("a2a-out-");
  const git = (...a: string[]) => expect(spawnSync("git", ["-C", d.path, ...a]).status).toBe(0);
  git("init", "-q", "-b", "main");
  writeFileSync(join(d.path, "notes.txt"), "some notes\n");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
  return { d, path: realpathSync(d.path) };
}

describe("tool results match their declared output schema", () => {
  test("every tool declares one, and every path of every tool validates against it", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    const env = { A2A_MCP_MAX_WAIT: "0.5" };
    const [A, B] = await Promise.all([
      connect(s.path, { ...env, A2A_AGENT: "alice" }, { cwd: r.path }),
      connect(s.path, { ...env, A2A_AGENT: "bob" }, { cwd: r.path }),
    ]);
    const seen = new Map<string, Set<boolean>>();
    // One call, validated by the harness; the outcome is remembered per tool.
    const out = async (c: Session, name: string, args: Record<string, unknown> = {}) => {
      const body = await c.structured(name, args);
      const ok = body.ok ?? true; // agent_status (agent2agent's) has no `ok`
      seen.set(name, (seen.get(name) ?? new Set()).add(ok));
      return body;
    };
    try {
      const listed = (await A.client.listTools()).tools;
      expect(listed.map((t) => t.name).sort()).toEqual([...ALL_TOOLS].sort());
      for (const t of listed) expect(t.outputSchema, t.name).toMatchObject({ type: "object", properties: { ok: { type: "boolean" } } });

      // Slots and streams.
      const notes = join(r.path, "notes.txt");
      await out(A, "agent_start", { name: "job", task: "a job" });
      await out(A, "agent_append", { name: "job", chunk: "half" });
      expect(await out(B, "agent_tail", { name: "job" })).toMatchObject({ ok: true, chunks: ["half"] });
      expect(await out(B, "agent_tail", { name: "nope" })).toMatchObject({ ok: false, error: "not_found" });
      expect(await out(B, "agent_wait", { name: "job", timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout" });
      expect(await out(B, "agent_wait", { name: "job", timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      expect(await out(B, "agent_wait_all", { names: ["job", "other"], timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout" });
      expect(await out(B, "agent_wait_all", { names: ["job", "other"], timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      await out(A, "agent_publish", { name: "job", result: "the result", attach: [notes] });
      expect(await out(B, "agent_wait", { name: "job" })).toMatchObject({ ok: true, attachments: [{ name: "notes.txt" }] });
      expect(await out(B, "agent_wait_all", { names: ["job"] })).toMatchObject({ ok: true, results: { job: { result: "the result" } } });
      expect(await out(B, "agent_status")).toMatchObject({ total: 1 });
      expect(await out(B, "agent_clear", { name: "nope" })).toMatchObject({ ok: false, error: "not_found" });
      await out(A, "agent_clear", { name: "job" });

      // Mail, peers, topics and channels.
      const sent = await out(A, "send_message", { to_id: "bob", message: "hello bob", attach: [notes] });
      expect(await out(B, "check_messages")).toMatchObject({ ok: true, count: 1, messages: [{ attachments: [{ name: "notes.txt" }] }] });
      expect(await out(B, "check_messages")).toMatchObject({ ok: true, count: 0 });
      const answer = await out(B, "reply", { message_id: sent.id, message: "hello alice" });
      expect(await out(A, "read_thread", { message_id: sent.id })).toMatchObject({ ok: true, count: 2, unread: expect.any(String) });
      await out(A, "ack_messages", { message_ids: [answer.id] });
      await out(A, "set_summary", { summary: "checking schemas" });
      expect(await out(A, "list_peers", { scope: "all" })).toMatchObject({ ok: true, peers: [{ name: "bob" }] });
      await out(A, "whoami");
      await out(A, "publish_topic", { topic: "build.status", message: "green" });
      expect(await out(B, "read_topic", { pattern: "build.>", from_start: true })).toMatchObject({ ok: true, count: 1 });
      await out(A, "agent_send", { channel: "team", message: "hi all" });
      expect(await out(B, "agent_recv", { channel: "team" })).toMatchObject({ ok: true, count: 1 });

      // Tasks.
      expect(await out(B, "task_claim", { queue: "q" })).toMatchObject({ ok: false, error: "no_queue" });
      const t1 = await out(A, "task_add", { queue: "q", payload: "first" });
      const c1 = await out(B, "task_claim", { queue: "q" });
      expect(c1).toMatchObject({ ok: true, id: t1.id });
      expect(await out(B, "task_claim", { queue: "q" })).toMatchObject({ ok: false, error: "nothing_claimable" });
      expect(await out(B, "task_claim", { queue: "q", wait: true, timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout" });
      expect(await out(B, "task_claim", { queue: "q", wait: true, timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      await out(B, "task_renew", { id: c1.id, token: c1.token });
      expect(await out(A, "task_wait", { ids: [t1.id], timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout" });
      expect(await out(A, "task_wait", { ids: [t1.id], timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      await out(B, "task_done", { id: c1.id, token: c1.token, result: "done", attach: [notes] });
      expect(await out(A, "task_wait", { ids: [t1.id] })).toMatchObject({ ok: true, results: { [t1.id]: { result: "done" } } });
      const t2 = await out(A, "task_add", { queue: "q", payload: "second" });
      const c2 = await out(B, "task_claim", { queue: "q" });
      expect(await out(B, "task_fail", { id: c2.id, token: c2.token, reason: "cannot", retry: false })).toMatchObject({ ok: true, state: "dead" });
      expect(await out(A, "task_wait", { ids: [t2.id] })).toMatchObject({ ok: false, error: "dead" });
      expect(await out(A, "task_list")).toMatchObject({ ok: true, total: 2 });
      expect(await out(A, "task_show", { id: t1.id })).toMatchObject({ ok: true, task: { attachments: [{ name: "notes.txt" }] } });
      expect(await out(A, "task_show", { id: t2.id })).toMatchObject({ ok: true, task: { state: "dead" } });
      await out(A, "task_retry", { id: t2.id });
      expect(await out(A, "task_cancel", { id: t2.id, reason: "enough" })).toMatchObject({ ok: true, state: "dead" });

      // Leases and file reservations.
      await out(A, "lease_take", { names: ["schema"] });
      await out(A, "lease_renew", { names: ["schema"] });
      expect(await out(B, "lease_list")).toMatchObject({ ok: true, leases: [{ name: "schema", holder: "alice" }] });
      expect(await out(B, "lease_take", { names: ["schema"], wait: true, timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout", held: ["schema"] });
      expect(await out(B, "lease_take", { names: ["schema"], wait: true, timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      await out(A, "lease_release", { names: ["schema"] });
      await out(A, "reserve_files", { paths: ["notes.txt"], reason: "editing" });
      expect(await out(B, "list_reservations")).toMatchObject({ ok: true, reservations: [{ pattern: "notes.txt", holder: "alice" }] });
      expect(await out(B, "reserve_files", { paths: ["notes.txt"], wait: true, timeout: 0.1 })).toMatchObject({ ok: false, error: "timeout" });
      expect(await out(B, "reserve_files", { paths: ["notes.txt"], wait: true, timeout: 5 })).toMatchObject({ ok: false, error: "still_waiting" });
      await out(A, "release_files");

      // Search.
      expect((await out(A, "search", { query: "hello" })).count).toBeGreaterThan(0);
      expect(await out(A, "search", { query: "nowhere" })).toMatchObject({ ok: true, count: 0 });

      for (const t of ALL_TOOLS) expect([t, seen.get(t)?.has(true)]).toEqual([t, true]);
      for (const t of NOT_OK) expect([t, seen.get(t)?.has(false)]).toEqual([t, true]);
    } finally {
      await Promise.all([A.close(), B.close()]);
    }
  });
});
