// The contract of leases on names (docs/PROTOCOL.md section 14, "Leases on names"), on every
// engine, through the Bus only: a name has one holder at a time, taken all or nothing, renewed
// and released by its holder only, free again when its TTL runs out; every change to a name
// takes a higher version, the fencing token a holder can present.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Bus } from "../../lib/bus";
import { BOUND_MS, codeOf, move, past, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

const holders = async (bus: Bus, names?: string[]) => (await bus.leases.list(names)).map((l) => [l.name, l.holder]);

// A take without waiting: the version written per name (the fencing token of that take).
async function take(bus: Bus, names: string[], as: string, ttlSec?: number) {
  const o = await bus.leases.takeUndoably(names, { as, ttlSec });
  expect(o.kind).toBe("done");
  return o.value!;
}

for (const engine of enginesFor("leases")) {
  describe(`${engine.name}: leases`, () => {
    const t = perTest(engine);

    test("a held name is refused to anyone else (exit 4), naming its holder; the holder itself may take it again", async () => {
      const o = await t.bus.leases.take(["db"], { as: "alice", ttlSec: 60 });
      const [mine] = o.value!;
      expect({ kind: o.kind, name: mine.name, holder: mine.holder, ttl: mine.expires_at - mine.taken_at }).toEqual({ kind: "done", name: "db", holder: "alice", ttl: 60 });
      const e = await refusal(t.reopen().leases.take(["db"], { as: "bob" }));
      expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(e.data).toEqual({ held: [{ name: "db", holder: "alice", taken_at: mine.taken_at, expires_at: mine.expires_at }] });
      const again = await take(t.reopen(), ["db"], "alice", 120);
      expect(again.leases[0].taken_at).toBe(mine.taken_at); // extended, not taken anew
      expect(again.writes[0].extended).toEqual({ taken_at: mine.taken_at, expires_at: mine.expires_at });
      expect(await holders(t.bus)).toEqual([["db", "alice"]]);
    });

    test("all or nothing: a take of several names where one is held takes none of them", async () => {
      await t.bus.leases.take(["b"], { as: "alice" });
      const e = await refusal(t.reopen().leases.take(["a", "b", "c"], { as: "bob" }));
      expect(codeOf(e)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await holders(t.bus)).toEqual([["b", "alice"]]);
      expect((await t.bus.leases.take(["a", "c"], { as: "carol" })).value!.map((l) => [l.name, l.holder])).toEqual([["a", "carol"], ["c", "carol"]]);
    });

    test("renew and release belong to the holder; another's live lease is refused before anything changes", async () => {
      const [first] = (await t.bus.leases.take(["x"], { as: "alice", ttlSec: 10 })).value!;
      await t.bus.leases.take(["w"], { as: "bob" }); // sorts before x: a release of both must not free it first
      const other = t.reopen();
      expect(codeOf(await refusal(other.leases.renew(["x"], { as: "bob" })))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(codeOf(await refusal(other.leases.release(["x", "w"], { as: "bob" })))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await holders(t.bus)).toEqual([["w", "bob"], ["x", "alice"]]); // w was not released either
      const [renewed] = await t.bus.leases.renew(["x"], { as: "alice", ttlSec: 600 });
      expect({ holder: renewed.holder, taken_at: renewed.taken_at }).toEqual({ holder: "alice", taken_at: first.taken_at });
      expect(renewed.expires_at).toBeGreaterThanOrEqual(first.taken_at + 600);
      expect(await t.bus.leases.release(["x"], { as: "alice" })).toEqual(["x"]);
      expect(await t.bus.leases.release(["x"], { as: "alice" })).toEqual([]); // free already: left alone
      expect(await holders(t.bus)).toEqual([["w", "bob"]]);
      expect((await other.leases.take(["x"], { as: "bob" })).value!.map((l) => l.holder)).toEqual(["bob"]);
    });

    test("a lease that ran out is free: a waiting taker gets it; its old holder can no longer renew it", async () => {
      const [held] = (await t.bus.leases.take(["port"], { as: "alice", ttlSec: 0.05 })).value!;
      const o = await t.reopen().leases.take(["port"], { as: "bob", wait: true, timeoutMs: BOUND_MS, ttlSec: 60 });
      expect({ kind: o.kind, holders: o.value!.map((l) => [l.name, l.holder]) }).toEqual({ kind: "done", holders: [["port", "bob"]] });
      expect(o.value![0].taken_at).toBeGreaterThanOrEqual(held.expires_at);
      expect(codeOf(await refusal(t.bus.leases.renew(["port"], { as: "alice" })))).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(await holders(t.bus)).toEqual([["port", "bob"]]);
    });

    test("a lease that ran out but that nobody took is listed as free, and its holder may still renew it", async () => {
      const [held] = (await t.bus.leases.take(["n"], { as: "alice", ttlSec: 0.001 })).value!;
      await past(held.expires_at);
      expect(await holders(t.reopen())).toEqual([]);
      const [back] = await t.bus.leases.renew(["n"], { as: "alice", ttlSec: 60 });
      expect({ name: back.name, holder: back.holder }).toEqual({ name: "n", holder: "alice" });
      expect(await holders(t.bus)).toEqual([["n", "alice"]]);
    });

    test("fencing tokens: every take of a name writes a higher version, whoever takes it", async () => {
      const v1 = (await take(t.bus, ["f"], "alice")).writes[0].version;
      await t.bus.leases.release(["f"], { as: "alice" });
      const v2 = (await take(t.reopen(), ["f"], "bob", 0.05)).writes[0].version;
      const o = await t.reopen().leases.takeUndoably(["f"], { as: "carol", wait: true, timeoutMs: BOUND_MS });
      const v3 = o.value!.writes[0].version;
      const v4 = (await take(t.bus, ["f"], "carol")).writes[0].version; // extended by its holder
      expect([v1, v2, v3, v4]).toEqual([1, 3, 4, 5]); // 2 was the release: every change is a version
    });

    test("takers racing for a new name through separate handles: exactly one gets it, the others are refused naming it", async () => {
      const name = `race.${"n".repeat(123)}`; // as long as a name goes
      const tries = await Promise.allSettled(["a", "b", "c", "d", "e", "f"].map((as) => t.reopen().leases.takeUndoably([name], { as })));
      const won = tries.flatMap((r) => (r.status === "fulfilled" ? [r.value.value!] : []));
      expect(won.map((w) => w.writes[0].version)).toEqual([1]); // no loser wrote a version
      const holder = won[0].leases[0].holder;
      for (const r of tries.filter((r): r is PromiseRejectedResult => r.status === "rejected")) {
        expect({ ...codeOf(r.reason), holders: r.reason.data.held.map((h: { holder: string }) => h.holder) }).toEqual({ code: "ECONFLICT", exit: 4, holders: [holder] });
      }
      expect(await holders(t.bus)).toEqual([[name, holder]]);
    });

    test("changes racing from one version are each written once, as consecutive versions", async () => {
      await take(t.bus, ["x"], "alice");
      const handles = [0, 1, 2, 3, 4].map(() => t.reopen());
      const writes = await Promise.all(handles.map((h) => take(h, ["x"], "alice", 600))); // each extends alice's lease
      expect(writes.map((w) => w.writes[0].version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6]);
      expect((await take(t.bus, ["x"], "alice")).writes[0].version).toBe(7);
    });

    test("untake puts back exactly what one take wrote, and never a later change", async () => {
      await t.bus.leases.take(["kept"], { as: "alice", ttlSec: 60 });
      const [before] = await t.bus.leases.list(["kept"]);
      const tk = await take(t.bus, ["kept", "new"], "alice", 600);
      expect(await t.reopen().leases.untake(tk)).toEqual(["kept", "new"]);
      const [after] = await t.bus.leases.list(["kept"]);
      expect(after).toEqual(before); // alice's lease as it was before that take
      expect(await holders(t.bus)).toEqual([["kept", "alice"]]);
      const tk2 = await take(t.bus, ["z"], "alice");
      await t.bus.leases.renew(["z"], { as: "alice", ttlSec: 900 });
      expect(await t.bus.leases.untake(tk2)).toEqual([]); // the renew came after: nothing is undone
      expect(await holders(t.bus, ["z"])).toEqual([["z", "alice"]]);
    });

    test("a take that waits takes nothing when cancelled", async () => {
      await t.bus.leases.take(["busy"], { as: "alice" });
      const stop = new AbortController();
      const waiting = t.reopen().leases.take(["free", "busy"], { as: "bob", wait: true, signal: stop.signal });
      stop.abort();
      const o = await waiting;
      expect({ kind: o.kind, value: o.value, pending: o.pending }).toEqual({ kind: "aborted", value: undefined, pending: ["busy"] });
      expect(await holders(t.bus)).toEqual([["busy", "alice"]]);
    });

    test("the holder is the name given, else A2A_AGENT; with neither the take is refused", async () => {
      expect(codeOf(await refusal(t.bus.leases.take(["h"])))).toEqual({ code: "EUSAGE", exit: 2 });
      const agent = t.reopen({ A2A_AGENT: "agent7" });
      expect((await agent.leases.take(["h"])).value!.map((l) => l.holder)).toEqual(["agent7"]);
      expect(await agent.leases.release(["h"])).toEqual(["h"]);
    });
  });
}

// Moved to another store of the engine (a2a export and import, lib/move/): LeaseStorage.restore.
for (const engine of enginesFor("leases")) {
  describe(`${engine.name}: leases, moved`, () => {
    const t = perTest(engine);

    test("a lease keeps its holder, expiry and version (its fencing token); the next change takes the version after it", async () => {
      await take(t.bus, ["db"], "alice", 60);
      await t.bus.leases.release(["db"], { as: "alice" });
      const held = await take(t.bus, ["db"], "bob", 60); // version 3
      const target = (await t.open({})).bus;
      expect((await move(t.bus, target)).report.counts.lease).toEqual({ imported: 1, already: 0, kept: 0 });
      expect(await target.leases.list()).toEqual(await t.bus.leases.list());
      expect(codeOf(await refusal(target.leases.take(["db"], { as: "carol" })))).toEqual({ code: "ECONFLICT", exit: 4 });
      const again = await take(target, ["db"], "bob", 120);
      expect(again.writes[0].version).toBe(held.writes[0].version + 1);
      expect((await move(t.bus, target)).report.counts.lease).toEqual({ imported: 0, already: 0, kept: 1 }); // newer there
    });
  });
}
