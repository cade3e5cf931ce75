// A write never produces a record that readers refuse (docs/PROTOCOL.md §3; docs/FILE-ENGINE.md §3
// step 0). Every reader accepts a record of the largest payload any writer may have (A2A_MAX_BYTES
// at most 16 MiB, escaped at worst six bytes a byte, plus 1 MiB), whatever its own A2A_MAX_BYTES,
// since each process reads that setting from its own environment; a record with two large fields or
// many control characters can still pass each field's check and come out over that bound, and is
// then refused (exit 2) with the store unchanged.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, ON_FILES, testStore } from "../harness/run";
import { expectCleanError, snapshot } from "./fixtures/core";

setDefaultTimeout(180_000);

const controls = (n: number) => "\x01".repeat(n);
const MIB = 1024 * 1024;

describe.concurrent("records over the readers' bound are never written", () => {
  test("the review's record: a task of 120,000 control characters and a 1 MiB result of \\x01 is published, and every reader reads it", async () => {
    using d = testStore();
    const o = { dir: d.path };
    expect((await a2a(["start", "brick", controls(120_000)], o)).code).toBe(0);
    const p = await a2a(["publish", "brick", "-"], { ...o, stdin: controls(MIB) });
    expect(p).toMatchObject({ code: 0, stdout: "published brick (version 2, 1.0M)\n" });
    const [st] = JSON.parse((await a2a(["status", "brick", "--json"], o)).stdout);
    expect(st).toMatchObject({ name: "brick", state: "done", version: 2, size: MIB });
    expect((await a2a(["wait", "brick", "--timeout", "10s"], o)).stdout).toBe(controls(MIB));
    expect((await a2a(["publish", "brick", "again"], o)).code).toBe(0);
  });

  test("a writer whose A2A_MAX_BYTES is higher than its readers': they read what it wrote", async () => {
    using d = testStore();
    const big = "a".repeat(7 * MIB);
    expect((await a2a(["publish", "big", "-"], { dir: d.path, env: { A2A_MAX_BYTES: String(8 * MIB) }, stdin: big })).code).toBe(0);
    const w = await a2a(["wait", "big", "--timeout", "10s"], { dir: d.path }); // the default 1 MiB reader
    expect({ code: w.code, stderr: w.stderr, length: w.stdout.length }).toEqual({ code: 0, stderr: "", length: big.length });
    expect((await a2a(["publish", "big", "small"], { dir: d.path })).code).toBe(0);
    expect((await a2a(["send", "bob", "-", "--as", "al"], { dir: d.path, env: { A2A_MAX_BYTES: String(8 * MIB) }, stdin: big })).code).toBe(0);
    const m = await a2a(["recv", "--as", "bob", "--json"], { dir: d.path });
    expect({ code: m.code, stderr: m.stderr, length: JSON.parse(m.stdout).body.length }).toEqual({ code: 0, stderr: "", length: big.length });
  });

  test("task done: a payload and a result of 16 MiB of control characters each encode past every reader's bound: refused, exit 2, store unchanged, the task still claimed", async () => {
    using d = testStore();
    const o = { dir: d.path, env: { A2A_MAX_BYTES: String(16 * MIB) } };
    const id = (await a2a(["task", "add", "q", "-"], { ...o, stdin: controls(16 * MIB) })).stdout.trim();
    const claim = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], o)).stdout);
    expect(claim.id).toBe(id);
    const before = snapshot(d.path);
    const r = await a2a(["task", "done", id, claim.token, "-"], { ...o, stdin: controls(16 * MIB) });
    // The record named as each engine keeps it: its chain's directory, or its task and queue.
    const record = ON_FILES ? String.raw`the record tasks/q/\S+ \(version \d+\)` : String.raw`the record of task ${id} of queue q \(version \d+\)`;
    expectCleanError(r, 2, new RegExp(`${record} would be \\d+ bytes once encoded, over the 101711872 bytes every reader accepts`));
    expect(snapshot(d.path)).toEqual(before);
    expect(JSON.parse((await a2a(["task", "show", id, "--json"], o)).stdout)).toMatchObject({ id, state: "claimed" });
    expect((await a2a(["task", "done", id, claim.token, "ok"], o)).code).toBe(0);
    expect((await a2a(["task", "wait", id, "--timeout", "10s"], o)).stdout).toBe("ok");
  });

  test("A2A_MAX_BYTES over 16 MiB is refused, naming the maximum", async () => {
    using d = testStore();
    const r = await a2a(["publish", "x", "y"], { dir: d.path, env: { A2A_MAX_BYTES: String(16 * MIB + 1) } });
    expectCleanError(r, 2, /A2A_MAX_BYTES=16777217 is over the 16777216-byte maximum every a2a reader accepts: set it to at most 16777216/);
  });
});

describe.concurrent("a task's record stays within the bound whatever it goes through", () => {
  test("25 failed attempts with the longest reasons: the record keeps the last 20, counts all 25, and the next claim works", async () => {
    using d = testStore();
    const o = { dir: d.path };
    const id = (await a2a(["task", "add", "q", "payload", "--max-attempts", "30"], o)).stdout.trim();
    for (let i = 1; i <= 25; i++) {
      const c = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], o)).stdout);
      expect(c.attempt).toBe(i);
      expect((await a2a(["task", "fail", id, c.token, "--reason", `${i} ${controls(4000)}`], o)).code).toBe(0);
    }
    const shown = JSON.parse((await a2a(["task", "show", id, "--json"], o)).stdout);
    expect(shown.attempt).toBe(25);
    expect(shown.attempts.map((a: { attempt: number }) => a.attempt)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    const next = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], o)).stdout);
    expect(next).toMatchObject({ id, attempt: 26 });
  });
});
