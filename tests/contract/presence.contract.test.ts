// The contract of presence (docs/PROTOCOL.md section 11), on every engine, through the Bus
// only: a started presence is listed among the peers with what it says about itself, under a
// name no other live peer holds; a stopped one is gone; the name a session would take is the
// one it takes.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Bus } from "../../lib/bus";
import { tempDir } from "../harness/run";
import { perTest } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

type Presence = Awaited<ReturnType<Bus["presence"]["start"]>>;

const names = async (bus: Bus, cwd: string, scope: "all" | "directory" = "all") => (await bus.presence.peers(scope, { cwd, gitRoot: null })).peers.map((p) => p.name);

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

    test("whoami: the name, the unread mail waiting for it and its policy", async () => {
      await t.bus.mail.send("alice", "bob", "hello");
      await t.bus.mail.setMode("bob", "allowlist");
      const w = await t.reopen().presence.whoami({ name: "bob", source: "given" }, process.cwd());
      expect({ name: w.name, source: w.source, unread: w.unread, policy: w.policy, host: w.host }).toEqual({
        name: "bob", source: "given", unread: 1, policy: "allowlist", host: t.bus.host,
      });
    });
  });
}
