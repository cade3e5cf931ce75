// Streaming partial output: `append` adds numbered chunks to a running slot, `tail` reads them
// in order, `tail --follow` prints them as they land and exits when the slot is published.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { a2a, listens, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { MODES, Output, arm, blocked, expectCleanError, recordOf, sh, slotPath, storedChunks } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

const chunk = (i: number) => `chunk ${String(i).padStart(2, "0")} ✓\n`;
const chunks = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => chunk(from + i)).join("");
// Appends chunks from..to in one shell loop (fast, so a follower sees bursts).
const appendRange = (dir: string, from: number, to: number, env: Record<string, string> = {}) =>
  sh(`for i in $(seq ${from} ${to}); do printf 'chunk %02d ✓\\n' $i | "$A2A" append s - >/dev/null || exit 1; done`, dir, env);

describe.concurrent("append and tail", () => {
  test("tail prints every chunk once, in append order; --json numbers them", async () => {
    using d = testStore();
    await a2a(["start", "s", "streaming job"], { dir: d.path });
    expect((await appendRange(d.path, 1, 25)).code).toBe(0);
    expect(await a2a(["tail", "s"], { dir: d.path })).toEqual({ stdout: chunks(1, 25), stderr: "", code: 0 });
    const lines = (await a2a(["tail", "s", "--json"], { dir: d.path })).stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(lines[24]).toEqual({ name: "s", n: 25, text: chunk(25) });
    expect((await a2a(["tail", "s", "--after", "22"], { dir: d.path })).stdout).toBe(chunks(23, 25));
    const st = (await a2a(["status"], { dir: d.path })).stdout;
    expect(st).toMatch(/^s\s+running\(25\)\s+streaming job/m);
  });

  test("appended chunks pass through byte for byte (argument, stdin, --file)", async () => {
    using d = testStore();
    using input = tempDir(); // outside the store: a foreign file inside it would make it no store
    const { writeFileSync } = await import("node:fs");
    const parts = ["no newline", "two\nlines\n", "ünïcødé 🚀", "  spaces\t\r\n"];
    writeFileSync(join(input.path, "f"), parts[3]);
    await a2a(["append", "s", parts[0]], { dir: d.path });
    await a2a(["append", "s", "-"], { dir: d.path, stdin: parts[1] });
    await a2a(["append", "s"], { dir: d.path, stdin: parts[2] });
    await a2a(["append", "s", "--file", join(input.path, "f")], { dir: d.path });
    expect((await a2a(["tail", "s"], { dir: d.path })).stdout).toBe(parts.join(""));
  });

  test("append to an absent slot starts it; append to a published slot exits 4", async () => {
    using d = testStore();
    const r = JSON.parse((await a2a(["append", "s", "first", "--json"], { dir: d.path })).stdout);
    expect(r).toMatchObject({ name: "s", state: "running", chunks: 1, version: 1 });
    await a2a(["publish", "s", "final"], { dir: d.path });
    const before = recordOf(d.path, "s");
    expectCleanError(await a2a(["append", "s", "late"], { dir: d.path }), 4, /already published: start a new run first/);
    expect(recordOf(d.path, "s")).toEqual(before);
    // The chunks of a published slot stay readable.
    expect((await a2a(["tail", "s"], { dir: d.path })).stdout).toBe("first");
  });

  test("start resets the chunks of the previous run", async () => {
    using d = testStore();
    await a2a(["start", "s"], { dir: d.path });
    await appendRange(d.path, 1, 3);
    await a2a(["publish", "s", "run 1 done"], { dir: d.path });
    const again = JSON.parse((await a2a(["start", "s", "run 2", "--json"], { dir: d.path })).stdout);
    expect(again).toMatchObject({ state: "running", chunks: 0 });
    expect(await a2a(["tail", "s"], { dir: d.path })).toEqual({ stdout: "", stderr: "", code: 0 });
    expect(storedChunks(d.path, "s")).toEqual([]);
    await a2a(["append", "s", "run 2 only"], { dir: d.path });
    expect((await a2a(["tail", "s"], { dir: d.path })).stdout).toBe("run 2 only");
  });

  test("tail of an absent slot exits 3; tail --follow --timeout on a running one exits 124", async () => {
    using d = testStore();
    expectCleanError(await a2a(["tail", "nope"], { dir: d.path }), 3, /no slot named nope/);
    await a2a(["start", "s"], { dir: d.path });
    await a2a(["append", "s", "so far"], { dir: d.path });
    const r = await a2a(["tail", "s", "--follow", "--timeout", "0.3"], { dir: d.path });
    expect(r.stdout).toBe("so far");
    expectCleanError(r, 124, /timed out following s/);
  });
});

for (const mode of MODES) {
  describe.concurrent(`tail --follow, ${mode.label}`, () => {
    const env = mode.env;

    test("a follower started mid-stream prints everything exactly once, in order, and exits on publish", async () => {
      using d = testStore();
      await a2a(["start", "s"], { dir: d.path, env });
      await appendRange(d.path, 1, 10, env);
      arm(slotPath(d.path, "s"));
      await using follower = spawnA2A(["tail", "s", "--follow"], { dir: d.path, env });
      const out = new Output(follower.stdout);
      // The backlog comes first.
      const backlog = await out.until((t) => t.includes(chunk(10)), "the backlog");
      expect(backlog).toBe(chunks(1, 10));
      await blocked(follower.pid, mode, slotPath(d.path, "s"));
      // Then a burst while it follows, and the publish.
      expect((await appendRange(d.path, 11, 40, env)).code).toBe(0);
      await a2a(["publish", "s", "final result"], { dir: d.path, env });
      const rest = await out.rest();
      expect(await follower.exited).toBe(0);
      expect(backlog + rest).toBe(chunks(1, 40));
    });

    test("a follower started before the slot exists sees the whole run", async () => {
      using d = testStore();
      await using follower = spawnA2A(["tail", "s", "--follow"], { dir: d.path, env });
      if (!mode.poll) await until(() => listens(follower.pid));
      await a2a(["start", "s"], { dir: d.path, env });
      await appendRange(d.path, 1, 5, env);
      await a2a(["publish", "s", "done"], { dir: d.path, env });
      expect(await new Response(follower.stdout).text()).toBe(chunks(1, 5));
      expect(await follower.exited).toBe(0);
    });

    test("tail --follow on a published slot prints its chunks and exits at once", async () => {
      using d = testStore();
      await a2a(["start", "s"], { dir: d.path, env });
      await appendRange(d.path, 1, 3, env);
      await a2a(["publish", "s", "done"], { dir: d.path, env });
      expect(await a2a(["tail", "s", "--follow", "--timeout", "30"], { dir: d.path, env })).toEqual({ stdout: chunks(1, 3), stderr: "", code: 0 });
    });
  });
}

describe("watch", () => {
  test("a2a watch --json prints started, appended, published and cleared, one object a line", async () => {
    using d = testStore();
    await a2a(["publish", "old", "there before"], { dir: d.path });
    await using w = spawnA2A(["watch", "--json"], { dir: d.path });
    await until(() => listens(w.pid));
    const out = new Output(w.stdout);
    const nextLine = async () => JSON.parse(await out.until((t) => t.endsWith("\n"), "an event line"));
    await a2a(["start", "s", "the task"], { dir: d.path });
    expect(await nextLine()).toMatchObject({ event: "started", name: "s", version: 1, task: "the task" });
    await a2a(["append", "s", "c1"], { dir: d.path });
    expect(await nextLine()).toMatchObject({ event: "appended", name: "s", version: 2, chunks: 1 });
    await a2a(["publish", "s", "result text"], { dir: d.path });
    expect(await nextLine()).toMatchObject({ event: "published", name: "s", version: 3, size: 11, preview: "result text" });
    await a2a(["clear", "s"], { dir: d.path });
    expect(await nextLine()).toMatchObject({ event: "cleared", name: "s" });
    // The slot present before the watch began is not news.
    await a2a(["publish", "old", "new"], { dir: d.path });
    expect(await nextLine()).toMatchObject({ event: "published", name: "old", version: 2 });
    w.kill("SIGTERM");
    await w.exited;
  });

  test("a2a watch NAME ignores other slots; --timeout ends it with exit 0", async () => {
    using d = testStore();
    await using w = spawnA2A(["watch", "mine", "--timeout", "20"], { dir: d.path });
    await until(() => listens(w.pid));
    await a2a(["publish", "other", "x"], { dir: d.path });
    await a2a(["publish", "mine", "y"], { dir: d.path });
    const line = await readUntil(w.stdout, (t) => t.includes("\n"));
    expect(line).toMatch(/^\S+Z published mine v1 \(1B\) y\n$/);
    w.kill("SIGTERM");
    await w.exited;
    const quick = await a2a(["watch", "--timeout", "0.1"], { dir: d.path });
    expect(quick).toEqual({ stdout: "", stderr: "", code: 0 });
  });
});
