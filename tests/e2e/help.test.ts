// Help that teaches: the top-level help lists examples, every environment variable
// lib/core/config.ts reads, and the exit codes; every command has a summary (in the list)
// and a description of its own (in its --help); mistakes in naming a command are usage
// errors with commander's suggestion; every command takes --json.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, readUntil, ROOT, testStore } from "../harness/run";
import { expectCleanError } from "./fixtures/core";

setDefaultTimeout(120_000);

// The commands of `a2a --help` with their summaries (commander wraps a summary onto
// indented continuation lines).
function listing(help: string): Map<string, string> {
  const block = help.split("\nCommands:\n")[1].split("\n\n")[0];
  const commands = new Map<string, string>();
  let last: string | undefined;
  for (const line of block.split("\n")) {
    const m = /^  (\S+) (?:\[options\] )?(?:[<[]\S+[>\]] ?)*\s+(.*)$/.exec(line);
    if (m) commands.set((last = m[1]), m[2]);
    else if (last) commands.set(last, commands.get(last) + " " + line.trim());
  }
  commands.delete("help");
  return commands;
}

const flat = (s: string) => s.replace(/\s+/g, " ").trim();

describe.concurrent("top-level help", () => {
  test("lists examples, every A2A_* variable config.ts reads, and the exit codes", async () => {
    const r = await a2a(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nExamples:\n(  \$ .*a2a .+\n){3,}/);
    const config = readFileSync(join(ROOT, "lib/core/config.ts"), "utf8");
    const vars = [...new Set(config.match(/A2A_[A-Z_]+/g))];
    expect(vars.length).toBeGreaterThanOrEqual(13);
    const env = r.stdout.split("\nEnvironment:\n")[1] ?? "";
    for (const v of vars) expect({ v, listed: new RegExp(`^  ${v} `, "m").test(env) }).toEqual({ v, listed: true });
    const exits = r.stdout.split("\nExit codes:\n")[1] ?? "";
    for (const code of ["0", "1", "2", "3", "4", "124", "128\\+N"]) expect(exits).toMatch(new RegExp(`^  ${code} +\\S`, "m"));
    expect(exits).toContain("143 SIGTERM");
  });

  test("every command has a summary in the list and its own description in its --help", async () => {
    const commands = listing((await a2a(["--help"])).stdout);
    expect(commands.size).toBeGreaterThanOrEqual(21);
    for (const [name, summary] of commands) {
      const r = await a2a([name, "--help"]);
      expect({ name, code: r.code }).toEqual({ name, code: 0 });
      // Usage line, blank line, then the description paragraph.
      const description = flat(r.stdout.split("\n\n")[1] ?? "");
      expect({ name, described: description.length > summary.length && description !== flat(summary) }).toEqual({ name, described: true });
      expect({ name, json: /^  --json +\S/m.test(r.stdout) }).toEqual({ name, json: true });
      expect({ name, quiet: /^  -q, --quiet +\S/m.test(r.stdout) }).toEqual({ name, quiet: true });
      const examples = r.stdout.split("\nExamples:\n")[1] ?? "";
      expect({ name, example: examples.includes(`a2a ${name}`) }).toEqual({ name, example: true });
      // What another agent wrote is data (README, Trust): no example runs it as a command.
      expect({ name, runsBodies: /\|\s*(sh|bash|zsh)\b/.test(examples) }).toEqual({ name, runsBodies: false });
    }
  });

  test("the append example stores a real newline, not a backslash and n", async () => {
    const r = await a2a(["append", "--help"]);
    const examples = r.stdout.split("\nExamples:\n")[1];
    expect(examples).not.toMatch(/"[^"]*\\n"/);
    expect(examples).toContain("$'page 3 of 10 done\\n'");
  });
});

describe.concurrent("naming a command wrongly is a usage error", () => {
  test("a2a help bogus: one line, exit 2, no help dump", async () => {
    const r = await a2a(["help", "bogus"]);
    expectCleanError(r, 2);
    expect(r.stderr).toBe("a2a: unknown command 'bogus': see a2a --help\n");
  });

  test("an unknown command keeps commander's suggestion", async () => {
    const r = await a2a(["pubish", "x", "y"]);
    expectCleanError(r, 2);
    expect(r.stderr).toContain("unknown command 'pubish' (did you mean publish?)");
    expect((await a2a(["help", "wiat"])).stderr).toContain("(did you mean wait?)");
  });

  test("an unknown option points to the help of the subcommand that has it; a2a help GROUP SUB is that subcommand's help", async () => {
    expect((await a2a(["task", "claim", "q", "--bogus"])).stderr).toBe("a2a: unknown option '--bogus': see a2a task claim --help\n");
    expect((await a2a(["lease", "take", "--zz"])).stderr).toBe("a2a: unknown option '--zz': see a2a lease take --help\n");
    expect((await a2a(["task", "--bogus"])).stderr).toBe("a2a: unknown option '--bogus': see a2a task --help\n");
    expect((await a2a(["publish", "--zz"])).stderr).toBe("a2a: unknown option '--zz': see a2a publish --help\n");
    const help = await a2a(["help", "task", "claim"]);
    expect(help).toEqual({ code: 0, stderr: "", stdout: (await a2a(["task", "claim", "--help"])).stdout });
    expect(help.stdout).toStartWith("Usage: a2a task claim [options] <queue>\n");
  });

  test("--dir before the command still routes to it", async () => {
    using d = testStore();
    const r = await a2a(["--dir", d.path, "publish", "r", "x"]);
    expect(r).toEqual({ stdout: "published r (version 1, 1B)\n", stderr: "", code: 0 });
    expect((await a2a([`--dir=${d.path}`, "wait", "r"])).stdout).toBe("x");
  });
});

describe.concurrent("every command takes --json", () => {
  test("a2a mcp --json serves MCP (the output is JSON-RPC) and ends when stdin closes", async () => {
    using d = testStore();
    const p = Bun.spawn({
      cmd: [BIN, "mcp", "--json"],
      env: { ...process.env, A2A_DIR: d.path },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    p.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }) + "\n");
    p.stdin.flush();
    const out = await readUntil(p.stdout, (t) => t.includes("\n"));
    expect(JSON.parse(out.split("\n")[0])).toMatchObject({ jsonrpc: "2.0", id: 1, result: { serverInfo: { name: "a2a" } } });
    p.stdin.end();
    expect(await p.exited).toBe(0);
  });
});
