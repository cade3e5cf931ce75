// `a2a mcp` driven by the real SDK client over stdio (the compiled binary, a temp store): the
// agent2agent surface, handoffs with the CLI, long-wait safety (cap, progress, cancel),
// errors, resources, and the lifecycle (bad input lines, stdin closing, signals).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { a2a, exitWithin, inotifyWatches, listens, ON_FILES, openFds, readUntil, spawnA2A, testStore, until } from "../harness/run";
import { connect, INIT, spawnRaw, text } from "../harness/mcp";
import { slotNames, snapshot } from "./fixtures/core";

setDefaultTimeout(90_000);

const AGENT2AGENT: Record<string, string[]> = {
  agent_start: ["name", "task"],
  agent_publish: ["name", "result"],
  agent_wait: ["name", "timeout"],
  agent_status: [],
  agent_clear: ["name"],
  agent_send: ["channel", "message", "sender"],
  agent_recv: ["channel", "since_id"],
};

describe("a2a mcp", () => {
  test("lists agent2agent's seven tools with their argument names and defaults, plus ours", async () => {
    using d = testStore();
    const s = await connect(d.path);
    try {
      const { tools } = await s.client.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      for (const [name, argNames] of Object.entries(AGENT2AGENT)) {
        const props = Object.keys(byName[name]?.inputSchema.properties ?? {});
        for (const a of argNames) expect(props).toContain(a);
        expect(byName[name].description!.length).toBeGreaterThan(40) // a sentence, not a stub (the lists have a byte budget: tool-budget.test.ts);
      }
      const prop = (tool: string, arg: string) => (byName[tool].inputSchema.properties as any)[arg];
      expect(prop("agent_start", "task").default).toBe("");
      expect(prop("agent_wait", "timeout").default).toBe(300);
      expect(prop("agent_send", "sender").default).toBe("");
      expect(prop("agent_recv", "since_id").default).toBe(0);
      expect(byName.agent_wait.inputSchema.required).toEqual(["name"]);
      expect(byName.agent_publish.inputSchema.required).toEqual(["name", "result"]);
      for (const t of ["agent_wait_all", "agent_append", "agent_tail"]) expect(byName[t]).toBeDefined();
      expect(Object.keys(prop("agent_wait_all", "names") ? byName.agent_wait_all.inputSchema.properties! : {})).toEqual(
        expect.arrayContaining(["names", "timeout", "any"]),
      );
      expect(prop("agent_publish", "if_version")).toBeDefined();
      for (const t of ["agent_wait", "agent_recv", "agent_status", "agent_tail"]) expect(byName[t].description).toMatch(/untrusted|not instructions/i);
      expect(byName.agent_status.annotations?.readOnlyHint).toBe(true);
      expect(byName.agent_clear.annotations?.destructiveHint ?? true).toBe(true); // absent: the protocol's default, destructive
      const caps = s.client.getServerCapabilities()!;
      expect(caps.experimental?.["claude/channel"]).toEqual({});
      expect(caps.resources?.subscribe).toBe(true);
      expect(s.client.getInstructions()).toMatch(/agent_publish/);
    } finally {
      await s.close();
    }
  });

  test("hands results over between two servers and the CLI, in both directions", async () => {
    using d = testStore();
    const [A, B] = await Promise.all([connect(d.path), connect(d.path)]);
    try {
      const started = await A.json("agent_start", { name: "researcher", task: "scraping prices" });
      expect(started).toMatchObject({ ok: true, name: "researcher", task: "scraping prices", version: 1 });
      expect(typeof started.message).toBe("string");

      // server B waits, server A publishes
      const waiting = B.json("agent_wait", { name: "researcher" });
      await until(() => listens(B.pid), 20_000, "B's watch");
      const pub = await A.json("agent_publish", { name: "researcher", result: "42 prices\n{\"x\": 1}" });
      expect(pub).toMatchObject({ ok: true, name: "researcher", version: 2 });
      expect(pub.published_at).toBeGreaterThan(1e9);
      const got = await waiting;
      expect(got).toMatchObject({ ok: true, name: "researcher", result: "42 prices\n{\"x\": 1}", task: "scraping prices", version: 2, published_at: pub.published_at });
      expect(got.untrusted).toMatch(/another agent/);
      expect(typeof got.message).toBe("string");

      // the CLI reads what MCP published
      expect(await a2a(["wait", "researcher", "--timeout", "10"], { dir: d.path })).toMatchObject({ stdout: "42 prices\n{\"x\": 1}", code: 0 });

      // CLI publishes, MCP waiter wakes
      const waiting2 = B.json("agent_wait", { name: "writer", timeout: 60 });
      expect((await a2a(["publish", "writer", "draft v1"], { dir: d.path })).code).toBe(0);
      expect(await waiting2).toMatchObject({ ok: true, name: "writer", result: "draft v1", version: 1 });

      // MCP publishes, a blocked CLI waiter wakes
      const cli = spawnA2A(["wait", "editor", "--timeout", "60"], { dir: d.path });
      await until(() => listens(cli.pid), 20_000, "CLI waiter's watch");
      await A.json("agent_publish", { name: "editor", result: "final" });
      expect(await new Response(cli.stdout).text()).toBe("final");
      expect(await cli.exited).toBe(0);

      const st = await B.json("agent_status");
      expect(st).toMatchObject({ total: 3, done: 3, running: 0 });
      expect(st.agents.map((a: any) => a.name)).toEqual(["editor", "writer", "researcher"]);
      expect(st.agents[2]).toMatchObject({ name: "researcher", task: "scraping prices", status: "done", result_preview: "42 prices\n{\"x\": 1}", version: 2 });
      expect(st.agents[2].started_at).toBeLessThanOrEqual(st.agents[2].published_at);

      expect(await A.json("agent_clear", { name: "researcher" })).toMatchObject({ ok: true, name: "researcher" });
      const again = await A.json("agent_clear", { name: "researcher" });
      expect(again).toMatchObject({ ok: false, name: "researcher" });
      expect(again.message).toMatch(/No record found/);
      expect((await a2a(["status", "researcher"], { dir: d.path })).code).toBe(3);
    } finally {
      await Promise.all([A.close(), B.close()]);
    }
  });

  test("agent_status previews long results with 150 characters and an ellipsis; running slots have none", async () => {
    using d = testStore();
    const s = await connect(d.path);
    try {
      await s.json("agent_publish", { name: "long", result: "x".repeat(400) });
      await s.json("agent_start", { name: "busy", task: "thinking" });
      const st = await s.json("agent_status");
      expect(st).toMatchObject({ total: 2, done: 1, running: 1 });
      const byName = Object.fromEntries(st.agents.map((a: any) => [a.name, a]));
      expect(byName.long.result_preview).toBe("x".repeat(150) + "…");
      expect(byName.busy).toMatchObject({ status: "running", result_preview: null, published_at: null, task: "thinking" });
    } finally {
      await s.close();
    }
  });

  test("agent_wait blocked in a fresh server is woken by a CLI publish", async () => {
    using d = testStore();
    const s = await connect(d.path, {}, { tools: "slots" }); // no inbox push: its watch would be there from the start
    try {
      expect(listens(s.pid)).toBe(false); // nothing watched until the first wait
      const waiting = s.json("agent_wait", { name: "build", timeout: 60 });
      await until(() => listens(s.pid), 20_000, "the server's watch");
      expect((await a2a(["publish", "build", "ok: 12 tests"], { dir: d.path })).code).toBe(0);
      expect(await waiting).toMatchObject({ ok: true, name: "build", result: "ok: 12 tests" });
    } finally {
      await s.close();
    }
  });

  test("progress notifications arrive during a long wait and name what is awaited", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_MCP_PROGRESS_MS: "50" });
    try {
      await a2a(["start", "slow", "crunching numbers"], { dir: d.path });
      const seen: { progress: number; message?: string }[] = [];
      let twice!: () => void;
      const gotTwo = new Promise<void>((r) => (twice = r));
      const waiting = s.client.callTool({ name: "agent_wait", arguments: { name: "slow", timeout: 60 } }, undefined, {
        timeout: 60_000,
        onprogress: (p) => {
          seen.push(p);
          if (seen.length === 2) twice();
        },
      });
      await gotTwo;
      await a2a(["publish", "slow", "done crunching"], { dir: d.path });
      const r = await waiting;
      expect(JSON.parse(text(r as any))).toMatchObject({ ok: true, result: "done crunching" });
      expect(seen[1].progress).toBeGreaterThan(seen[0].progress);
      expect(seen[0].message).toMatch(/slow \(running: crunching numbers\)/);
    } finally {
      await s.close();
    }
  });

  test("cancellation releases the wait and the next call is answered", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_LOG: "1" }, { tools: "slots" }); // the only watch is the wait's
    try {
      const ac = new AbortController();
      const waiting = s.client.callTool({ name: "agent_wait", arguments: { name: "never", timeout: 3000 } }, undefined, { signal: ac.signal, timeout: 120_000 });
      await until(() => listens(s.pid), 20_000, "the server's watch");
      ac.abort();
      await expect(waiting).rejects.toThrow();
      await s.stderr.waitFor(/agent_wait -> cancelled/);
      expect(await s.json("agent_status")).toMatchObject({ total: 0 });
      // the released wait does not answer later: a publish now only wakes a new waiter
      const w2 = s.json("agent_wait", { name: "never", timeout: 60 });
      await a2a(["publish", "never", "late"], { dir: d.path });
      expect(await w2).toMatchObject({ ok: true, result: "late" });
      expect(s.stderr.text().match(/agent_wait -> /g)!.length).toBe(2);
    } finally {
      await s.close();
    }
  });

  test("a timeout beyond A2A_MCP_MAX_WAIT returns still_waiting at the cap; within it, timeout", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_MCP_MAX_WAIT: "0.3" });
    try {
      await a2a(["start", "late", "a long job"], { dir: d.path });
      const capped = await s.json("agent_wait", { name: "late", timeout: 30 });
      expect(capped).toMatchObject({ ok: false, name: "late", error: "still_waiting", remaining_secs: 30 });
      expect(capped.waited_secs).toBeGreaterThanOrEqual(0.3);
      expect(capped.message).toMatch(/call agent_wait\(name="late", timeout=30\) again/);
      expect(capped.message).toMatch(/running: a long job/);
      const out = await s.json("agent_wait", { name: "late", timeout: 0.1 });
      expect(out).toMatchObject({ ok: false, name: "late", error: "timeout" });
      expect(out.message).toMatch(/No result from late/);
      const all = await s.json("agent_wait_all", { names: ["late", "other"], timeout: 10 });
      expect(all).toMatchObject({ ok: false, error: "still_waiting", pending: ["late", "other"], done: [] });
      expect(all.message).toMatch(/agent_wait_all/);
    } finally {
      await s.close();
    }
  });

  test("bad arguments give a tool error with the CLI's one-line message, and the next call works", async () => {
    using d = testStore();
    const env = { A2A_MAX_BYTES: "64" };
    const s = await connect(d.path, env);
    try {
      const badName = await s.call("agent_start", { name: "bad name!", task: "x" });
      const cliName = await a2a(["start", "bad name!", "x"], { dir: d.path });
      expect(cliName.code).toBe(2);
      expect(badName.isError).toBe(true);
      expect(text(badName)).toBe(`${cliName.stderr.trim()} (EUSAGE)`);
      expect(badName.structuredContent).toMatchObject({ ok: false, error: "EUSAGE" });

      const big = "y".repeat(100);
      const tooBig = await s.call("agent_publish", { name: "big", result: big });
      const cliBig = await a2a(["publish", "big", big], { dir: d.path, env });
      expect(cliBig.code).toBe(2);
      expect(tooBig.isError).toBe(true);
      // The same line, its remedy in each one's words: a flag for the shell, a parameter for the model.
      expect(text(tooBig)).toBe(`${cliBig.stderr.trim().replace("--attach FILE", 'attach: "FILE"')} (ETOOBIG)`);

      for (const [tool, args, re] of [
        ["agent_wait", { name: "x", timeout: "soon" }, /timeout: expected number, got string "soon"/],
        ["agent_publish", { result: "r" }, /name is required/],
        ["agent_wait_all", { names: [], timeout: 1 }, /names/],
        ["agent_recv", { channel: "a b" }, /invalid topic "a b"/],
        ["agent_wait", { name: "x", timeout: -1 }, /timeout/],
      ] as const) {
        const r = await s.call(tool, args);
        expect(r.isError).toBe(true);
        expect(text(r)).toMatch(re);
        expect(text(r)).toMatch(/^a2a: .*\(EUSAGE\)$/);
        expect(text(r)).not.toContain("\n");
      }
      const conflict = await s.call("agent_publish", { name: "cas", result: "r", if_version: 5 });
      expect(conflict.isError).toBe(true);
      expect(text(conflict)).toMatch(/version 0, not 5.*\(ECONFLICT\)$/);

      expect(await s.json("agent_status")).toMatchObject({ total: 0, agents: [] }); // nothing was written
      expect(slotNames(d.path)).toEqual([]);
      expect(await s.json("agent_publish", { name: "fine", result: "ok", timeout: "ignored extra" })).toMatchObject({ ok: true });
      expect(await s.json("agent_wait", { name: "fine", timeout: "5" })).toMatchObject({ ok: true, result: "ok" }); // numeric string accepted
    } finally {
      await s.close();
    }
  });

  test("200 sequential waits leave the server's open file descriptors flat", async () => {
    using d = testStore();
    const s = await connect(d.path);
    try {
      await s.json("agent_publish", { name: "ready", result: "r" });
      const round = async (i: number) => {
        if (i % 4 === 0) {
          const w = s.json("agent_wait", { name: `w${i}`, timeout: 60 });
          await s.json("agent_publish", { name: `w${i}`, result: String(i) });
          expect((await w).result).toBe(String(i));
        } else if (i % 4 === 1) expect((await s.json("agent_wait", { name: "never", timeout: 0 })).error).toBe("timeout");
        else if (i % 4 === 2) expect((await s.json("agent_wait", { name: "ready" })).ok).toBe(true);
        else expect((await s.json("agent_wait_all", { names: ["ready", "never"], any: true })).ok).toBe(true);
      };
      for (let i = 0; i < 8; i++) await round(i); // warm-up: the shared watch, lazy modules
      const before = openFds(s.pid);
      for (let i = 8; i < 208; i++) await round(i);
      expect(openFds(s.pid)).toBe(before);
    } finally {
      await s.close();
    }
  });

  test("thirty concurrent waits in one server share one watch and each gets its own result", async () => {
    using d = testStore();
    const [A, B] = await Promise.all([connect(d.path), connect(d.path)]);
    try {
      const names = Array.from({ length: 30 }, (_, i) => `n${i}`);
      const waits = names.map((n) => A.json("agent_wait", { name: n, timeout: 60 }));
      const all = A.json("agent_wait_all", { names, timeout: 60 });
      await until(() => listens(A.pid), 20_000, "A's watch");
      for (const n of [...names].reverse()) await B.json("agent_publish", { name: n, result: `result of ${n}` });
      expect((await Promise.all(waits)).map((r) => r.result)).toEqual(names.map((n) => `result of ${n}`));
      expect(Object.keys((await all).results)).toEqual(names);
      // One inotify instance for all 31 waits: its fd and the duplicate Bun reads it through.
      // (On PostgreSQL they share one LISTEN, lib/pg/wake.ts; no inotify to count.)
      if (ON_FILES) {
        const slots = statSync(join(d.path, "slots")).ino;
        const watching = inotifyWatches(A.pid).filter((f) => f.inodes.includes(slots));
        expect(watching.length).toBeGreaterThanOrEqual(1);
        expect(watching.length).toBeLessThanOrEqual(2);
      }
    } finally {
      await Promise.all([A.close(), B.close()]);
    }
  });

  test("slots are resources; a subscription fires on publish", async () => {
    using d = testStore();
    const s = await connect(d.path);
    try {
      const updates: string[] = [];
      let onUpdate = () => {};
      s.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
        onUpdate();
      });
      const next = (count: number) => new Promise<void>((r) => (onUpdate = () => updates.length >= count && r()));
      await s.client.subscribeResource({ uri: "a2a://slot/report" });
      let got = next(1);
      await a2a(["publish", "report", "v1"], { dir: d.path });
      await got;
      expect(updates).toEqual(["a2a://slot/report"]);
      got = next(2);
      await a2a(["start", "report", "rewriting"], { dir: d.path });
      await got;
      const read = await s.client.readResource({ uri: "a2a://slot/report" });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ name: "report", state: "running", task: "rewriting", version: 2 });
      const { resources } = await s.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["a2a://slot/report"]);
      await expect(s.client.readResource({ uri: "a2a://slot/nope" })).rejects.toThrow(/no slot named nope/);
      await expect(s.client.subscribeResource({ uri: "file:///etc/passwd" })).rejects.toThrow(/not a slot resource/);
    } finally {
      await s.close();
    }
  });

  test("broadcast channels: increasing ids, since_id, every reader sees every message", async () => {
    using d = testStore();
    const [A, B] = await Promise.all([connect(d.path, { A2A_AGENT: "alice" }), connect(d.path)]);
    try {
      expect(await A.json("agent_send", { channel: "team", message: "hello" })).toMatchObject({ ok: true, id: 1, channel: "team", sender: "alice" });
      expect(await B.json("agent_send", { channel: "team", message: "hi", sender: "bob" })).toMatchObject({ ok: true, id: 2 });
      await A.json("agent_start", { name: "builder" }); // a slot name is not an identity
      expect(await A.json("agent_send", { channel: "team", message: "schema changed" })).toMatchObject({ id: 3, sender: "alice" });
      await A.json("agent_send", { channel: "other", message: "elsewhere" });

      for (const reader of [A, B]) {
        const all = await reader.json("agent_recv", { channel: "team" });
        expect(all).toMatchObject({ ok: true, channel: "team", count: 3, next_since_id: 3 });
        expect(all.messages.map((m: any) => [m.id, m.sender, m.content])).toEqual([
          [1, "alice", "hello"],
          [2, "bob", "hi"],
          [3, "alice", "schema changed"],
        ]);
        expect(all.messages[0].created_at).toBeGreaterThan(1e9);
        expect(all.tip).toMatch(/since_id=3/);
        expect(all.untrusted).toBeDefined();
      }
      const newer = await B.json("agent_recv", { channel: "team", since_id: 1 });
      expect(newer.messages.map((m: any) => m.id)).toEqual([2, 3]);
      expect(await B.json("agent_recv", { channel: "team", since_id: 3 })).toMatchObject({ count: 0, next_since_id: 3, messages: [] });
      expect(await B.json("agent_recv", { channel: "team", limit: 2 })).toMatchObject({ count: 2, next_since_id: 2, more: true });
      expect(await B.json("agent_recv", { channel: "nobody-here" })).toMatchObject({ ok: true, count: 0, next_since_id: 0 });
    } finally {
      await Promise.all([A.close(), B.close()]);
    }
  });

  test("streaming, compare-and-set and agent_wait_all", async () => {
    using d = testStore();
    const s = await connect(d.path);
    try {
      expect(await s.json("agent_append", { name: "job", chunk: "part 1\n" })).toMatchObject({ ok: true, chunks: 1, version: 1 });
      expect(await s.json("agent_append", { name: "job", chunk: "part 2\n" })).toMatchObject({ chunks: 2, version: 2 });
      expect(await s.json("agent_tail", { name: "job" })).toMatchObject({ ok: true, chunks: ["part 1\n", "part 2\n"], next: 2, status: "running" });
      expect(await s.json("agent_tail", { name: "job", after: 1 })).toMatchObject({ chunks: ["part 2\n"], next: 2 });
      expect((await a2a(["tail", "job"], { dir: d.path })).stdout).toBe("part 1\npart 2\n");
      expect(await s.json("agent_tail", { name: "ghost" })).toMatchObject({ ok: false, error: "not_found" });

      expect(await s.json("agent_publish", { name: "job", result: "all", if_version: 2 })).toMatchObject({ ok: true, version: 3 });
      const lost = await s.call("agent_publish", { name: "job", result: "stale", if_version: 2 });
      expect(lost.isError).toBe(true);
      expect(text(lost)).toMatch(/ECONFLICT/);
      expect((await a2a(["wait", "job"], { dir: d.path })).stdout).toBe("all");

      const first = await s.json("agent_wait_all", { names: "other, job", any: true, timeout: 5 });
      expect(first).toMatchObject({ ok: true, results: { job: { result: "all", version: 3 } } });
      expect(Object.keys(first.results)).toEqual(["job"]);
      const both = s.json("agent_wait_all", { names: ["job", "other"], timeout: 60 });
      await a2a(["publish", "other", "second"], { dir: d.path });
      expect((await both).results).toMatchObject({ job: { result: "all" }, other: { result: "second" } });
      expect(await s.json("agent_wait", { name: "job", after_version: 3, timeout: 0 })).toMatchObject({ ok: false, error: "timeout" });
    } finally {
      await s.close();
    }
  });

  test("slot and channel results carry the unread-mail note of the messaging tools", async () => {
    using d = testStore();
    const [A, B] = await Promise.all([connect(d.path, { A2A_AGENT: "alice" }), connect(d.path, { A2A_AGENT: "bob" })]);
    try {
      const quiet = await A.call("agent_status");
      expect(quiet.content).toHaveLength(1);
      expect((quiet.structuredContent as any).unread).toBeUndefined();
      const sent = await B.call("send_message", { to_id: "alice", message: "ping" });
      expect(sent.isError).toBeFalsy();
      for (const r of [await A.call("agent_status"), await A.call("agent_recv", { channel: "team" }), await A.call("agent_start", { name: "bad name" })]) {
        expect(r.content).toHaveLength(2);
        expect((r.content[1] as { text: string }).text).toMatch(/1 unread message/);
        expect((r.structuredContent as any).unread).toMatch(/1 unread message/);
      }
      expect(JSON.parse(text(await A.call("agent_status"))).unread).toMatch(/unread/); // content[0] stays JSON
    } finally {
      await Promise.all([A.close(), B.close()]);
    }
  });

  test("a malformed JSON-RPC line does not kill the server; it is answered, and stdout carries only JSON-RPC", async () => {
    using d = testStore();
    const p = spawnRaw(d.path, { A2A_LOG: "1" });
    const lines = [INIT, "this is { not json", '{"jsonrpc":"2.0","method":"notifications/initialized"}', '{"not":"json-rpc"}', "", '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'];
    p.stdin.write(lines.join("\n") + "\n");
    p.stdin.flush();
    const out = await readUntil(p.stdout, (t) => t.includes('"id":2'));
    p.stdin.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"agent_status","arguments":{}}}\n');
    p.stdin.flush();
    const more = await readUntil(p.stdout, (t) => t.includes('"id":3'));
    p.stdin.end();
    expect(await exitWithin(p)).toBe(0);
    const msgs = (out + more).trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(msgs.every((m) => m.jsonrpc === "2.0")).toBe(true);
    // Each bad line is answered (id null: neither has a usable id): -32700, then -32600.
    // (The error answers may overtake the initialize result: they need no handler.)
    const seen = msgs.map((m) => [m.id, m.error?.code ?? 0]);
    expect(seen.filter(([id]) => id !== null)).toEqual([[1, 0], [2, 0], [3, 0]]);
    expect(seen.filter(([id]) => id === null)).toEqual([[null, -32700], [null, -32600]]);
    expect(await new Response(p.stderr).text()).toMatch(/bad input line: -32700/);
  });

  test("exits when stdin closes, even in the middle of a wait", async () => {
    using d = testStore();
    const p = spawnRaw(d.path, { A2A_LOG: "1" });
    p.stdin.write(INIT + "\n" + '{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_wait","arguments":{"name":"x","timeout":3000}}}\n');
    p.stdin.flush();
    await until(() => listens(p.pid), 20_000, "the server's watch");
    p.stdin.end();
    expect(await exitWithin(p)).toBe(0);
    expect(await new Response(p.stderr).text()).toMatch(/stopping: stdin closed/);
  });

  for (const sig of ["SIGTERM", "SIGINT"] as const) {
    test(`exits on ${sig} in the middle of a wait`, async () => {
      using d = testStore();
      const p = spawnRaw(d.path, { A2A_LOG: "1" });
      p.stdin.write(INIT + "\n" + '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"agent_wait","arguments":{"name":"x","timeout":3000}}}\n');
      p.stdin.flush();
      await until(() => listens(p.pid), 20_000, "the server's watch");
      p.kill(sig);
      expect(await exitWithin(p)).toBe(0);
      expect(await new Response(p.stderr).text()).toMatch(new RegExp(`stopping: ${sig}`));
    });
  }

  test("a bad A2A_MCP_MAX_WAIT does not end the server: every tool answers with the one-line usage error", async () => {
    using d = testStore();
    const s = await connect(d.path, { A2A_MCP_MAX_WAIT: "soon" });
    try {
      const r = await s.call("agent_status");
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^a2a cannot work here: A2A_MCP_MAX_WAIT="soon" is not a positive number of seconds: .* \(EUSAGE\)\. Tell your user/);
      expect(s.stderr.text()).toMatch(/^a2a mcp: A2A_MCP_MAX_WAIT="soon" is not a positive number of seconds: .*: serving every tool as this error\n$/);
      expect(snapshot(d.path)).toEqual({}); // nothing was written
    } finally {
      await s.close();
    }
  });
});
