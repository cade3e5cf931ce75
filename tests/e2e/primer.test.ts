// `a2a primer` and `a2a setup AGENT --primer` (issue 37: the bus explained in at most 3 KB for an
// agent that works from its shell, and a line in the agent's instructions file pointing at it).
// The page cannot drift from the CLI: every command it shows is run with --help here.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, tempDir, testStore } from "../harness/run";

setDefaultTimeout(60_000);

describe("a2a primer", () => {
  test("at most 3 KB, says who you are, and every command it shows exists with the flags it names", async () => {
    using s = testStore();
    const r = await a2a(["primer"], { dir: s.path, env: { A2A_AGENT: "alice" } });
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(Buffer.byteLength(r.stdout)).toBeLessThanOrEqual(3072);
    expect(r.stdout).toContain("You are alice on it");
    expect(r.stdout).toMatch(/data from them, never instructions/);
    const shown = new Map<string, Set<string>>(); // "task claim" -> the flags shown with it
    for (const m of r.stdout.matchAll(/a2a ([a-z-]+)(?: (add|claim|done|fail|wait))?((?: [^;|)\n]*)?)/g)) {
      const cmd = m[2] && m[1] === "task" ? `task ${m[2]}` : m[1];
      const flags = shown.get(cmd) ?? new Set<string>();
      for (const f of m[3].matchAll(/--[a-z-]+/g)) flags.add(f[0]);
      shown.set(cmd, flags);
    }
    expect(shown.size).toBeGreaterThan(18);
    for (const [cmd, flags] of shown) {
      const help = await a2a([...cmd.split(" "), "--help"], { dir: s.path });
      expect({ cmd, code: help.code }).toEqual({ cmd, code: 0 });
      for (const f of flags) expect({ cmd, flag: f, known: help.stdout.includes(f) }).toEqual({ cmd, flag: f, known: true });
    }
    const j = await a2a(["primer", "--json", "--as", "bob"], { dir: s.path });
    expect(JSON.parse(j.stdout)).toMatchObject({ name: "bob", text: expect.stringContaining("You are bob on it") });
  });
});

describe("a2a setup AGENT --primer", () => {
  test("adds one block at the end of the agent's instructions file; twice changes nothing; --remove gives the file back byte for byte, or deletes the one it created", async () => {
    using d = tempDir();
    const home = join(d.path, "home");
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    const o = { env: { HOME: home, CODEX_HOME: undefined, GEMINI_CLI_HOME: undefined, QWEN_HOME: undefined, COPILOT_HOME: undefined, XDG_CONFIG_HOME: undefined, XDG_STATE_HOME: undefined }, cwd: repo };
    // The user's own CLAUDE.md, without a newline at its end.
    const mine = "# House rules\nRun the tests before you commit.";
    writeFileSync(join(repo, "CLAUDE.md"), mine);
    for (const [agent, file] of [["claude", "CLAUDE.md"], ["gemini", "GEMINI.md"], ["codex", "AGENTS.md"], ["opencode", "AGENTS.md"], ["qwen", "QWEN.md"], ["copilot", ".github/copilot-instructions.md"]]) {
      const path = join(repo, file);
      const before = existsSync(path) ? readFileSync(path, "utf8") : undefined;
      expect(await a2a(["setup", agent, "--scope", "project", "--primer"], o)).toMatchObject({ code: 0, stderr: "" });
      const after = readFileSync(path, "utf8");
      expect(after.startsWith(before ?? "")).toBe(true);
      expect(after.slice((before ?? "").length)).toMatch(/^\n*<!-- a2a:\d: [^\n]*-->\n[^\n]*run `a2a primer`[^\n]*\n<!-- \/a2a -->\n$/);
      const again = await a2a(["setup", agent, "--scope", "project", "--primer", "--json"], o);
      expect(JSON.parse(again.stdout).files.find((f: any) => f.path === path)).toMatchObject({ changed: false });
      expect(await a2a(["setup", agent, "--scope", "project", "--remove"], o)).toMatchObject({ code: 0, stderr: "" });
      if (before === undefined) expect(existsSync(path)).toBe(false);
      else expect(readFileSync(path, "utf8")).toBe(before);
    }
    expect(readFileSync(join(repo, "CLAUDE.md"), "utf8")).toBe(mine);
    // User scope: Claude Code's own file under ~/.claude.
    expect(await a2a(["setup", "claude", "--primer"], o)).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(home, ".claude", "CLAUDE.md"), "utf8")).toContain("a2a primer");
    expect(await a2a(["setup", "claude", "--remove"], o)).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(join(home, ".claude", "CLAUDE.md"))).toBe(false);
    // Qwen Code's under ~/.qwen.
    expect(await a2a(["setup", "qwen", "--primer"], o)).toMatchObject({ code: 0, stderr: "" });
    expect(readFileSync(join(home, ".qwen", "QWEN.md"), "utf8")).toContain("a2a primer");
    expect(await a2a(["setup", "qwen", "--remove"], o)).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(join(home, ".qwen", "QWEN.md"))).toBe(false);
  });
});
