// Presence storage (lib/presence/storage.ts) on each engine, below the rules: what the Bus
// cannot arrange on purpose. A sweep races a heartbeat only by chance through the Bus; here the
// judged record is made stale by hand, and the sweep must leave the fresher one. And a
// heartbeat re-creates a record that was swept while its holder was frozen.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { rmSync } from "node:fs";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { openPg } from "../../lib/pg/engine";
import type { Peer } from "../../lib/presence/record";
import { presenceStorage } from "../../lib/presence/storage";
import { freshDatabase, pgServer, pgSkipReason } from "../harness/pg";
import { tempDir } from "../harness/run";

setDefaultTimeout(60_000);

interface Opened {
  store: Store;
  dispose(): Promise<void>;
}

const engines: { name: string; open(): Promise<Opened> }[] = [
  {
    name: "file",
    async open() {
      const dir = tempDir("a2a-presence-").path;
      return { store: openStore({ dir, env: {} }), dispose: async () => rmSync(dir, { recursive: true, force: true }) };
    },
  },
];
if (!pgSkipReason()) {
  engines.push({
    name: "postgres",
    async open() {
      const db = await freshDatabase((await pgServer())!);
      const store = openStore({ dir: db.url, env: {} });
      store.engine = openPg(store);
      return {
        store,
        async dispose() {
          await store.engine.close();
          await db.drop();
        },
      };
    },
  });
}

const peer = (name: string, o: Partial<Peer> = {}): Peer => ({
  a2a: 1, name, host: "elsewhere", pid: 4242, cwd: "/w", git_root: null, tty: null, summary: "", started_at: 1000.5, heartbeat: 1000.5, heartbeat_ms: 10_000, ...o,
});

for (const engine of engines) {
  describe(`${engine.name}: presence storage`, () => {
    let opened: Opened | undefined;
    const open = async () => (opened = await engine.open()).store;
    afterEach(async () => {
      await opened?.dispose();
      opened = undefined;
    });

    test("a sweep leaves a record that beat after it was judged; the one judged now goes, once", async () => {
      const s = presenceStorage(await open());
      const judged = peer("ghost");
      expect(await s.take(judged)).toBe(true);
      const fresher = { ...judged, heartbeat: 1001.25, summary: "still here" };
      await s.beat(fresher);
      expect(await s.sweep(judged)).toBe(false);
      expect(await s.read("ghost")).toEqual(fresher);
      expect(await s.sweep(fresher)).toBe(true);
      expect(await s.sweep(fresher)).toBe(false);
      expect(await s.read("ghost")).toBeUndefined();
      expect(await s.names()).toEqual([]);
    });

    test("a sweep leaves a record another holder took under the name", async () => {
      const s = presenceStorage(await open());
      const judged = peer("ghost");
      await s.put(judged);
      const next = peer("ghost", { pid: 4243 }); // same heartbeat, another process
      await s.put(next);
      expect(await s.sweep(judged)).toBe(false);
      expect(await s.list()).toEqual([next]);
    });

    test("a heartbeat re-creates a record swept while its holder was frozen; remove then takes it away", async () => {
      const s = presenceStorage(await open());
      const mine = peer("frozen");
      expect(await s.take(mine)).toBe(true);
      expect(await s.sweep(mine)).toBe(true);
      const beat = { ...mine, heartbeat: 1002 };
      await s.beat(beat);
      expect(await s.read("frozen")).toEqual(beat);
      expect(await s.take(peer("frozen", { pid: 1 }))).toBe(false);
      expect(await s.remove(peer("frozen", { pid: 1 }))).toBe(false);
      expect(await s.remove(beat)).toBe(true);
      expect(await s.list()).toEqual([]);
    });

    test("the names remembered are per host and directory, in order, replaced whole", async () => {
      const s = presenceStorage(await open());
      expect(await s.remembered("h1", "/w/proj")).toEqual([]);
      await s.remember("h1", "/w/proj", ["proj"]);
      await s.remember("h1", "/w/proj", ["proj", "proj-2"]);
      await s.remember("h2", "/w/proj", ["other"]);
      expect(await s.remembered("h1", "/w/proj")).toEqual(["proj", "proj-2"]);
      expect(await s.remembered("h1", "/w/proj/")).toEqual(["proj", "proj-2"]); // the same directory
      expect(await s.remembered("h2", "/w/proj")).toEqual(["other"]);
      expect(await s.remembered("h1", "/w")).toEqual([]);
    });
  });
}
