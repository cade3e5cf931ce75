// lib/core/watch.ts waitUntil with asynchronous checks, as an engine whose reads are
// asynchronous uses it (docs/ENGINE.md): an event that arrives while a check runs is checked
// after it, never lost; a stop (abort, timeout) during a check waits for it, and a check that
// found something ends the wait with it, so a claim it made is never dropped. Each wait is
// bounded; nothing sleeps: the tests hold a check open with a promise they resolve themselves.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { waitUntil } from "../../lib/core/watch";
import { closeWatches, subscribe } from "../../lib/fs/watch";
import { openStore } from "../../lib/engine/open";
import { A2AError } from "../../lib/core/errors";
import { ensureDir } from "../../lib/fs/guard";
import { tempDir } from "../harness/run";

// A check whose calls the test sees and answers one at a time.
function heldCheck<T>() {
  const calls: { file: string | undefined; answer: (v: T | undefined) => void; fail: (e: unknown) => void }[] = [];
  let notify: (() => void) | undefined;
  const check = (file: string | undefined) =>
    new Promise<T | undefined>((answer, fail) => {
      calls.push({ file, answer, fail });
      notify?.();
    });
  // Resolves once the check has been called `n` times in all.
  const called = (n: number) =>
    new Promise<void>((resolve) => {
      const look = () => (calls.length >= n ? resolve() : void (notify = look));
      look();
    });
  return { calls, check, called };
}

function setUp() {
  const d = tempDir();
  const store = openStore({ dir: d.path, env: {} });
  const dir = join(d.path, "slots"); // the slots channel's directory (keys: slot names)
  ensureDir(store, dir);
  // Resolves when a listener subscribed after the wait's own sees `file`: by then the wait's
  // listener has been called with it (listeners run in the order they subscribed).
  const seen = (file: string) =>
    new Promise<void>((resolve) => {
      const stop = subscribe(store, dir, (f) => f === file && (stop(), resolve()));
    });
  const slots = { on: "slots" } as const;
  return { store, dir, slots, seen, [Symbol.dispose]: () => (closeWatches(store), d[Symbol.dispose]()) };
}

describe("waitUntil with an asynchronous check", () => {
  test("an event that arrives while a check runs is checked after it", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 20_000 });
    await h.called(1);
    h.calls[0].answer(undefined); // the first check: nothing yet; the wait subscribes
    await h.called(2); // the check after subscribing, held open
    const arrived = s.seen("x.json");
    writeFileSync(join(s.dir, "x.json"), "1");
    await arrived; // the wait's listener has had the event while its check was running
    expect(h.calls.length).toBe(2); // and did not start a second check beside it
    h.calls[1].answer(undefined);
    await h.called(3);
    expect(h.calls[2].file).toBe("x");
    h.calls[2].answer("found x");
    expect(await waiting).toEqual({ kind: "done", value: "found x", pending: [] });
  });

  test("events for several files during one check are each checked once, in turn", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 20_000 });
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2);
    const both = Promise.all([s.seen("a.json"), s.seen("b.json")]);
    writeFileSync(join(s.dir, "a.json"), "1");
    writeFileSync(join(s.dir, "b.json"), "1");
    await both;
    h.calls[1].answer(undefined);
    await h.called(3);
    h.calls[2].answer(undefined);
    await h.called(4);
    expect([h.calls[2].file, h.calls[3].file].sort()).toEqual(["a", "b"]);
    h.calls[3].answer("second");
    expect((await waiting).value).toBe("second");
  });

  test("an abort during a check that found something ends the wait done with it: the claim is not lost", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const ac = new AbortController();
    const waiting = waitUntil(s.store, s.slots, h.check, { signal: ac.signal });
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2);
    ac.abort();
    h.calls[1].answer("claimed m1");
    expect(await waiting).toEqual({ kind: "done", value: "claimed m1", pending: [] });
  });

  test("an abort during a check that found nothing ends the wait aborted, after the check", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const ac = new AbortController();
    let ended = false;
    const waiting = waitUntil(s.store, s.slots, h.check, { signal: ac.signal }).finally(() => (ended = true));
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2);
    ac.abort();
    await Promise.resolve();
    expect(ended).toBe(false); // the check is still running: the wait is not over yet
    h.calls[1].answer(undefined);
    expect(await waiting).toEqual({ kind: "aborted", value: undefined, pending: [] });
    expect(h.calls.length).toBe(2);
  });

  test("a timeout during a check waits for it likewise", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 0 });
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2);
    // The zero timeout fires while the second check is held; it must not end the wait early.
    await new Promise<void>((r) => setTimeout(r, 0));
    h.calls[1].answer("just in time");
    expect((await waiting).kind).toBe("done");
  });

  test("a timeout during the first check ends the wait after it, with no second check", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 0 });
    await h.called(1);
    await new Promise<void>((r) => setTimeout(r, 0)); // the zero timeout has fired by now
    h.calls[0].answer(undefined);
    expect(await waiting).toEqual({ kind: "timeout", value: undefined, pending: [] });
    expect(h.calls.length).toBe(1);
    expect(s.store.watches.size).toBe(0); // nor did it subscribe
  });

  test("an abort during the first check that found something ends the wait done with it", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const ac = new AbortController();
    const waiting = waitUntil(s.store, s.slots, h.check, { signal: ac.signal });
    await h.called(1);
    ac.abort();
    h.calls[0].answer("claimed at once");
    expect(await waiting).toEqual({ kind: "done", value: "claimed at once", pending: [] });
  });

  test("a check that fails fails the wait, and a first check that finds something makes no watch", async () => {
    using s = setUp();
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 20_000 });
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2);
    h.calls[1].fail(new Error("the store went away"));
    await expect(waiting).rejects.toThrow("the store went away");

    const watchesBefore = s.store.watches.size;
    ensureDir(s.store, join(s.dir, "..", "topics"));
    const quick = await waitUntil(s.store, { on: "topics" }, async () => "there already", { timeoutMs: 20_000 });
    expect(quick.kind).toBe("done");
    expect(s.store.watches.size).toBe(watchesBefore);
  });

  test("a channel that cannot be watched after an asynchronous first check fails the wait at once, not at its timeout", async () => {
    // "/" as the store: the slots channel's directory cannot be made there (not an a2a store).
    const store = openStore({ dir: "/", env: {} });
    try {
      const waiting = waitUntil(store, { on: "slots" }, async () => undefined, { timeoutMs: 600_000 });
      await expect(waiting).rejects.toThrow("is not an a2a store");
    } finally {
      closeWatches(store);
    }
  });

  test("a check that fails for a reason that passes (data.transient) counts as not yet once the wait is under way; the first check's failure ends it", async () => {
    using s = setUp();
    const lost = () => new A2AError("EIO", "the connection was lost", { data: { transient: true } });
    const h = heldCheck<string>();
    const waiting = waitUntil(s.store, s.slots, h.check, { timeoutMs: 20_000 });
    await h.called(1);
    h.calls[0].answer(undefined);
    await h.called(2); // the check after subscribing
    h.calls[1].fail(lost());
    writeFileSync(join(s.dir, "x.json"), "1"); // the next event looks again
    await h.called(3);
    h.calls[2].answer("found");
    expect(await waiting).toMatchObject({ kind: "done", value: "found" });

    const first = heldCheck<string>();
    const failing = waitUntil(s.store, s.slots, first.check, { timeoutMs: 20_000 });
    await first.called(1);
    first.calls[0].fail(lost());
    await expect(failing).rejects.toThrow("the connection was lost");
  });
});

