// Bad input and hostile conditions: every one gets the documented exit code, one clear line on
// stderr naming the rule or the fix, no stack trace, and leaves the store (and everything
// around it) exactly as it was.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, chownSync, existsSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, a2a, asUser, canRunAsOthers, exitWithin, ON_FILES, otherUserEnv, readUntil, spawnA2A, tempDir, testStore, until, type RunResult } from "../harness/run";
import { expectCleanError, recordText, slotNames, snapshot } from "./fixtures/core";
import { checkName } from "../../lib/core/names";

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

const RULE = /names are 1-128 characters of letters, digits, '\.', '_' and '-', not starting with '\.'/;

const BAD_NAMES: Record<string, string> = {
  "a path separator": "a/b",
  "a parent reference": "../escape",
  "just dots": "..",
  "an absolute path": "/etc/passwd",
  "a leading dot": ".hidden",
  "129 characters": "n".repeat(129),
  "the empty string": "",
  "unicode letters": "café",
  "a space": "a b",
  "a backslash": "a\\b",
  "a newline": "a\nb",
  "a glob": "a*",
};

// Every command that takes a slot name, with the name in place.
const COMMANDS: ((n: string) => string[])[] = [
  (n) => ["start", n, "task"],
  (n) => ["publish", n, "result"],
  (n) => ["publish", n, "result", "--if-version", "0"],
  (n) => ["wait", n, "--timeout", "5"],
  (n) => ["wait", "ok", n, "--any", "--timeout", "5"],
  (n) => ["append", n, "chunk"],
  (n) => ["tail", n],
  (n) => ["tail", n, "--follow", "--timeout", "5"],
  (n) => ["status", n],
  (n) => ["clear", n],
  (n) => ["watch", n, "--timeout", "5"],
];

describe.concurrent("bad names", () => {
  for (const [what, name] of Object.entries(BAD_NAMES)) {
    test(`a name with ${what} is refused: exit 2 naming the rule, nothing created in or around the store`, async () => {
      using d = testStore();
      using around = tempDir();
      const store = ON_FILES ? join(around.path, "store") : d.path;
      await a2a(["publish", "ok", "existing"], { dir: store });
      const outside = [snapshot(around.path), snapshot(store)];
      // The write path, the read/wait path and the remove path.
      for (const cmd of [COMMANDS[1], COMMANDS[3], COMMANDS[9]]) {
        const r = await a2a(cmd(name), { dir: store, cwd: around.path });
        expectCleanError(r, 2, RULE);
        expect(r.stdout).toBe("");
      }
      // The parent, the store and everything in them unchanged.
      expect([snapshot(around.path), snapshot(store)]).toEqual(outside);
      expect(existsSync("/etc/passwd.json")).toBe(false);
    });
  }

  test("every command that takes a name checks it before touching anything", async () => {
    using d = testStore();
    using around = tempDir();
    const store = ON_FILES ? join(around.path, "store") : d.path;
    await a2a(["publish", "ok", "existing"], { dir: store });
    const outside = [snapshot(around.path), snapshot(store)];
    for (const cmd of COMMANDS) {
      for (const name of ["../escape", ""]) {
        const r = await a2a(cmd(name), { dir: store, cwd: around.path });
        expect({ cmd: cmd(name), code: r.code }).toEqual({ cmd: cmd(name), code: 2 });
        expectCleanError(r, 2, RULE);
      }
    }
    expect([snapshot(around.path), snapshot(store)]).toEqual(outside);
  });

  test("128 characters and every allowed character are fine", async () => {
    using d = testStore();
    for (const name of ["n".repeat(128), "A-z_0.9", "x..y", "-dash", "_under", "a.b.c"]) {
      // "--" ends the options, so a name may start with "-".
      const p = await a2a(["publish", "--", name, "ok"], { dir: d.path });
      expect({ name, code: p.code, stderr: p.stderr }).toEqual({ name, code: 0, stderr: "" });
      expect((await a2a(["wait", "--timeout", "5", "--", name], { dir: d.path })).stdout).toBe("ok");
    }
    expect(slotNames(d.path).length).toBe(6);
  });

  test("a NUL in a name is refused by the name gate (argv cannot carry one)", () => {
    // execve() refuses NUL bytes in arguments, so no CLI call can pass one; MCP input can, and
    // goes through the same lib/fs/paths.ts checkName.
    expect(() => Bun.spawnSync({ cmd: [BIN, "publish", "a\0b", "x"] })).toThrow();
    expect(() => checkName("a\0b")).toThrow(RULE);
    expect(() => checkName("nul\0")).toThrow(RULE);
  });
});

describe.concurrent("bad payloads", () => {
  const limit = { A2A_MAX_BYTES: "16" };

  test("an oversize result is refused with exit 2 (argument, stdin, --file) and the old record stays", async () => {
    using d = testStore();
    using inputs = tempDir();
    await a2a(["publish", "r", "old result"], { dir: d.path });
    const before = snapshot(d.path);
    const big = "x".repeat(17);
    writeFileSync(join(inputs.path, "big"), big);
    const tries: RunResult[] = [
      await a2a(["publish", "r", big], { dir: d.path, env: limit }),
      await a2a(["publish", "r"], { dir: d.path, env: limit, stdin: big }),
      await a2a(["publish", "r", "-"], { dir: d.path, env: limit, stdin: "y".repeat(1_000_000) }),
      await a2a(["publish", "r", "--file", join(inputs.path, "big")], { dir: d.path, env: limit }),
      await a2a(["publish", "r", "é".repeat(9)], { dir: d.path, env: limit }), // 18 bytes, 9 characters
      await a2a(["append", "r2", big], { dir: d.path, env: limit }),
      await a2a(["start", "r3", big], { dir: d.path, env: limit }),
    ];
    for (const r of tries) expectCleanError(r, 2, /over the 16-byte limit: .*A2A_MAX_BYTES/);
    expect(snapshot(d.path)).toEqual(before);
    // At the limit exactly is fine, counted in bytes.
    expect((await a2a(["publish", "r", "é".repeat(8)], { dir: d.path, env: limit })).code).toBe(0);
    expect((await a2a(["wait", "r"], { dir: d.path })).stdout).toBe("é".repeat(8));
  });

  test("invalid UTF-8 on stdin or in --file is refused with exit 2 and the old record stays", async () => {
    using d = testStore();
    using inputs = tempDir();
    await a2a(["publish", "r", "good"], { dir: d.path });
    const before = snapshot(d.path);
    const bad = new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x80]);
    writeFileSync(join(inputs.path, "bad"), bad);
    expectCleanError(await a2a(["publish", "r"], { dir: d.path, stdin: bad }), 2, /not valid UTF-8/);
    expectCleanError(await a2a(["publish", "r", "-"], { dir: d.path, stdin: new Uint8Array([0xc3]) }), 2, /not valid UTF-8/);
    expectCleanError(await a2a(["append", "r2", "-"], { dir: d.path, stdin: bad }), 2, /not valid UTF-8/);
    expectCleanError(await a2a(["publish", "r", "--file", join(inputs.path, "bad")], { dir: d.path }), 2, /not valid UTF-8/);
    expect(snapshot(d.path)).toEqual(before);
  });

  test("NUL and other control characters in a result are text and pass through", async () => {
    using d = testStore();
    const text = "a\u0000b\u0001c\u001b[31mred\u001b[0m";
    expect((await a2a(["publish", "r"], { dir: d.path, stdin: text })).code).toBe(0);
    expect((await a2a(["wait", "r"], { dir: d.path })).stdout).toBe(text);
  });

  test("no result and no piped input (stdin is /dev/null) is a usage error, not an empty publish", async () => {
    using d = testStore();
    await a2a(["start", "r"], { dir: d.path });
    const before = snapshot(d.path);
    // helpers' a2a() gives the child /dev/null as stdin, like a script run without input.
    expectCleanError(await a2a(["publish", "r"], { dir: d.path }), 2, /the result is missing: pass it as an argument, '-' to read stdin, or --file/);
    expectCleanError(await a2a(["append", "r"], { dir: d.path }), 2, /the chunk is missing/);
    expect(snapshot(d.path)).toEqual(before);
    // Asked for explicitly, an empty stdin is an empty result.
    expect((await a2a(["publish", "r", "-"], { dir: d.path })).code).toBe(0);
    expect((await a2a(["wait", "r", "--json"], { dir: d.path })).stdout).toContain('"result":""');
  });

  test("a missing --file, or both an argument and --file, is a usage error", async () => {
    using d = testStore();
    using inputs = tempDir();
    expectCleanError(await a2a(["publish", "r", "--file", join(inputs.path, "nope")], { dir: d.path }), 2, /no such file/);
    writeFileSync(join(inputs.path, "f"), "x");
    expectCleanError(await a2a(["publish", "r", "arg", "--file", join(inputs.path, "f")], { dir: d.path }), 2, /both/);
    expect(recordText(d.path, "r")).toBeUndefined();
  });
});

describe.concurrent("bad flags and settings", () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ["unknown command", ["frobnicate"], {}, /unknown command 'frobnicate'/],
    ["unknown option", ["wait", "r", "--bogus"], {}, /unknown option '--bogus'/],
    ["unknown global option", ["--nope", "status"], {}, /unknown option '--nope'/],
    ["missing argument", ["publish"], {}, /missing required argument/],
    ["bad --timeout", ["wait", "r", "--timeout", "soon"], {}, /--timeout "soon" is not a duration/],
    ["negative --timeout", ["wait", "r", "--timeout", "-1"], {}, /.+/],
    ["bad --ttl", ["publish", "r", "x", "--ttl", "forever"], {}, /--ttl "forever" is not a duration/],
    ["bad --if-version", ["publish", "r", "x", "--if-version", "-1"], {}, /--if-version "-1" is not a whole number/],
    ["fractional --if-version", ["publish", "r", "x", "--if-version", "1.5"], {}, /is not a whole number/],
    ["bad --after-version", ["wait", "r", "--after-version", "x"], {}, /--after-version "x" is not a whole number/],
    ["bad --after", ["tail", "r", "--after", "x"], {}, /--after "x" is not a whole number/],
    ["bad A2A_WATCH", ["status"], { A2A_WATCH: "inotify" }, /A2A_WATCH="inotify" is not a watch mode: use auto, watch or poll/],
    ["bad A2A_MAX_BYTES", ["status"], { A2A_MAX_BYTES: "0" }, /A2A_MAX_BYTES="0" is not a positive integer/],
    ["bad A2A_POLL_MS", ["status"], { A2A_POLL_MS: "fast" }, /A2A_POLL_MS="fast" is not a positive integer/],
  ];
  for (const [what, args, env, message] of cases) {
    test(`${what}: exit 2, one line, store untouched`, async () => {
      using d = testStore();
      await a2a(["publish", "r", "kept"], { dir: d.path });
      const before = snapshot(d.path);
      expectCleanError(await a2a(args, { dir: d.path, env }), 2, message);
      expect(snapshot(d.path)).toEqual(before);
    });
  }
});

// Permissions and files where the store's directories should be: the file engine's own.
describe.if(ON_FILES)("a store that cannot be written", () => {
  const canDropRoot = canRunAsOthers;
  if (!canDropRoot) console.warn("errors.test.ts: skipping the permission tests: they need root and setpriv to run as nobody");
  const runAs = (cmd: string[], store: string, stdin?: string): Promise<RunResult> =>
    a2a(cmd, { dir: store, stdin, prefix: asUser("nobody", { group: "nogroup" }), env: otherUserEnv });

  test.if(canDropRoot)("a read-only slots directory: writes fail with exit 1 and a hint, reads still work, store intact", async () => {
    using d = tempDir();
    chmodSync(d.path, 0o755);
    const store = join(d.path, "store");
    await a2a(["start", "s"], { dir: store });
    await a2a(["append", "s", "chunk"], { dir: store });
    await a2a(["publish", "r", "precious"], { dir: store });
    const gone = JSON.parse((await a2a(["publish", "expired", "x", "--ttl", "1ms", "--json"], { dir: store })).stdout);
    await until(() => Date.now() / 1000 > gone.expires_at, 10_000, "the TTL to pass");
    // Owned by nobody, but slots/ is r-x: nothing in it can be created, replaced or removed.
    chownSync(store, 65534, 65534);
    for (const p of readdirSync(store, { recursive: true }) as string[]) chownSync(join(store, p), 65534, 65534);
    chmodSync(join(store, "slots"), 0o500);
    const before = snapshot(store);
    for (const cmd of [["publish", "r", "overwrite"], ["publish", "new", "x"], ["start", "r"], ["append", "s", "more"], ["clear", "r"], ["clear", "--all"]]) {
      const r = await runAs(cmd, store);
      expectCleanError(r, 1, /failed \(EACCES\): check the permissions of the store directory/);
    }
    expect(snapshot(store)).toEqual(before);
    // Reading needs no write access.
    expect(await runAs(["wait", "r", "--timeout", "5"], store)).toEqual({ stdout: "precious", stderr: "", code: 0 });
    // status lists the live slots; the expired one it cannot sweep counts as absent all the same.
    const st = await runAs(["status", "--json"], store);
    expect({ code: st.code, stderr: st.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(st.stdout).map((r: any) => r.name).sort()).toEqual(["r", "s"]);
    expectCleanError(await runAs(["status", "expired"], store), 3);
    expect((await runAs(["tail", "s"], store)).stdout).toBe("chunk");
  });

  test.if(canDropRoot)("a store directory owned by someone else: exit 1 with a hint, no stack trace", async () => {
    using d = tempDir();
    chmodSync(d.path, 0o755);
    const store = join(d.path, "store");
    await a2a(["publish", "r", "root's"], { dir: store }); // root-owned, mode 0700
    const before = snapshot(store);
    for (const cmd of [["publish", "r", "x"], ["status"], ["wait", "r", "--timeout", "1"], ["gc"]]) {
      // Reads meet the permissions; writes are refused by the store's owner check first.
      expectCleanError(await runAs(cmd, store), 1, /EACCES.*permissions|belongs to uid \d+, not to you: a private store must be yours/);
    }
    expect(snapshot(store)).toEqual(before);
  });

  test("a file where the store directory should be: exit 1, file untouched", async () => {
    using d = tempDir();
    const notDir = join(d.path, "store");
    writeFileSync(notDir, "I am a file");
    for (const cmd of [["publish", "r", "x"], ["start", "r"], ["wait", "r", "--timeout", "1"], ["append", "r", "c"]]) {
      expectCleanError(await a2a(cmd, { dir: notDir }), 1, /cannot be a directory: .* is a file; point --dir or A2A_DIR at a directory/);
    }
    expect(await Bun.file(notDir).text()).toBe("I am a file");
  });

  test("a file where slots/ should be: exit 1, nothing else changed", async () => {
    using d = tempDir();
    await a2a(["publish", "ok", "x"], { dir: d.path });
    const { rmSync } = await import("node:fs");
    rmSync(join(d.path, "slots"), { recursive: true });
    writeFileSync(join(d.path, "slots"), "");
    const before = snapshot(d.path);
    for (const cmd of [["publish", "r", "x"], ["wait", "r", "--timeout", "1"], ["clear", "--all"]]) {
      expectCleanError(await a2a(cmd, { dir: d.path }), 1);
    }
    expect(snapshot(d.path)).toEqual(before);
  });
});

describe.if(ON_FILES)("garbage in the store", () => {
  test("a foreign or corrupt file in slots/ is skipped with a warning, never returned; a wait on it says so and waits on", async () => {
    using d = tempDir();
    await a2a(["publish", "good", "fine"], { dir: d.path });
    writeFileSync(join(d.path, "slots", "bad.json"), '{"a2a":1,"name":"bad","state":"done","result":"cut');
    writeFileSync(join(d.path, "slots", "README.txt"), "not a slot");
    const st = await a2a(["status", "--json"], { dir: d.path });
    expect(st.code).toBe(0);
    expect(JSON.parse(st.stdout).map((r: any) => r.name)).toEqual(["good"]);
    expect(st.stderr).toMatch(/^a2a: warning: slots\/bad\.json is not a valid record; skipped/);
    expect(st.stderr).not.toMatch(/^\s+at /m);
    // A waiter does not take it as published, nor waits on a record that refuses every publish
    // (issue 33: it waited forever): exit 1 at once, naming the fix; a waiter already waiting
    // when the record is damaged ends the same way.
    const file = join(d.path, "slots", "bad.json");
    const t = await a2a(["wait", "bad"], { dir: d.path });
    const said = `a2a: the record of slot bad is damaged (${file} is not a valid record), so nothing can be published there: a2a clear bad removes it, then publish again and wait\n`;
    expect(t).toEqual({ code: 1, stdout: "", stderr: said });
    expectCleanError(await a2a(["publish", "bad", "too soon"], { dir: d.path }), 1, /record is unreadable .*a2a clear bad/);
    await a2a(["clear", "bad"], { dir: d.path });
    expect(existsSync(file)).toBe(false);
    const w = spawnA2A(["wait", "bad", "--timeout", "60"], { dir: d.path });
    await a2a(["start", "bad", "will be damaged"], { dir: d.path }); // a write the waiter sees, and reads as not yet published
    writeFileSync(join(d.path, "slots", ".bad.tmp"), '{"a2a":1,"name":"bad","state":"done","result":"cut');
    renameSync(join(d.path, "slots", ".bad.tmp"), file);
    expect(await exitWithin(w, 20_000)).toBe(1);
    expect(await new Response(w.stderr).text()).toBe(said);
    // --any: a damaged name ends nothing while another can still come (the review of the fix:
    // one damaged name ended the whole wait); once none is left, the same refusal.
    const any = spawnA2A(["wait", "bad", "later", "--any", "--timeout", "60"], { dir: d.path });
    await a2a(["publish", "later", "came"], { dir: d.path });
    expect(await exitWithin(any, 20_000)).toBe(0);
    expect(await new Response(any.stdout).text()).toContain("came");
    expect(await a2a(["wait", "bad", "--any"], { dir: d.path })).toEqual({ code: 1, stdout: "", stderr: said });
    expect((await a2a(["clear", "bad"], { dir: d.path })).code).toBe(0);
    expect((await a2a(["publish", "bad", "fixed"], { dir: d.path })).code).toBe(0);
    expect(await a2a(["wait", "bad"], { dir: d.path })).toMatchObject({ code: 0, stdout: "fixed" });
  });
});

// Issue 33: `a2a status --dir` of a directory that is not a store said "no slots yet" while
// every write there was refused. It says what a write says, exit 2, and changes nothing.
test("status of a directory that is no a2a store says so, as a write does, exit 2; an empty or missing one has no slots yet", async () => {
  using d = tempDir();
  writeFileSync(join(d.path, "notes.txt"), "mine\n");
  const said = `a2a: ${d.path} is not an a2a store (it holds notes.txt, which a2a never creates): use an empty or new directory with --dir or A2A_DIR\n`;
  expect(await a2a(["status"], { dir: d.path })).toEqual({ code: 2, stdout: "", stderr: said });
  expect(await a2a(["publish", "x", "1"], { dir: d.path })).toEqual({ code: 2, stdout: "", stderr: said });
  expect(readdirSync(d.path)).toEqual(["notes.txt"]);
  using e = tempDir();
  expect((await a2a(["status"], { dir: e.path })).stdout).toStartWith("no slots yet");
  expect((await a2a(["status"], { dir: join(e.path, "new") })).stdout).toStartWith("no slots yet");
  expect(readdirSync(e.path)).toEqual([]);
});
