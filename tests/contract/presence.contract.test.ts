// The contract of presence (docs/PROTOCOL.md section 11), on every engine, through the Bus
// only: a started presence is listed among the peers with what it says about itself, under a
// name no other live peer holds; a stopped one is gone; the name a session would take is the
// one it takes; a holder's heartbeat and close never touch another holder's record; a holder
// that died is swept once, and its name is free again.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "../../lib/bus";
import type { Peer } from "../../lib/presence/record";
import { childEnv, exitWithin, readUntil, tempDir } from "../harness/run";
import { BOUND_MS, move, past, perTest } from "./support";
import { enginesFor, keeps } from "./engines";

setDefaultTimeout(60_000);

type Presence = Awaited<ReturnType<Bus["presence"]["start"]>>;

const names = async (bus: Bus, cwd: string, scope: "all" | "directory" = "all") => (await bus.presence.peers(scope, { cwd, gitRoot: null })).peers.map((p) => p.name);

// A presence started in `cwd` by a process of its own (fixtures/presence-holder.ts), which is
// then killed (its record stays, with a pid that is gone), or exits by itself without closing
// (only its exit hook runs: it must not keep the process from ending). The child finds the
// store by `where` (no password: A2A_TEST_PG's reaches it as PGPASSWORD).
async function diedHolding(where: string, cwd: string, how: "killed" | "exits" = "killed"): Promise<Peer> {
  const password = process.env.A2A_TEST_PG ? decodeURIComponent(new URL(process.env.A2A_TEST_PG).password) : "";
  const child = Bun.spawn(["bun", join(import.meta.dir, "fixtures", "presence-holder.ts"), where, cwd, ...(how === "exits" ? ["exit"] : [])], {
    stdin: "pipe", stdout: "pipe", stderr: "pipe", env: childEnv({ env: password ? { PGPASSWORD: password } : {} }),
  });
  try {
    const line = await readUntil(child.stdout, (s) => s.includes("\n"));
    if (!line.includes("\n")) throw new Error(`the holder did not start: ${await new Response(child.stderr).text()}`);
    if (how === "exits") expect(await exitWithin(child, BOUND_MS)).toBe(0);
    return JSON.parse(line) as Peer;
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
}

for (const engine of enginesFor("presence")) {
  describe(`${engine.name}: presence`, () => {
    const t = perTest(engine);
    let work = "";
    const started: Presence[] = [];
    const start = async (bus: Bus, cwd: string, summary?: string) => {
      const p = await bus.presence.start({ cwd, summary });
      started.push(p);
      return p;
    };
    // A directory outside any git work tree, named "proj": the name a presence there derives.
    const project = () => {
      work = tempDir("a2a-contract-cwd-").path;
      const dir = join(work, "proj");
      mkdirSync(dir);
      return dir;
    };
    const cleanup = async () => {
      for (const p of started.splice(0)) await p.close();
      if (work) rmSync(work, { recursive: true, force: true });
      work = "";
    };

    test("a started presence is listed with what it says of itself; a stopped one is gone", async () => {
      try {
        const cwd = project();
        const me = await start(t.reopen({ A2A_AGENT: "alice" }), cwd, "reviewing #12");
        expect(me.identity).toEqual({ name: "alice", source: "A2A_AGENT" });
        const listed = (await t.bus.presence.peers("all", { cwd, gitRoot: null })).peers;
        expect(listed.map((p) => ({ name: p.name, summary: p.summary, cwd: p.cwd, pid: p.pid, host: p.host }))).toEqual([
          { name: "alice", summary: "reviewing #12", cwd, pid: process.pid, host: t.bus.host },
        ]);
        await me.setSummary("merging");
        expect((await t.reopen().presence.peers("all", { cwd, gitRoot: null })).peers.map((p) => p.summary)).toEqual(["merging"]);
        await me.close();
        const after = await t.bus.presence.peers("all", { cwd, gitRoot: null });
        expect({ peers: after.peers, gone: after.gone }).toEqual({ peers: [], gone: [] }); // removed by its holder, not swept
      } finally {
        await cleanup();
      }
    });

    test("a name is held by one live peer: the next session in the directory takes the next name, the one whoami predicted", async () => {
      try {
        const cwd = project();
        const first = await start(t.bus, cwd);
        expect(first.identity).toEqual({ name: "proj", source: "directory" });
        const other = t.reopen();
        const predicted = await other.presence.sessionName(cwd, []);
        expect({ name: predicted.name, source: predicted.source }).toEqual({ name: "proj-2", source: "directory" });
        const second = await start(other, cwd);
        expect(second.identity.name).toBe("proj-2");
        expect(await names(t.bus, cwd)).toEqual(["proj", "proj-2"]);
        expect(await names(t.bus, join(cwd, ".."), "directory")).toEqual([]); // another directory's scope
        await first.close();
        await second.close();
        expect(await names(t.bus, cwd)).toEqual([]);
        const back = await start(t.reopen(), cwd); // the name remembered for this directory first
        expect(back.identity.name).toBe("proj");
      } finally {
        await cleanup();
      }
    });

    test("an explicit name is shared: the newer record wins, and the older holder's heartbeat and close leave it", async () => {
      try {
        const cwd = project();
        const summaries = async () => (await t.bus.presence.peers("all", { cwd, gitRoot: null })).peers.map((p) => [p.name, p.summary]);
        const older = await start(t.reopen({ A2A_AGENT: "alice" }), cwd, "older");
        await past(older.record().started_at); // another holder: started later
        const newer = await start(t.reopen({ A2A_AGENT: "alice" }), cwd, "newer");
        expect(await summaries()).toEqual([["alice", "newer"]]);
        await older.setSummary("older, beating"); // a heartbeat of a record no longer its own
        expect(await summaries()).toEqual([["alice", "newer"]]);
        await older.close();
        expect(await summaries()).toEqual([["alice", "newer"]]);
        await newer.setSummary("newer, beating");
        expect(await summaries()).toEqual([["alice", "newer, beating"]]);
        await newer.close();
        expect(await summaries()).toEqual([]);
      } finally {
        await cleanup();
      }
    });

    test("sessions starting at once in one directory take different names", async () => {
      try {
        const cwd = project();
        const got = await Promise.all([1, 2, 3].map(() => start(t.reopen(), cwd)));
        expect(got.map((p) => p.identity.name).sort()).toEqual(["proj", "proj-2", "proj-3"]);
        expect(await names(t.bus, cwd)).toEqual(["proj", "proj-2", "proj-3"]);
      } finally {
        await cleanup();
      }
    });

    test("a holder that died is reported gone by exactly one of two listers at once, and then by none", async () => {
      try {
        const cwd = project();
        const dead = await diedHolding(t.bus.where, cwd);
        expect(dead.name).toBe("proj");
        const here = { cwd, gitRoot: null };
        const both = await Promise.all([t.bus.presence.peers("all", here), t.reopen().presence.peers("all", here)]);
        expect(both.flatMap((l) => l.gone)).toEqual([dead]);
        expect(both.flatMap((l) => l.peers)).toEqual([]);
        expect(await t.bus.presence.peers("all", here)).toEqual({ peers: [], gone: [] });
      } finally {
        await cleanup();
      }
    });

    test("the name of a holder that died is taken by the next session in its directory", async () => {
      try {
        const cwd = project();
        const dead = await diedHolding(t.bus.where, cwd);
        const next = await start(t.reopen(), cwd);
        expect(next.identity).toEqual({ name: dead.name, source: "directory" });
        const listed = await t.bus.presence.peers("all", { cwd, gitRoot: null });
        expect({ peers: listed.peers.map((p) => [p.name, p.pid]), gone: listed.gone }).toEqual({ peers: [[dead.name, process.pid]], gone: [] });
      } finally {
        await cleanup();
      }
    });

    test("a holder that exits without closing ends at once and leaves no live peer: its name is taken again", async () => {
      try {
        const cwd = project();
        const gone = await diedHolding(t.bus.where, cwd, "exits");
        expect((await t.bus.presence.peers("all", { cwd, gitRoot: null })).peers).toEqual([]);
        expect((await start(t.reopen(), cwd)).identity.name).toBe(gone.name);
      } finally {
        await cleanup();
      }
    });

    test.skipIf(!keeps(engine, "mail"))("whoami: the name, the unread mail waiting for it and its policy", async () => {
      await t.bus.mail.send("alice", "bob", "hello");
      await t.bus.mail.setMode("bob", "allowlist");
      const w = await t.reopen().presence.whoami({ name: "bob", source: "given" }, process.cwd());
      expect({ name: w.name, source: w.source, unread: w.unread, policy: w.policy, host: w.host }).toEqual({
        name: "bob", source: "given", unread: 1, policy: "allowlist", host: t.bus.host,
      });
    });
  });
}

// Moved to another store of the engine (a2a export and import, lib/move/): the names remembered
// per directory (PresenceStorage.identities), never the peers themselves.
for (const engine of enginesFor("presence")) {
  describe(`${engine.name}: presence, moved`, () => {
    const t = perTest(engine);

    test("the names remembered for a directory move; live peers do not", async () => {
      const work = tempDir("a2a-contract-cwd-");
      try {
        const cwd = join(work.path, "proj");
        mkdirSync(cwd);
        const first = await t.bus.presence.start({ cwd });
        const second = await t.reopen().presence.start({ cwd });
        expect([first.identity.name, second.identity.name]).toEqual(["proj", "proj-2"]);
        const target = (await t.open({})).bus;
        const { report, text } = await move(t.bus, target);
        expect(report.counts.names).toEqual({ imported: 1, already: 0, kept: 0 });
        expect(text.split("\n").filter((l) => l.includes('"kind":"names"')).map((l) => JSON.parse(l).names)).toEqual([["proj", "proj-2"]]);
        expect((await target.presence.peers("all", { cwd, gitRoot: null })).peers).toEqual([]);
        expect((await move(target, (await t.open({})).bus)).text).toContain(JSON.stringify({ kind: "names", host: first.record().host, cwd, names: ["proj", "proj-2"] }));
        await first.close();
        await second.close();
      } finally {
        work[Symbol.dispose]();
      }
    });
  });
}
