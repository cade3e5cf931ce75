// install.sh never strands (issues 13, 20), run as a newcomer would on a machine without Bun:
// a fresh checkout (every tracked file as it is in the work tree, and nothing else: no
// node_modules, no dist), a new HOME with its own npm and Bun caches, PREFIX in a temp
// directory, and a PATH with node and the real npm but no bun. npm installs Bun into
// $PREFIX/bin (npm honours PREFIX), off PATH; install.sh must then install, build and run with
// that Bun. This reaches the npm registry, as a newcomer's install does.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ON_FILES, ROOT, tempDir } from "../harness/run";

setDefaultTimeout(300_000);

const BUN = process.execPath;
// The README's Install block (its first sh block under "## Install"): run by the test below.
const README_INSTALL = readFileSync(join(ROOT, "README.md"), "utf8").match(/^## Install\n[\s\S]*?^```sh\n([\s\S]*?)^```$/m)?.[1] ?? "";
const TOOLS = ["bash", "sh", "dirname", "mktemp", "rm", "cat", "mkdir", "cp", "mv", "ln", "readlink", "env", "chmod", "uname", "tr", "sed", "grep", "head", "tail", "node", "npm"];

function sandbox(root: string) {
  const repo = join(root, "repo");
  const tracked = Bun.spawnSync(["git", "ls-files", "-z"], { cwd: ROOT }).stdout.toString().split("\0").filter(Boolean);
  for (const f of tracked) if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(repo, f), { recursive: true });
  const home = join(root, "home");
  const tools = join(root, "tools"); // the usual commands, node and npm, but no bun
  const prefix = join(root, "prefix");
  for (const d of [home, tools]) mkdirSync(d, { recursive: true });
  for (const t of TOOLS) {
    const path = Bun.which(t);
    if (path) symlinkSync(path, join(tools, t));
  }
  // The machine's own settings (a proxy, its CA certificates) as a newcomer has them; nothing of
  // this test run's Bun, npm or a2a.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(A2A_|BUN_|npm_|PATH$|HOME$|PREFIX$)/i.test(k))) as Record<string, string>;
  const env = { ...inherited, SHELL: "/usr/bin/zsh", HOME: home, PATH: tools, PREFIX: prefix, npm_config_cache: join(home, ".npm"), npm_config_update_notifier: "false", LANG: "C.UTF-8" };
  return { repo, home, prefix, env };
}

async function run(cmd: string[], cwd: string, env: Record<string, string>) {
  const p = Bun.spawn({ cmd, cwd, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// The installer, not an engine: it runs once, in the file engine's pass.
describe.if(ON_FILES)("install.sh", () => {
  test("PREFIX, no bun on PATH: bun from npm is used by its full path; quiet build; version and next steps; then --uninstall", async () => {
    using d = tempDir("a2a-install-");
    const s = sandbox(d.path);
    expect(Bun.which("bun", { PATH: s.env.PATH })).toBeNull(); // the newcomer has node and npm, no bun
    expect(Bun.which("node", { PATH: s.env.PATH })).not.toBeNull();
    const r = await run(["bash", "./install.sh"], s.repo, s.env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    // A user's install takes what the binary needs, not the tests' tools (Claude Code alone is
    // hundreds of MB): those come with the first `bun test`.
    expect(readdirSync(join(s.repo, "node_modules")).sort()).not.toContain("playwright-core");
    expect(existsSync(join(s.repo, "node_modules", "@anthropic-ai", "claude-code"))).toBe(false);
    const lines = r.stdout.trimEnd().split("\n");
    // Only install.sh's own lines: nothing of npm's, bun install's or the build's.
    for (const l of lines) expect(l).toStartWith("install.sh: ");
    expect(r.stdout).not.toContain("bun build");
    expect(r.stdout).toContain(`install.sh: Bun is in ${s.prefix}/bin, which is not on your PATH: using it from there\n`);
    const bin = join(s.prefix, "bin", "a2a");
    expect(lines.slice(-3)).toEqual([
      "install.sh: next:",
      `install.sh:   ${bin} --help            # the commands, with examples`,
      `install.sh:   ${bin} setup claude      # give Claude Code the tools and the mail hooks (claude mcp add -s user a2a -- ${bin} mcp for the server alone)`,
    ]);
    expect(r.stdout).toContain(`install.sh: installed a2a 0.1.0 at ${bin}\ninstall.sh: checking this machine (a2a doctor):\n`);
    // install.sh ends by running a2a doctor: its check lines, indented under install.sh's own.
    expect(r.stdout).toMatch(/^install\.sh: {3}.*store/m);
    expect(r.stdout).toContain(`is not on your PATH; add it with:`);
    // install.sh and a2a doctor (which it runs) give the same line, for the user's shell.
    const pathLine = `echo 'export PATH="${s.prefix}/bin:$PATH"' >> ~/.zshrc && export PATH="${s.prefix}/bin:$PATH"`;
    expect(r.stdout).toContain(`install.sh:   ${pathLine}\n`);
    expect(r.stdout).toContain(`fix: ${pathLine}\n`);
    // The binary runs, and the completion is where the script said.
    expect((await run([bin, "--version"], s.home, s.env)).stdout).toBe("0.1.0\n");
    const comp = join(s.prefix, "share/bash-completion/completions/a2a");
    expect(r.stdout).toContain(`install.sh: bash completion: ${comp}`);
    expect(existsSync(comp)).toBe(true);

    // Re-running is safe, and finds bun where it left it.
    const again = await run(["bash", "./install.sh"], s.repo, s.env);
    expect(again.code).toBe(0);

    // A store, so --uninstall has something to leave; Claude Code set up with this binary, and
    // a setting of the user's own beside a2a's.
    expect((await run([bin, "publish", "kept", "x", "-q"], s.home, s.env)).code).toBe(0);
    expect((await run([bin, "setup", "claude", "-q"], s.home, s.env)).code).toBe(0);
    expect((await run([bin, "setup", "codex", "-q"], s.home, s.env)).code).toBe(0);
    expect((await run([bin, "setup", "qwen", "-q"], s.home, s.env)).code).toBe(0);
    expect((await run([bin, "setup", "copilot", "-q"], s.home, s.env)).code).toBe(0);
    const codexToml = join(s.home, ".codex", "config.toml");
    expect(readFileSync(codexToml, "utf8")).toContain("[mcp_servers.a2a]");
    const settings = join(s.home, ".claude", "settings.json");
    const claudeJson = join(s.home, ".claude.json");
    const mine = JSON.parse(readFileSync(settings, "utf8"));
    writeFileSync(settings, JSON.stringify({ ...mine, theme: "dark" }));
    expect(readFileSync(settings, "utf8")).toContain(`${bin} hook`);
    expect(JSON.parse(readFileSync(claudeJson, "utf8")).mcpServers.a2a.command).toBe(bin);
    const u = await run(["bash", "./install.sh", "--uninstall"], s.repo, s.env);
    expect({ code: u.code, stderr: u.stderr }).toEqual({ code: 0, stderr: "" });
    // Nothing of a2a's is left in the agents' settings to run a binary that is gone.
    expect(u.stdout).toContain("install.sh: claude: a2a removed from Claude Code");
    expect(JSON.parse(readFileSync(settings, "utf8"))).toEqual({ theme: "dark" });
    // ~/.claude.json was setup's own (there was none): gone with its last a2a entry (issue 33.7).
    expect(existsSync(claudeJson)).toBe(false);
    // Every agent's, not only Claude Code's.
    expect(u.stdout).toContain("install.sh: codex: a2a removed from Codex CLI");
    expect(existsSync(codexToml)).toBe(false); // setup's own file too
    expect(u.stdout).toContain("install.sh: qwen: a2a removed from Qwen Code");
    expect(u.stdout).toContain("install.sh: copilot: a2a removed from Copilot CLI");
    expect(existsSync(join(s.home, ".copilot", "mcp-config.json"))).toBe(false);
    expect(existsSync(join(s.home, ".qwen", "settings.json"))).toBe(false);
    expect(u.stdout).toContain(`install.sh: removed ${bin}\n`);
    expect(u.stdout).toContain(`install.sh: removed ${comp}\n`);
    expect(u.stdout).toContain(`left in place: your store (${s.home}/.a2a`);
    expect(existsSync(bin)).toBe(false);
    expect(existsSync(comp)).toBe(false);
    expect(existsSync(join(s.home, ".a2a", "slots", "kept.json"))).toBe(true);
  });

  // Issue 33: npm's global prefix off PATH and no PREFIX, so Bun lands in a directory the PATH
  // line does not add. The README's Install block, run as written in one shell with the PATH
  // line install.sh printed, then the README's test command: `bun` must be there. A re-run uses
  // that Bun instead of installing it again; --uninstall takes the link away, not Bun.
  test("the README's Install block, npm's prefix off PATH: bun test works after the PATH line; a re-run installs no Bun", async () => {
    using d = tempDir("a2a-install-");
    const s = sandbox(d.path);
    const npmPrefix = join(d.path, "npm-global");
    const { PREFIX: _, ...rest } = s.env;
    const env = { ...rest, SHELL: "/bin/bash", npm_config_prefix: npmPrefix };
    const bindir = join(s.home, ".local", "bin");
    const block = README_INSTALL.split("\n").filter((l) => l.trim() !== "");
    expect(block[0]).toStartWith("./install.sh");
    // A tiny suite of its own: the README's `bun test` in the checkout would fetch the tests' tools.
    const script = [
      "set -e",
      `out=$(${block[0]}\n)`,
      'printf "%s\\n" "$out"',
      `eval "$(printf '%s\\n' "$out" | sed -n 's/^install\\.sh:   \\(echo .*bashrc && export PATH=.*\\)$/\\1/p')"`,
      ...block.slice(1),
      'printf "bun is %s\\n" "$(command -v bun)"',
      `mkdir -p "$HOME/suite" && cd "$HOME/suite"`,
      `echo 'import { expect, test } from "bun:test"; test("ok", () => expect(1).toBe(1));' > ok.test.ts`,
      "bun test 2>&1",
    ].join("\n");
    const r = await run(["bash", "-c", script], s.repo, env);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain("install.sh: installing Bun with npm");
    expect(r.stdout).toContain(`install.sh: Bun is in ${npmPrefix}/bin, which is not on your PATH: using it from there\n`);
    expect(r.stdout).toContain(`install.sh: linked ${bindir}/bun to ${npmPrefix}/bin/bun (for bun test)\n`);
    expect(r.stdout).toContain("\n0.1.0\n"); // the README's a2a --version
    expect(r.stdout).toContain(`bun is ${bindir}/bun\n`);
    expect(r.stdout).toMatch(/^ 1 pass$/m);
    expect(readFileSync(join(s.home, ".bashrc"), "utf8")).toBe(`export PATH="${bindir}:$PATH"\n`);

    const again = await run(["bash", "./install.sh"], s.repo, env);
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    expect(again.stdout).not.toContain("installing Bun");
    expect(again.stdout).toContain(`install.sh: using bun ${Bun.spawnSync([join(npmPrefix, "bin", "bun"), "--version"]).stdout.toString().trim()} (${bindir}/bun)\n`);

    // Without the link, a re-run still finds npm's Bun, and links it again.
    rmSync(join(bindir, "bun"));
    const third = await run(["bash", "./install.sh"], s.repo, env);
    expect({ code: third.code, stderr: third.stderr }).toEqual({ code: 0, stderr: "" });
    expect(third.stdout).not.toContain("installing Bun");
    expect(third.stdout).toContain(`install.sh: using the Bun npm installed earlier, in ${npmPrefix}/bin (not on your PATH)\n`);
    expect(third.stdout).toContain(`install.sh: linked ${bindir}/bun to ${npmPrefix}/bin/bun (for bun test)\n`);

    const u = await run(["bash", "./install.sh", "--uninstall"], s.repo, env);
    expect({ code: u.code, stderr: u.stderr }).toEqual({ code: 0, stderr: "" });
    expect(u.stdout).toContain(`install.sh: removed ${bindir}/bun\n`);
    expect(existsSync(join(bindir, "bun"))).toBe(false);
    expect((await run([join(npmPrefix, "bin", "bun"), "--version"], s.home, env)).code).toBe(0); // Bun stays
  });

  test("a failing build shows its output and fails; an unknown argument is refused", async () => {
    using d = tempDir("a2a-install-");
    const s = sandbox(d.path);
    writeFileSync(join(s.repo, "cli", "main.ts"), "import { nothing } from './no-such-module';\nnothing();\n");
    const bunDir = join(d.path, "bun-on-path");
    mkdirSync(bunDir);
    symlinkSync(BUN, join(bunDir, "bun"));
    const env = { ...s.env, PATH: `${s.env.PATH}:${bunDir}` }; // bun on PATH this time
    const r = await run(["bash", "./install.sh"], s.repo, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no-such-module");
    expect(r.stderr).toEndWith("install.sh: the build failed (its output is above)\n");
    expect(existsSync(join(s.prefix, "bin", "a2a"))).toBe(false);
    const bad = await run(["bash", "./install.sh", "--bogus"], s.repo, env);
    expect([bad.code, bad.stderr]).toEqual([1, "install.sh: unknown argument '--bogus': run ./install.sh, or ./install.sh --uninstall\n"]);
  });
});
