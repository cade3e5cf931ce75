// `a2a wait`: the handoff between two processes, in auto (watch) mode and forced poll mode.
// Waiters are real processes; "started before publish" means the waiter is provably blocked in
// its wake loop (tests/e2e/fixtures/core.ts blocked()) before the publisher is spawned.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, a2aBelow, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { MODES, arm, blocked, expectCleanError, recordOf, sh, shellEnv, slotPath } from "./fixtures/core";

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

// Results that must survive publish -> wait byte for byte.
const PAYLOADS: Record<string, string> = {
  json: '{"a": [1, 2.50, "\\u00fc"],\t"b":null ,"c":"q\\"uote"}',
  unicode: "héllo wörld ✓ 🚀 日本語 Ω≈ç√",
  multiline: "line one\n  line two\n\nline four\twith tab\r\nend",
  "no trailing newline": "42",
  "trailing newlines": "ends with two newlines\n\n",
  "shell metacharacters": "$(rm -rf /) `x` $HOME 'single' \"double\" \\ * ? ;",
};

const bytesOf = async (s: ReadableStream<Uint8Array>) => new Uint8Array(await new Response(s).arrayBuffer());

for (const mode of MODES) {
  describe.concurrent(`handoff, ${mode.label}`, () => {
    const env = mode.env;

    test("a waiter blocked on a running slot gets the result published by another process", async () => {
      using d = testStore();
      expect((await a2a(["start", "r", "research"], { dir: d.path, env })).code).toBe(0);
      arm(slotPath(d.path, "r"));
      await using waiter = spawnA2A(["wait", "r"], { dir: d.path, env });
      await blocked(waiter.pid, mode, slotPath(d.path, "r"));
      const pub = await a2a(["publish", "r", "the answer"], { dir: d.path, env });
      expect(pub.code).toBe(0);
      expect(await new Response(waiter.stdout).text()).toBe("the answer");
      expect(await waiter.exited).toBe(0);
    });

    test("a waiter started before the slot exists wakes on its first publish", async () => {
      using d = testStore();
      await using waiter = spawnA2A(["wait", "fresh"], { dir: d.path, env });
      // Poll mode has no file to observe yet; a watch can be seen.
      if (!mode.poll) await blocked(waiter.pid, mode);
      expect((await a2a(["publish", "fresh", "first"], { dir: d.path, env })).code).toBe(0);
      expect(await new Response(waiter.stdout).text()).toBe("first");
      expect(await waiter.exited).toBe(0);
    });

    test("wait after publish returns at once with the result", async () => {
      using d = testStore();
      await a2a(["publish", "r", "already there"], { dir: d.path, env });
      const r = await a2a(["wait", "r", "--timeout", "30"], { dir: d.path, env });
      expect(r).toEqual({ stdout: "already there", stderr: "", code: 0 });
    });

    test("results pass through byte for byte (argument, stdin, --file), blocked waiter", async () => {
      using d = testStore();
      using scratch = tempDir(); // --file's input, outside the store
      let i = 0;
      for (const [kind, text] of Object.entries(PAYLOADS)) {
        for (const via of ["arg", "stdin", "file"] as const) {
          const name = `p${i++}`;
          await a2a(["start", name], { dir: d.path, env });
          arm(slotPath(d.path, name));
          await using waiter = spawnA2A(["wait", name], { dir: d.path, env });
          await blocked(waiter.pid, mode, slotPath(d.path, name));
          const file = join(scratch.path, `${name}.in`);
          if (via === "file") writeFileSync(file, text);
          const args = via === "arg" ? ["publish", name, text] : via === "stdin" ? ["publish", name] : ["publish", name, "--file", file];
          const pub = await a2a(args, { dir: d.path, env, stdin: via === "stdin" ? text : undefined });
          expect({ kind, via, code: pub.code }).toEqual({ kind, via, code: 0 });
          const got = await bytesOf(waiter.stdout);
          expect({ kind, via, got: Buffer.from(got).toString("hex") }).toEqual({ kind, via, got: Buffer.from(text).toString("hex") });
          expect(await waiter.exited).toBe(0);
        }
      }
    });

    test("x=$(a2a wait r) captures the result exactly, as the shell defines it", async () => {
      using d = testStore();
      using o = tempDir();
      const text = PAYLOADS.multiline + "\n" + PAYLOADS.unicode + "\n" + PAYLOADS.json;
      await a2a(["start", "r"], { dir: d.path, env });
      arm(slotPath(d.path, "r"));
      // Its output piped, not inherited: a waiter left behind by a failure must not hold the
      // test runner's stdout open (CI would then wait for it forever).
      await using waiter = Bun.spawn({
        cmd: ["sh", "-c", 'x=$("$A2A" wait r); rc=$?; printf "%s" "$x" > "$OUT"; exit $rc'],
        env: shellEnv(d.path, { ...env, OUT: join(o.path, "out") }),
        stdout: "pipe",
        stderr: "pipe",
      });
      const out = join(o.path, "out");
      // The shell's child is the waiter: find it through the watch or its reads of the slot.
      const kid = await childPid(waiter.pid);
      try {
        await blocked(kid, mode, slotPath(d.path, "r"));
        await a2a(["publish", "r", text], { dir: d.path, env });
        expect(await waiter.exited).toBe(0);
      } finally {
        try {
          process.kill(kid); // gone already when all went well
        } catch {}
      }
      expect(await Bun.file(out).text()).toBe(text);
    });

    test("--after-version waits for a publish newer than the one already seen", async () => {
      using d = testStore();
      await a2a(["publish", "cfg", "v1 content"], { dir: d.path, env });
      // Seen version 1 already: a new wait must not return it.
      arm(slotPath(d.path, "cfg"));
      await using waiter = spawnA2A(["wait", "cfg", "--after-version", "1"], { dir: d.path, env });
      await blocked(waiter.pid, mode, slotPath(d.path, "cfg"));
      // A restart (version 2, running) is not a publish either.
      await a2a(["start", "cfg", "recomputing"], { dir: d.path, env });
      arm(slotPath(d.path, "cfg"));
      await blocked(waiter.pid, mode, slotPath(d.path, "cfg"));
      await a2a(["publish", "cfg", "v3 content"], { dir: d.path, env });
      expect(await new Response(waiter.stdout).text()).toBe("v3 content");
      expect(await waiter.exited).toBe(0);
      // An older version already satisfies --after-version at once.
      expect(await a2a(["wait", "cfg", "--after-version", "2", "--timeout", "30"], { dir: d.path, env })).toEqual({ stdout: "v3 content", stderr: "", code: 0 });
      expect((await a2a(["wait", "cfg", "--after-version", "3", "--timeout", "0.2"], { dir: d.path, env })).code).toBe(124);
    });

    test("fan-in: all names, printed under ==> NAME <== headers in the order asked", async () => {
      using d = testStore();
      for (const n of ["a", "b", "c"]) await a2a(["start", n], { dir: d.path, env });
      arm(slotPath(d.path, "c"));
      await using waiter = spawnA2A(["wait", "a", "b", "c"], { dir: d.path, env });
      await blocked(waiter.pid, mode, slotPath(d.path, "c"));
      // Published out of order; two of three must not release the waiter.
      await a2a(["publish", "c", "C result"], { dir: d.path, env });
      await a2a(["publish", "a", "A\nresult\n"], { dir: d.path, env });
      arm(slotPath(d.path, "b"));
      await blocked(waiter.pid, mode, slotPath(d.path, "b"));
      await a2a(["publish", "b", "B"], { dir: d.path, env });
      expect(await new Response(waiter.stdout).text()).toBe("==> a <==\nA\nresult\n\n==> b <==\nB\n\n==> c <==\nC result\n");
      expect(await waiter.exited).toBe(0);
    });

    test("fan-in --any returns the first published name only", async () => {
      using d = testStore();
      for (const n of ["a", "b", "c"]) await a2a(["start", n], { dir: d.path, env });
      arm(slotPath(d.path, "b"));
      await using waiter = spawnA2A(["wait", "a", "b", "c", "--any"], { dir: d.path, env });
      await blocked(waiter.pid, mode, slotPath(d.path, "b"));
      await a2a(["publish", "b", "bee"], { dir: d.path, env });
      expect(await new Response(waiter.stdout).text()).toBe("==> b <==\nbee\n");
      expect(await waiter.exited).toBe(0);
    });

    test("fan-in --json prints one object keyed by name with the full records", async () => {
      using d = testStore();
      await a2a(["publish", "b", '{"n":2}'], { dir: d.path, env });
      await a2a(["start", "a", "task A"], { dir: d.path, env });
      arm(slotPath(d.path, "a"));
      await using waiter = spawnA2A(["wait", "a", "b", "--json"], { dir: d.path, env });
      await blocked(waiter.pid, mode, slotPath(d.path, "a"));
      await a2a(["publish", "a", "ü"], { dir: d.path, env });
      const out = JSON.parse(await new Response(waiter.stdout).text());
      expect(await waiter.exited).toBe(0);
      expect(Object.keys(out).sort()).toEqual(["a", "b"]);
      expect(out.a).toMatchObject({ name: "a", state: "done", task: "task A", result: "ü", size: 2, version: 2 });
      expect(out.b).toMatchObject({ name: "b", state: "done", result: '{"n":2}', version: 1 });
    });
  });
}

// Publishes w<from>..w<to> (result "rw<i>") from four shell loops at once.
async function publishRange(dir: string, from: number, to: number): Promise<void> {
  const loops = [0, 1, 2, 3].map((k) =>
    sh(`for i in $(seq ${from + k} 4 ${to}); do n=$(printf "w%03d" $i); "$A2A" publish $n "r$n" >/dev/null || exit 1; done`, dir),
  );
  for (const r of await Promise.all(loops)) expect(r).toMatchObject({ code: 0, stderr: "" });
}

describe("wait on many names", () => {
  test("waits on 200 names at once and prints them all in the order given", async () => {
    using d = testStore();
    const names = Array.from({ length: 200 }, (_, i) => `w${String(i).padStart(3, "0")}`);
    // Half are there before the wait starts, half land while it is blocked.
    await publishRange(d.path, 0, 99);
    await using waiter = spawnA2A(["wait", ...names, "--json"], { dir: d.path });
    await blocked(waiter.pid, MODES[0]);
    await publishRange(d.path, 100, 199);
    const out = JSON.parse(await new Response(waiter.stdout).text());
    expect(await waiter.exited).toBe(0);
    expect(Object.keys(out)).toEqual(names);
    for (const n of names) expect(out[n].result).toBe(`r${n}`);
    // Human output: 200 headers, in the order asked.
    const human = await a2a(["wait", ...names], { dir: d.path });
    expect(human.code).toBe(0);
    expect([...human.stdout.matchAll(/^==> (\S+) <==$/gm)].map((m) => m[1])).toEqual(names);
  }, 180_000);
});

describe.concurrent("wait: timeouts and formats", () => {
  test("timeout: exit 124 and one line naming what was missing", async () => {
    using d = testStore();
    await a2a(["publish", "here", "x"], { dir: d.path });
    await a2a(["start", "slow"], { dir: d.path });
    const r = await a2a(["wait", "here", "slow", "gone", "--timeout", "0.3"], { dir: d.path });
    expectCleanError(r, 124, /timed out waiting for slow, gone: /);
    expect(r.stdout).toBe("");
    expectCleanError(await a2a(["wait", "never", "--timeout", "0"], { dir: d.path }), 124, /timed out waiting for never/);
    // --timeout 0 still returns what is already published.
    expect(await a2a(["wait", "here", "--timeout", "0"], { dir: d.path })).toEqual({ stdout: "x", stderr: "", code: 0 });
    // Durations with units.
    expectCleanError(await a2a(["wait", "never", "--timeout", "150ms"], { dir: d.path }), 124);
  });

  test("a running or expired slot is not published: wait times out", async () => {
    using d = testStore();
    await a2a(["start", "busy"], { dir: d.path });
    expectCleanError(await a2a(["wait", "busy", "--timeout", "0.2"], { dir: d.path }), 124);
    await a2a(["publish", "brief", "gone soon", "--ttl", "1ms"], { dir: d.path });
    const { expires_at } = recordOf(d.path, "brief");
    await until(() => Date.now() / 1000 > expires_at, 10_000, "the TTL to pass");
    expectCleanError(await a2a(["wait", "brief", "--timeout", "0.2"], { dir: d.path }), 124);
  });

  test("--json with one name prints the record", async () => {
    using d = testStore();
    await a2a(["publish", "one", "1"], { dir: d.path });
    const r = await a2a(["wait", "one", "--json"], { dir: d.path });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ a2a: 1, name: "one", state: "done", result: "1", version: 1 });
  });
});

// The pid of the a2a wait the shell started (sh may fork a subshell for $(...) first).
async function childPid(pid: number): Promise<number> {
  let child = 0;
  await until(() => (child = a2aBelow(pid, "wait")) > 0, 20_000, "the shell to start a2a wait");
  return child;
}
