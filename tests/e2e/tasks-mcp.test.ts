// The task and lease tools of `a2a mcp` through the real SDK client (the compiled binary, a
// temp store): a lead session adds, a worker session claims and finishes, the lead waits; a
// claim wait woken by an add from the CLI; the wait cap and cancellation; a stale token
// refused with a message phrased for a model (tool names, not shell commands); leases between
// two sessions.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, listens, testStore, until } from "../harness/run";
import { connect, text } from "../harness/mcp";

setDefaultTimeout(90_000);

describe("a2a mcp: tasks", () => {
  test("lead adds with a dependency, worker claims and finishes, lead's task_wait gets the results", async () => {
    using d = testStore();
    const [lead, worker] = await Promise.all([connect(d.path, { A2A_AGENT: "lead" }), connect(d.path, { A2A_AGENT: "worker" })]);
    try {
      const { tools } = await worker.client.listTools();
      const claimTool = tools.find((t) => t.name === "task_claim")!;
      expect(claimTool.description).toMatch(/token/);
      expect(claimTool.description).toMatch(/untrusted/);
      for (const n of ["task_add", "task_done", "task_fail", "task_renew", "task_wait", "task_list", "task_show", "task_retry", "task_cancel", "lease_take", "lease_release", "lease_list", "lease_renew"]) {
        expect(tools.map((t) => t.name)).toContain(n);
      }
      const a = await lead.json("task_add", { queue: "build", payload: "compile a" });
      const link = await lead.json("task_add", { queue: "build", payload: "link", after: [a.id] });
      expect(a).toMatchObject({ ok: true, queue: "build", created: true });

      const waiting = lead.json("task_wait", { ids: [a.id, link.id], timeout: 60 });
      const c1 = await worker.json("task_claim", { queue: "build" });
      expect(c1).toMatchObject({ ok: true, id: a.id, attempt: 1, assignee: "worker", payload: "compile a" });
      expect(c1.message).toContain(`task_done(id="${a.id}", token="${c1.token}"`);
      const blocked = await worker.json("task_claim", { queue: "build" });
      expect(blocked).toMatchObject({ ok: false, error: "nothing_claimable", blocked: 1 });
      expect(blocked.message).toMatch(/wait for a task with wait/);
      expect(blocked.message).not.toMatch(/--wait|a2a task/);
      expect(await worker.json("task_done", { id: a.id, token: c1.token, result: "a.o" })).toMatchObject({ ok: true, state: "done" });
      const c2 = await worker.json("task_claim", { queue: "build" });
      expect(c2.id).toBe(link.id);
      await worker.json("task_done", { id: link.id, token: c2.token, result: "app" });
      const got = await waiting;
      expect(got).toMatchObject({ ok: true, results: { [a.id]: { result: "a.o" }, [link.id]: { result: "app" } } });
      expect(got.untrusted).toMatch(/another agent/);
      // The CLI sees what MCP did.
      expect(await a2a(["task", "wait", link.id], { dir: d.path })).toEqual({ stdout: "app", stderr: "", code: 0 });
      const list = await lead.json("task_list", { queue: "build" });
      expect(list.tasks.map((t: any) => t.state)).toEqual(["done", "done"]);
      expect(list.claimable).toEqual([]);
    } finally {
      await Promise.all([lead.close(), worker.close()]);
    }
  });

  test("a claim wait is woken by an add from the CLI; the cap answers still_waiting; cancel leaves nothing claimed", async () => {
    using d = testStore();
    const w = await connect(d.path, { A2A_AGENT: "worker", A2A_MCP_MAX_WAIT: "1" });
    try {
      const capped = await w.json("task_claim", { queue: "q", wait: true, timeout: 5 });
      expect(capped).toMatchObject({ ok: false, error: "still_waiting", remaining_secs: 4 });
      expect(capped.message).toContain('task_claim(queue="q", wait=true, timeout=4)');
    } finally {
      await w.close();
    }
    const s = await connect(d.path, { A2A_AGENT: "worker", A2A_MCP_PROGRESS_MS: "50", A2A_LOG: "1" });
    try {
      const waiting = s.json("task_claim", { queue: "q", wait: true, timeout: 60 });
      await until(() => listens(s.pid), 20_000, "the server's watch");
      const added = await a2a(["task", "add", "q", "from the shell"], { dir: d.path });
      expect(added.code).toBe(0);
      const got = await waiting;
      expect(got).toMatchObject({ ok: true, id: added.stdout.trim(), payload: "from the shell", attempt: 1, assignee: "worker" });

      // Progress while waiting names the queue; cancelling ends the wait with nothing claimed.
      const ac = new AbortController();
      let progressed!: (m: string | undefined) => void;
      const firstProgress = new Promise<string | undefined>((r) => (progressed = r));
      const cancelled = s.client.callTool({ name: "task_claim", arguments: { queue: "q", wait: true, timeout: 60 } }, undefined, {
        signal: ac.signal, timeout: 60_000, onprogress: (p) => progressed(p.message),
      });
      expect(await firstProgress).toMatch(/^waiting for a claimable task in q, \d+ s$/);
      ac.abort();
      await expect(cancelled).rejects.toThrow();
      await s.stderr.waitFor(/task_claim -> cancelled/);
      const again = await a2a(["task", "add", "q", "for the CLI"], { dir: d.path });
      const cli = await a2a(["task", "claim", "q", "--json"], { dir: d.path });
      expect(JSON.parse(cli.stdout)).toMatchObject({ id: again.stdout.trim(), attempt: 1 });
    } finally {
      await s.close();
    }
  });

  test("a stale token is a tool error phrased for a model, and nothing changes", async () => {
    using d = testStore();
    const [slow, fast] = await Promise.all([connect(d.path, { A2A_AGENT: "slow" }), connect(d.path, { A2A_AGENT: "fast" })]);
    try {
      const t = await slow.json("task_add", { queue: "q", payload: "job" });
      const c1 = await slow.json("task_claim", { queue: "q", lease: 1 });
      const c2 = await fast.json("task_claim", { queue: "q", wait: true, timeout: 60 });
      expect(c2).toMatchObject({ id: t.id, attempt: 2, assignee: "fast" });
      const r = await slow.call("task_done", { id: t.id, token: c1.token, result: "late" });
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/^a2a: cannot finish task \S+: the lease of attempt 1 ran out .*it is now attempt 2, held by fast\. Nothing was changed: claim a task again with task_claim\(q\) \(ECONFLICT\)$/);
      expect(text(r)).not.toContain("a2a task");
      expect(r.structuredContent).toMatchObject({ ok: false, error: "ECONFLICT", data: { id: t.id, attempt: 1, current_attempt: 2, state: "claimed" } });
      const bad = await slow.call("task_done", { id: t.id, token: "nonsense" });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toMatch(/invalid claim token "nonsense".*\(EUSAGE\)$/);
      const shown = await fast.json("task_show", { id: t.id });
      expect(shown.task).toMatchObject({ state: "claimed", assignee: "fast", result: null });
      const unknownAfter = await slow.call("task_add", { queue: "q", payload: "x", after: ["1796000000000000-deadbeef"] });
      expect(text(unknownAfter)).toMatch(/unknown dependency .*check the id given to after; nothing was added \(EUSAGE\)$/);
    } finally {
      await Promise.all([slow.close(), fast.close()]);
    }
  });

  test("leases between two sessions: all-or-nothing, named holders, release", async () => {
    using d = testStore();
    const [alice, bob] = await Promise.all([connect(d.path, { A2A_AGENT: "alice" }), connect(d.path, { A2A_AGENT: "bob" })]);
    try {
      expect((await alice.json("lease_take", { names: ["schema"], ttl: 600 })).leases).toEqual([expect.objectContaining({ name: "schema", holder: "alice" })]);
      const refused = await bob.call("lease_take", { names: ["api", "schema"] });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/cannot lease as bob: held: schema by alice until \S+; nothing was taken\. Wait for them with wait, or see lease_list\(\) \(ECONFLICT\)$/);
      expect((await bob.json("lease_list", {})).leases.map((l: any) => l.name)).toEqual(["schema"]);
      expect(await alice.json("lease_release", { names: ["schema"] })).toMatchObject({ ok: true, released: ["schema"] });
      expect((await bob.json("lease_take", { names: ["api", "schema"] })).leases.map((l: any) => l.holder)).toEqual(["bob", "bob"]);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });
});
