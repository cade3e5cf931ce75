// A write never produces a record that readers refuse (docs/PROTOCOL.md §3 step 0). Each field
// is bounded by A2A_MAX_BYTES on its own; a record with two large fields, or with control
// characters (each JSON-escaped as six bytes), can pass those checks and still come out over
// the readers' bound of 6 x A2A_MAX_BYTES + 64 KiB. Such a write is refused (exit 2) with the
// store unchanged, and everything written before it stays readable.
//
// A2A_MAX_BYTES is lowered to 20,000 here so the records are small: the bound is then 185,536
// bytes, and a task plus a result of 20,000 \x01 each (120,000 bytes escaped apiece) is over it.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, tempDir } from "../harness/run";
import { expectCleanError, snapshot } from "./fixtures/core";

setDefaultTimeout(120_000);

const MAX = 20_000;
const env = { A2A_MAX_BYTES: String(MAX) };
const controls = (n: number) => "\x01".repeat(n);

describe.concurrent("records over the readers' bound are never written", () => {
  test("publish: a task and a result that each pass, but together encode past the bound, are refused; the slot stays readable", async () => {
    using d = tempDir();
    const o = { dir: d.path, env };
    expect((await a2a(["start", "brick", controls(MAX)], o)).code).toBe(0);
    const before = snapshot(d.path);
    const r = await a2a(["publish", "brick", "-"], { ...o, stdin: controls(MAX) });
    expectCleanError(r, 2, /slot brick's record would be \d+ bytes once encoded, over the 185536 bytes a reader accepts.*nothing was changed/);
    expect(snapshot(d.path)).toEqual(before);
    // The slot is still there, running, and a result that fits publishes as usual.
    const [st] = JSON.parse((await a2a(["status", "brick", "--json"], o)).stdout);
    expect(st).toMatchObject({ name: "brick", state: "running", version: 1 });
    const ok = await a2a(["publish", "brick", "fits", "--json"], o);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ state: "done", version: 2, result: "fits" });
    expect((await a2a(["wait", "brick", "--timeout", "10s"], o)).stdout).toBe("fits");
  });

  test("the same result under a short task publishes, and every reader reads it", async () => {
    using d = tempDir();
    const o = { dir: d.path, env };
    const r = await a2a(["publish", "brick", "-"], { ...o, stdin: controls(MAX) });
    expect(r.code).toBe(0);
    expect((await a2a(["wait", "brick", "--timeout", "10s"], o)).stdout).toBe(controls(MAX));
  });

  test("task done: a result that with its payload encodes past the bound is refused; the task stays claimed and can still finish", async () => {
    using d = tempDir();
    const o = { dir: d.path, env };
    const id = (await a2a(["task", "add", "q", "-"], { ...o, stdin: controls(MAX) })).stdout.trim();
    const claim = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], o)).stdout);
    expect(claim.id).toBe(id);
    const before = snapshot(d.path);
    const r = await a2a(["task", "done", id, claim.token, "-"], { ...o, stdin: controls(MAX) });
    expectCleanError(r, 2, /the record tasks\/q\/\S+ \(version \d+\) would be \d+ bytes once encoded, over the 185536 bytes a reader accepts/);
    expect(snapshot(d.path)).toEqual(before);
    const shown = JSON.parse((await a2a(["task", "show", id, "--json"], o)).stdout);
    expect(shown).toMatchObject({ id, state: "claimed" });
    const done = await a2a(["task", "done", id, claim.token, "ok"], o);
    expect(done.code).toBe(0);
    expect((await a2a(["task", "wait", id, "--timeout", "10s"], o)).stdout).toBe("ok");
  });
});
