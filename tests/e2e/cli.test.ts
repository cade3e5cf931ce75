// The command line itself: version, help with examples, exit codes on usage mistakes, --dir
// versus A2A_DIR, and output streams (results on stdout, diagnostics on stderr).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, ON_FILES, storeExists, tempDir, testStore } from "../harness/run";
import { expectCleanError } from "./fixtures/core";
import pkg from "../../package.json" with { type: "json" };

setDefaultTimeout(120_000); // generous: the machine is shared and may be heavily loaded

const SLOT_COMMANDS = ["start", "publish", "wait", "append", "tail", "status", "clear", "gc", "watch"];

describe.concurrent("version and help", () => {
  test("a2a --version and -V print the package version", async () => {
    expect(await a2a(["--version"])).toEqual({ stdout: pkg.version + "\n", stderr: "", code: 0 });
    expect(await a2a(["-V"])).toEqual({ stdout: pkg.version + "\n", stderr: "", code: 0 });
  });

  test("a2a help and a2a --help list every slot command, exit 0", async () => {
    for (const args of [["help"], ["--help"], ["-h"]]) {
      const r = await a2a(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(r.stdout).toMatch(/^Usage: a2a /);
      for (const c of SLOT_COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${c} `, "m"));
      expect(r.stdout).toContain("--dir <path>");
    }
  });

  test("a2a with no command prints the help on stderr and exits 2", async () => {
    const r = await a2a([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^Usage: a2a /);
    expect(r.stderr).toMatch(/^  wait /m);
  });

  test("a2a task and a2a lease with no subcommand print their own help on stderr and exit 2", async () => {
    for (const [group, sub] of [["task", "claim"], ["lease", "take"]]) {
      const r = await a2a([group]);
      expect({ group, code: r.code, stdout: r.stdout }).toEqual({ group, code: 2, stdout: "" });
      expect(r.stderr).toStartWith(`Usage: a2a ${group} `);
      expect(r.stderr).toMatch(new RegExp(`^  ${sub} `, "m"));
    }
  });

  test("a2a wait --help explains the command and shows examples; a2a help wait is the same", async () => {
    const r = await a2a(["wait", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: a2a wait \[options\] <names\.\.\.>/);
    expect(r.stdout).toContain("--timeout <seconds>");
    expect(r.stdout).toContain("--any");
    expect(r.stdout).toContain("--after-version <n>");
    expect(r.stdout).toMatch(/Exit 124 on\s+timeout/);
    expect(r.stdout).toMatch(/\nExamples:\n(  \$ .*a2a wait .+\n){3,}/);
    expect(r.stdout).toContain("$ summary=$(a2a wait researcher)");
    expect((await a2a(["help", "wait"])).stdout).toBe(r.stdout);
  });

  test("every slot command's --help has examples that use that command", async () => {
    for (const c of SLOT_COMMANDS) {
      const r = await a2a([c, "--help"]);
      expect({ c, code: r.code }).toEqual({ c, code: 0 });
      const examples = r.stdout.split("\nExamples:\n")[1] ?? "";
      expect({ c, examples: examples.includes(`a2a ${c}`) }).toEqual({ c, examples: true });
    }
  });
});

describe.concurrent("store location and output streams", () => {
  test("--dir wins over A2A_DIR; either works", async () => {
    using d = tempDir();
    using sa = testStore();
    using sb = testStore();
    const a = ON_FILES ? join(d.path, "a") : sa.path;
    const b = ON_FILES ? join(d.path, "b") : sb.path;
    await a2a(["publish", "r", "in b", "--dir", b], { dir: a });
    await a2a(["--dir", b, "publish", "s", "also in b"], { dir: a });
    expect(storeExists(a)).toBe(false);
    expect((await a2a(["wait", "r", "s"], { dir: b })).stdout).toBe("==> r <==\nin b\n\n==> s <==\nalso in b\n");
  });

  test("--dir with an empty path is a usage error, not the default store", async () => {
    using d = tempDir();
    const home = join(d.path, "home");
    expectCleanError(await a2a(["publish", "r", "x", "--dir", ""], { env: { HOME: home } }), 2);
    expect(existsSync(join(home, ".a2a"))).toBe(false);
  });

  test("without --dir or A2A_DIR the store is ~/.a2a", async () => {
    using d = tempDir();
    const r = await a2a(["publish", "r", "home store"], { env: { HOME: d.path } });
    expect(r.code).toBe(0);
    expect(existsSync(join(d.path, ".a2a", "slots", "r.json"))).toBe(true);
    expect((await a2a(["wait", "r"], { env: { HOME: d.path } })).stdout).toBe("home store");
  });

  // A compiled Bun program loads .env and bunfig.toml from its working directory unless built
  // not to: a project's .env could point a2a at another store, and a bunfig.toml `preload`
  // would run that project's code inside every a2a command started there.
  test("a .env or bunfig.toml in the working directory changes nothing and runs nothing", async () => {
    using d = tempDir();
    const project = join(d.path, "project");
    mkdirSync(project);
    writeFileSync(join(project, ".env"), `A2A_DIR=${join(d.path, "hijacked")}\nA2A_AGENT=mallory\n`);
    writeFileSync(join(project, "bunfig.toml"), `preload = ["./evil.ts"]\n`);
    writeFileSync(join(project, "evil.ts"), `require("node:fs").writeFileSync(${JSON.stringify(join(d.path, "ran"))}, "x");\n`);
    const r = await a2a(["publish", "r", "x", "--json"], { env: { HOME: d.path }, cwd: project });
    expect(r.code).toBe(0);
    expect(existsSync(join(d.path, ".a2a", "slots", "r.json"))).toBe(true);
    expect(existsSync(join(d.path, "hijacked"))).toBe(false);
    expect(existsSync(join(d.path, "ran"))).toBe(false);
    const who = await a2a(["whoami", "--json"], { env: { HOME: d.path }, cwd: project });
    expect(JSON.parse(who.stdout).name).not.toBe("mallory");
  });

  test("confirmations go to stdout, nothing to stderr; errors only to stderr", async () => {
    using d = testStore();
    const ok = await a2a(["publish", "r", "x"], { dir: d.path });
    expect(ok).toEqual({ stdout: "published r (version 1, 1B)\n", stderr: "", code: 0 });
    const bad = await a2a(["clear", "nothing"], { dir: d.path });
    expect(bad.stdout).toBe("");
    expectCleanError(bad, 3);
  });

  test("every command accepts --json and prints one JSON value", async () => {
    using d = testStore();
    const runs: [string[], (v: any) => void][] = [
      [["start", "j", "t", "--json"], (v) => expect(v).toMatchObject({ name: "j", state: "running" })],
      [["append", "j", "c", "--json"], (v) => expect(v).toMatchObject({ name: "j", chunks: 1 })],
      [["tail", "j", "--json"], (v) => expect(v).toEqual({ name: "j", n: 1, text: "c" })],
      [["publish", "j", "r", "--json"], (v) => expect(v).toMatchObject({ name: "j", state: "done", result: "r" })],
      [["wait", "j", "--json"], (v) => expect(v).toMatchObject({ name: "j", result: "r" })],
      [["status", "--json"], (v) => expect(v).toHaveLength(1)],
      [["gc", "--json"], (v) => expect(v).toHaveProperty("expired")],
      [["clear", "j", "--json"], (v) => expect(v).toEqual({ cleared: ["j"], missing: [] })],
    ];
    for (const [args, check] of runs) {
      const r = await a2a(args, { dir: d.path });
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
      check(JSON.parse(r.stdout));
    }
  });
});
