// The contract of slots (docs/PROTOCOL.md sections 4, 6, 7, 8 and 14 "start --exclusive"), on
// every engine, through the Bus only: versions never go back, waits see every publish after
// the version they name, a stream keeps its order, a run is closed by its publish.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { BOUND_MS, codeOf, move, past, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

for (const engine of enginesFor("slots")) {
  describe(`${engine.name}: slots`, () => {
    const t = perTest(engine);

    test("versions grow by one per change and never go back: publish, publish, clear, publish", async () => {
      const bus = t.bus;
      expect((await bus.slots.publish("s", "one")).version).toBe(1);
      expect((await bus.slots.publish("s", "two")).version).toBe(2);
      expect(await bus.slots.clear("s")).toBe(true);
      expect(await bus.slots.get("s")).toBeUndefined(); // a tombstone reads as absent
      expect((await bus.slots.list()).records).toEqual([]);
      expect(await bus.slots.clear("s")).toBe(false); // nothing live to clear: nothing changes
      const again = await t.reopen().slots.publish("s", "three");
      expect({ version: again.version, result: again.result, state: again.state }).toEqual({ version: 4, result: "three", state: "done" });
      expect((await bus.slots.get("s"))?.version).toBe(4);
    });

    test("start, append and publish each take the next version; publish keeps the run's task and start", async () => {
      const bus = t.bus;
      const started = await bus.slots.start("job", "scrape prices");
      expect({ v: started.version, state: started.state, task: started.task, result: started.result, chunks: started.chunks }).toEqual({
        v: 1, state: "running", task: "scrape prices", result: null, chunks: 0,
      });
      expect((await bus.slots.append("job", "a")).version).toBe(2);
      const pub = await bus.slots.publish("job", "42 prices");
      expect({ v: pub.version, state: pub.state, task: pub.task, started_at: pub.started_at, chunks: pub.chunks, size: pub.size }).toEqual({
        v: 3, state: "done", task: "scrape prices", started_at: started.started_at, chunks: 1, size: 9,
      });
      expect((await bus.slots.start("job", "next run")).version).toBe(4);
    });

    test("a result comes back byte for byte, its size its UTF-8 length", async () => {
      const text = "héllo\n\u0000\u0001\t\"quoted\" {\"a2a\":1} ✓ \ud83d\ude00";
      await t.bus.slots.publish("exact", text);
      const got = (await t.reopen().slots.get("exact"))!;
      expect(got.result).toBe(text);
      expect(got.size).toBe(Buffer.byteLength(text, "utf8"));
    });

    test("--if-version is a compare-and-set; an absent slot (even a cleared one) is version 0", async () => {
      const bus = t.bus;
      expect((await bus.slots.publish("cas", "first", { ifVersion: 0 })).version).toBe(1);
      const lost = await refusal(t.reopen().slots.publish("cas", "second", { ifVersion: 0 }));
      expect(codeOf(lost)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect(lost.data).toEqual({ slot: "cas", version: 1, expected: 0 });
      expect((await bus.slots.get("cas"))?.result).toBe("first"); // the loser wrote nothing
      expect((await bus.slots.publish("cas", "second", { ifVersion: 1 })).version).toBe(2);
      await bus.slots.clear("cas"); // version 3, a tombstone
      expect(codeOf(await refusal(bus.slots.publish("cas", "x", { ifVersion: 3 })))).toEqual({ code: "ECONFLICT", exit: 4 });
      const after = await bus.slots.publish("cas", "after clear", { ifVersion: 0 });
      expect(after.version).toBe(4);
    });

    test("wait returns a slot already published, at once", async () => {
      await t.bus.slots.publish("ready", "here");
      const o = await t.reopen().slots.wait(["ready"], { timeoutMs: 0 });
      expect(o.kind).toBe("done");
      expect(o.value.get("ready")?.result).toBe("here");
      expect(o.pending).toEqual([]);
    });

    test("wait wakes on a publish made through another handle", async () => {
      const waiting = t.bus.slots.wait(["later"], { timeoutMs: BOUND_MS });
      await t.reopen().slots.start("later", "working"); // running is not published: the wait goes on
      await t.reopen().slots.publish("later", "now");
      const o = await waiting;
      expect(o.kind).toBe("done");
      expect({ result: o.value.get("later")?.result, version: o.value.get("later")?.version }).toEqual({ result: "now", version: 2 });
    });

    test("wait for several: all of them, or with any the first; a timeout names what is pending", async () => {
      const other = t.reopen();
      await other.slots.publish("a", "A");
      const short = await t.bus.slots.wait(["a", "b", "c"], { timeoutMs: 0 });
      expect({ kind: short.kind, got: [...short.value.keys()], pending: short.pending }).toEqual({ kind: "timeout", got: ["a"], pending: ["b", "c"] });
      const any = await t.bus.slots.wait(["b", "a"], { any: true, timeoutMs: 0 });
      expect({ kind: any.kind, got: [...any.value.keys()] }).toEqual({ kind: "done", got: ["a"] });
      const all = t.bus.slots.wait(["a", "b", "c"], { timeoutMs: BOUND_MS });
      await other.slots.publish("b", "B");
      await other.slots.publish("c", "C");
      const o = await all;
      expect({ kind: o.kind, got: [...o.value.entries()].map(([k, r]) => [k, r.result]).sort() }).toEqual({
        kind: "done", got: [["a", "A"], ["b", "B"], ["c", "C"]],
      });
    });

    test("--after-version: only a publish above the version counts, and a publish after a clear is seen", async () => {
      const other = t.reopen();
      await other.slots.publish("v", "old"); // 1
      const none = await t.bus.slots.wait(["v"], { afterVersion: 1, timeoutMs: 0 });
      expect({ kind: none.kind, pending: none.pending }).toEqual({ kind: "timeout", pending: ["v"] });
      const next = t.bus.slots.wait(["v"], { afterVersion: 1, timeoutMs: BOUND_MS });
      await other.slots.publish("v", "new"); // 2
      const o = await next;
      expect({ kind: o.kind, result: o.value.get("v")?.result, version: o.value.get("v")?.version }).toEqual({ kind: "done", result: "new", version: 2 });
      await other.slots.clear("v"); // 3
      const afterClear = t.bus.slots.wait(["v"], { afterVersion: 2, timeoutMs: BOUND_MS });
      await other.slots.publish("v", "newest"); // 4: above the tombstone
      const o2 = await afterClear;
      expect({ kind: o2.kind, result: o2.value.get("v")?.result, version: o2.value.get("v")?.version }).toEqual({ kind: "done", result: "newest", version: 4 });
    });

    test("an aborted wait ends aborted, with what is pending", async () => {
      const stop = new AbortController();
      const waiting = t.bus.slots.wait(["never"], { signal: stop.signal });
      stop.abort();
      const o = await waiting;
      expect({ kind: o.kind, pending: o.pending, got: o.value.size }).toEqual({ kind: "aborted", pending: ["never"], got: 0 });
    });

    test("a stream keeps its append order; a published run is closed; a new run starts empty", async () => {
      const bus = t.bus;
      const first = await bus.slots.append("log", "a"); // absent: the append starts a run
      expect({ state: first.state, chunks: first.chunks, version: first.version, task: first.task }).toEqual({ state: "running", chunks: 1, version: 1, task: "" });
      const other = t.reopen();
      await other.slots.append("log", "b");
      await bus.slots.append("log", "c\nwith a newline, a NUL \u0000 and ✓");
      const third = "c\nwith a newline, a NUL \u0000 and ✓";
      expect(await other.slots.chunks("log", 0, 3)).toEqual(["a", "b", third]);
      const all = await other.slots.tail("log");
      expect({ kind: all.kind, chunks: all.value.chunks, next: all.value.next, state: all.value.state, version: all.value.version }).toEqual({
        kind: "done", chunks: ["a", "b", third], next: 3, state: "running", version: 3,
      });
      expect((await other.slots.tail("log", { after: 1 })).value.chunks).toEqual(["b", third]);
      await bus.slots.publish("log", "finished");
      const closed = await refusal(other.slots.append("log", "late"));
      expect(codeOf(closed)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect((await bus.slots.get("log"))?.chunks).toBe(3);
      await bus.slots.start("log", "run 2");
      const fresh = await other.slots.tail("log");
      expect({ chunks: fresh.value.chunks, next: fresh.value.next, state: fresh.value.state }).toEqual({ chunks: [], next: 0, state: "running" });
      expect(await other.slots.chunks("log", 0, 3)).toEqual([]); // the previous run's chunks are gone
    });

    test("tail --follow gets each chunk in order, as it lands, until the publish", async () => {
      const seen: [string, number][] = [];
      const following = t.bus.slots.tail("live", { follow: true, timeoutMs: BOUND_MS }, (text, n) => void seen.push([text, n]));
      const writer = t.reopen();
      for (const c of ["one", "two", "three"]) await writer.slots.append("live", c);
      await writer.slots.publish("live", "done");
      const o = await following;
      expect({ kind: o.kind, chunks: o.value.chunks, state: o.value.state }).toEqual({ kind: "done", chunks: ["one", "two", "three"], state: "done" });
      expect(seen).toEqual([["one", 1], ["two", 2], ["three", 3]]);
    });

    test("start --exclusive: the second is refused while the first runs; after its publish one may start again", async () => {
      const mine = await t.bus.slots.start("lock", "mine", { exclusive: true });
      const theirs = await refusal(t.reopen().slots.start("lock", "theirs", { exclusive: true }));
      expect(codeOf(theirs)).toEqual({ code: "ECONFLICT", exit: 4 });
      expect({ slot: theirs.data.slot, task: theirs.data.task, pid: theirs.data.pid }).toEqual({ slot: "lock", task: "mine", pid: mine.pid });
      expect((await t.bus.slots.get("lock"))?.task).toBe("mine");
      await t.bus.slots.publish("lock", "released");
      expect((await t.reopen().slots.start("lock", "theirs", { exclusive: true })).version).toBe(3);
    });

    test("an expired record reads as absent, is no publish to a waiter, and the next write continues its version", async () => {
      const rec = await t.bus.slots.publish("brief", "short-lived", { ttlSec: 0.001 });
      expect(rec.expires_at).toBe(rec.published_at! + 0.001);
      await past(rec.expires_at!);
      const other = t.reopen();
      expect(await other.slots.get("brief")).toBeUndefined();
      expect((await other.slots.wait(["brief"], { timeoutMs: 0 })).kind).toBe("timeout");
      const next = await other.slots.publish("brief", "again");
      expect({ version: next.version, expires_at: next.expires_at }).toEqual({ version: 2, expires_at: null });
    });

    test("the watch feed reports started, appended, published and cleared, each with its version", async () => {
      const events: { event: string; name: string; version: number }[] = [];
      let wake = () => {};
      const stop = new AbortController();
      let ready = () => {};
      const started = new Promise<void>((resolve) => (ready = resolve));
      const watching = t.bus.slots.watch([], (e) => {
        events.push({ event: e.event, name: e.name, version: e.version });
        wake();
      }, { signal: stop.signal, timeoutMs: BOUND_MS, onReady: ready });
      await started; // what the watch finds at its start is not reported: start it first
      const writer = t.reopen();
      const next = (n: number) => new Promise<void>((resolve) => (wake = () => events.length >= n && resolve()));
      let arrived = next(1);
      await writer.slots.start("w", "task");
      await arrived;
      arrived = next(2);
      await writer.slots.append("w", "chunk");
      await arrived;
      arrived = next(3);
      await writer.slots.publish("w", "result");
      await arrived;
      arrived = next(4);
      await writer.slots.clear("w");
      await arrived;
      stop.abort();
      const o = await watching;
      expect(events).toEqual([
        { event: "started", name: "w", version: 1 },
        { event: "appended", name: "w", version: 2 },
        { event: "published", name: "w", version: 3 },
        { event: "cleared", name: "w", version: 3 },
      ]);
      expect({ kind: o.kind, value: o.value }).toEqual({ kind: "aborted", value: 4 });
    });

    test("bad input changes nothing: a bad name, a result over the size limit", async () => {
      const bad = await refusal(t.bus.slots.publish("../x", "r"));
      expect(codeOf(bad)).toEqual({ code: "EUSAGE", exit: 2 });
      const small = (await t.open({ A2A_MAX_BYTES: "8" })).bus;
      await small.slots.publish("s", "12345678");
      const big = await refusal(small.slots.publish("s", "123456789"));
      expect(codeOf(big)).toEqual({ code: "ETOOBIG", exit: 2 });
      expect((await small.slots.get("s"))?.result).toBe("12345678");
      expect((await t.bus.slots.list()).records).toEqual([]);
    });
  });
}

// Moved to another store of the engine (a2a export and import, lib/move/): a record written as
// it is, at its version, through SlotStorage.change.
for (const engine of enginesFor("slots")) {
  describe(`${engine.name}: slots, moved`, () => {
    const t = perTest(engine);

    test("a slot keeps its version and its run's chunks, a tombstone its version; an older one never replaces a newer", async () => {
      await t.bus.slots.start("job", "scrape");
      await t.bus.slots.append("job", "a, ");
      await t.bus.slots.append("job", "b");
      await t.bus.slots.publish("gone", "x");
      await t.bus.slots.clear("gone");
      const target = (await t.open({})).bus;
      expect((await move(t.bus, target)).report.counts.slot).toEqual({ imported: 2, already: 0, kept: 0 });
      expect(await target.slots.get("job")).toEqual(await t.bus.slots.get("job"));
      expect(await target.slots.chunks("job", 0, 2)).toEqual(["a, ", "b"]);
      expect((await target.slots.append("job", "c")).version).toBe(4);
      expect((await target.slots.publish("gone", "y")).version).toBe(3);
      expect((await move(t.bus, target)).report.counts.slot).toEqual({ imported: 0, already: 0, kept: 2 });
      expect(await target.slots.chunks("job", 0, 3)).toEqual(["a, ", "b", "c"]);
      // Over an older record with a run of its own: kept (it is the store's own), unless the
      // import is told to replace older ones; then the older run's chunks go, the imported run's come.
      const third = (await t.open({})).bus;
      await third.slots.start("job", "old");
      await third.slots.append("job", "old chunk"); // version 2
      const { report, text } = await move(t.bus, third);
      expect(report.counts.slot).toEqual({ imported: 1, already: 0, kept: 1 });
      expect(await third.slots.chunks("job", 0, 2)).toEqual(["old chunk"]);
      const replaced = await third.move.importStore({ open: async function* () { yield Buffer.from(text, "utf8"); }, again: true }, { replaceOlder: true });
      expect(replaced.counts.slot).toEqual({ imported: 1, already: 1, kept: 0 });
      expect(await third.slots.get("job")).toEqual(await t.bus.slots.get("job"));
      expect(await third.slots.chunks("job", 0, 2)).toEqual(["a, ", "b"]);
    });
  });
}
