// The contract of a session's state (docs/PROTOCOL.md §11, "Session state"), on every engine,
// through the Bus only: a live session is in the state its last mark says (idle where none is),
// since it entered it; a mark that changes nothing keeps `since`; a wait puts back the mark it
// found unless a hook marked the session meanwhile; a session whose process is gone is gone, at
// once on this host; a wait for a state wakes on the mark that brings it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "../../lib/bus";
import { childEnv, readUntil, tempDir } from "../harness/run";
import { BOUND_MS, past, perTest } from "./support";
import { enginesFor, keeps } from "./engines";

setDefaultTimeout(60_000);

type Presence = Awaited<ReturnType<Bus["presence"]["start"]>>;

for (const engine of enginesFor("sessions")) {
  describe(`${engine.name}: session state`, () => {
    const t = perTest(engine);
    const it = test.skipIf(!keeps(engine, "presence"));
    let work = "";
    const started: Presence[] = [];
    const start = async (bus: Bus) => {
      work ||= tempDir("a2a-contract-state-").path;
      const cwd = join(work, "proj");
      mkdirSync(cwd, { recursive: true });
      const p = await bus.presence.start({ cwd });
      started.push(p);
      return p;
    };
    const cleanup = async () => {
      for (const p of started.splice(0)) await p.close();
      if (work) rmSync(work, { recursive: true, force: true });
      work = "";
    };
    const stateOf = async (name: string) => {
      const { state, since, on } = await t.reopen().sessions.state(name);
      return { state, since, on };
    };

    it("the state follows the marks, since when each was entered; peers show it; a closed session is gone", async () => {
      try {
        const p = await start(t.reopen({ A2A_AGENT: "alice" }));
        const rec = p.record();
        expect(await t.bus.sessions.state("alice")).toEqual({ state: "idle", since: rec.started_at, on: null, host: t.bus.host });
        await past(rec.started_at);
        await t.bus.sessions.mark("alice", "working");
        const working = await stateOf("alice");
        expect(working.state).toBe("working");
        expect(working.since!).toBeGreaterThan(rec.started_at);
        await past(working.since!);
        await t.reopen().sessions.mark("alice", "working"); // nothing new: `since` stays
        expect(await stateOf("alice")).toEqual(working);
        const before = await t.bus.sessions.mark("alice", "waiting", "a claimable task in build");
        expect({ ...(await stateOf("alice")), since: 0 }).toEqual({ state: "waiting", since: 0, on: "a claimable task in build" });
        await t.bus.sessions.endWait("alice", before);
        expect(await stateOf("alice")).toEqual(working); // the mark the wait found, put back
        await t.bus.sessions.mark("alice", "needs-you", "Claude needs your permission to use Bash");
        const listed = (await t.reopen().sessions.peers("all", { cwd: "/", gitRoot: null })).peers.map((x) => [x.name, x.state, x.on]);
        expect(listed).toEqual([["alice", "needs-you", "Claude needs your permission to use Bash"]]);
        await p.close();
        expect((await stateOf("alice")).state).toBe("gone");
      } finally {
        await cleanup();
      }
    });

    it("a wait's end leaves a mark a hook wrote meanwhile; a waiting mark from before the session started reads idle", async () => {
      try {
        await t.bus.sessions.mark("bob", "waiting", "mail"); // an earlier holder's wait, never ended
        const p = await start(t.reopen({ A2A_AGENT: "bob" }));
        expect(await stateOf("bob")).toEqual({ state: "idle", since: p.record().started_at, on: null });
        const before = await t.bus.sessions.mark("bob", "waiting", "mail");
        expect((await stateOf("bob")).state).toBe("waiting");
        await t.bus.sessions.mark("bob", "idle"); // the stop hook, meanwhile
        await t.bus.sessions.endWait("bob", before);
        expect((await stateOf("bob")).state).toBe("idle");
      } finally {
        await cleanup();
      }
    });

    it("a shell's waiting mark whose process died on this host reads as the mark it found; another host's stays", async () => {
      try {
        await start(t.reopen({ A2A_AGENT: "gail" }));
        await t.bus.sessions.mark("gail", "working");
        const working = await stateOf("gail");
        const dead = Bun.spawn(["true"]);
        await dead.exited; // its pid names no process now
        await t.bus.sessions.mark("gail", "waiting", "slot report", { host: t.bus.host, pid: dead.pid });
        expect(await stateOf("gail")).toEqual(working);
        expect((await t.reopen().sessions.waitState("gail", ["working"], { timeoutMs: 0 })).kind).toBe("done");
        // The next wait finds it as read, and its end puts that back.
        const before = await t.bus.sessions.mark("gail", "waiting", "mail", { host: t.bus.host, pid: process.pid });
        expect((await stateOf("gail")).state).toBe("waiting");
        await t.bus.sessions.endWait("gail", before);
        expect(await stateOf("gail")).toEqual(working);
        // Elsewhere the pid says nothing: the mark stands until its wait's end.
        await t.bus.sessions.mark("gail", "waiting", "mail", { host: "another-host", pid: dead.pid });
        expect((await stateOf("gail")).state).toBe("waiting");
      } finally {
        await cleanup();
      }
    });

    it("a wait for a state wakes on the mark that brings it; a name nothing is known of is gone until it starts", async () => {
      try {
        await start(t.reopen({ A2A_AGENT: "carol" }));
        await t.bus.sessions.mark("carol", "working");
        const waiter = t.reopen().sessions.waitState("carol", ["idle", "needs-you"], { timeoutMs: BOUND_MS });
        await t.reopen().sessions.mark("carol", "idle");
        const o = await waiter;
        expect({ kind: o.kind, state: o.value?.state }).toEqual({ kind: "done", state: "idle" });
        const none = await t.bus.sessions.waitState("carol", ["working"], { timeoutMs: 0 });
        expect(none.kind).toBe("timeout");
        // A name nothing is known of is gone: a wait for it to be idle waits for it to start.
        expect(await t.bus.sessions.state("nobody")).toEqual({ state: "gone", since: null, on: null, host: null });
        expect((await t.bus.sessions.waitState("nobody", ["idle"], { timeoutMs: 0 })).kind).toBe("timeout");
        const up = t.reopen().sessions.waitState("dave", ["idle"], { timeoutMs: BOUND_MS });
        await start(t.reopen({ A2A_AGENT: "dave" }));
        await t.bus.sessions.mark("dave", "idle"); // its session-start hook
        expect((await up).kind).toBe("done");
      } finally {
        await cleanup();
      }
    });

    test.skipIf(!keeps(engine, "presence", "tasks"))("the task a session holds is shown while the claim is its own", async () => {
      try {
        await start(t.reopen({ A2A_AGENT: "erin" }));
        const taskOf = async () => (await t.reopen().sessions.peers("all", { cwd: "/", gitRoot: null })).peers.find((p) => p.name === "erin")!.task;
        const { id } = await t.bus.tasks.add("build", "compile");
        const c = (await t.bus.tasks.claim("build", { as: "erin" })).value!;
        await t.bus.sessions.holdTask("erin", { queue: "build", id });
        expect(await taskOf()).toEqual({ queue: "build", id });
        await t.bus.sessions.holdTask("erin", null, "another"); // finishing another task changes nothing
        expect(await taskOf()).toEqual({ queue: "build", id });
        await t.bus.tasks.complete(id, c.token, "done");
        expect(await taskOf()).toBeNull(); // no longer claimed: not held, whatever the record says
        await t.bus.sessions.holdTask("erin", null, id);
        expect(await taskOf()).toBeNull();
      } finally {
        await cleanup();
      }
    });

    test.skipIf(!keeps(engine, "presence", "reservations"))("the paths a session reserved are shown with it while the reservations live", async () => {
      try {
        const p = await start(t.reopen({ A2A_AGENT: "fred" }));
        const reservedOf = async () => (await t.reopen().sessions.peers("all", { cwd: "/", gitRoot: null })).peers.find((x) => x.name === "fred")!.reserved;
        expect(await reservedOf()).toEqual([]);
        const cwd = p.record().cwd;
        expect((await t.bus.reservations.reserve(["src/api/**", "README.md"], { as: "fred", cwd })).kind).toBe("done");
        await t.bus.reservations.reserve(["docs/**"], { as: "someone-else", cwd });
        expect(await reservedOf()).toEqual(["README.md", "src/api/**"]);
        await t.bus.reservations.release("all", { as: "fred", cwd });
        expect(await reservedOf()).toEqual([]);
      } finally {
        await cleanup();
      }
    });

    it("a session killed on this host is gone at once, without waiting for its heartbeat to age", async () => {
      work = tempDir("a2a-contract-state-").path;
      const cwd = join(work, "proj");
      mkdirSync(cwd);
      const password = process.env.A2A_TEST_PG ? decodeURIComponent(new URL(process.env.A2A_TEST_PG).password) : "";
      const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "presence-holder.ts"), t.bus.where, cwd], {
        stdin: "pipe", stdout: "pipe", stderr: "pipe", env: childEnv({ env: password ? { PGPASSWORD: password } : {} }),
      });
      try {
        const line = await readUntil(child.stdout, (s) => s.includes("\n"));
        const name = JSON.parse(line).name as string;
        expect((await stateOf(name)).state).toBe("idle");
        const waiter = t.reopen().sessions.waitState(name, ["gone"], { timeoutMs: BOUND_MS });
        child.kill("SIGKILL");
        await child.exited;
        expect((await waiter).kind).toBe("done");
        expect((await stateOf(name)).state).toBe("gone");
      } finally {
        child.kill("SIGKILL");
        await cleanup();
      }
    });
  });
}
