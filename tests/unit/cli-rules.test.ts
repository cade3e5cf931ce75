// The CLI's own rules that a grep can check (issue 8 item 7): one stderr writer (cli/io.ts
// `err`), one ISO-time formatter (lib/core/time.ts `isoTime`), one duration parser (io.ts,
// reached through durationSec/durationMs), one place that handles signals and ends commands
// (cli/run.ts), and commands that only parse, call lib and format (no commander boilerplate
// of their own beyond the runner's `command`/`action`). cli/mcp/ is the MCP adapter's, with
// its own shutdown, and is left out of the signal and command rules.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../harness/run";

const files = (dir: string) =>
  (readdirSync(join(ROOT, dir), { recursive: true }) as string[]).filter((f) => f.endsWith(".ts")).map((f) => join(dir, f)).sort();

// Lines of code (comments removed) matching `re`, as "file:line: text".
function hits(list: string[], re: RegExp): string[] {
  const found: string[] = [];
  for (const f of list) {
    readFileSync(join(ROOT, f), "utf8")
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1")
      .split("\n")
      .forEach((line, i) => re.test(line) && found.push(`${relative(".", f)}:${i + 1}: ${line.trim()}`));
  }
  return found;
}

const CLI = files("cli");
const SHELL_CLI = CLI.filter((f) => !f.startsWith("cli/mcp/"));
const COMMANDS = files("cli/commands").filter((f) => f !== "cli/commands/index.ts");

describe("cli rules", () => {
  test("there is something to check", () => {
    expect(COMMANDS.length).toBeGreaterThanOrEqual(6);
    expect(SHELL_CLI).toContain("cli/run.ts");
  });

  test("all stderr goes through io.err: no process.stderr or console output in cli/ outside io.ts", () => {
    expect(hits(CLI.filter((f) => f !== "cli/io.ts"), /process\.stderr|console\.(error|warn|log)\(/)).toEqual([]);
  });

  test("one ISO-time formatter: lib/core/time.ts isoTime", () => {
    expect(hits([...SHELL_CLI, ...files("lib")].filter((f) => f !== "lib/core/time.ts"), /toISOString\(/)).toEqual([]);
  });

  test("durations are parsed by io.ts only, through durationSec / durationMs", () => {
    expect(hits(SHELL_CLI.filter((f) => f !== "cli/io.ts"), /parseDuration\(|\*\s*1000\b/)).toEqual([]);
  });

  test("signals, stdout closing and watch teardown are cli/run.ts's only", () => {
    const others = SHELL_CLI.filter((f) => f !== "cli/run.ts" && f !== "cli/io.ts"); // io.ts defines closeStdout
    expect(hits(others, /process\.(once|on)\(|closeStdout\(|closeWatches\(|process\.exitCode\s*=[^=]/)).toEqual([]);
  });

  test("command modules go through the runner: every action is action(...), every command command(...)", () => {
    expect(hits(COMMANDS, /\.action\((?!action\()/)).toEqual([]);
    expect(hits(COMMANDS, /\.command\(|\.summary\(|\.description\(|addHelpText\(/)).toEqual([]);
    expect(hits(COMMANDS, /const examples\b/)).toEqual([]);
  });
});
