// opencode (the opencode-ai devDependency) with a2a: `a2a setup opencode` through the compiled
// binary, checked by the real CLI (`opencode mcp list`), and real sessions (`opencode run`, and
// `opencode serve` for the idle continuation) offline against the Chat Completions stand-in
// (fixtures/openai-chat.ts) as a custom provider: the a2a MCP tools called, and a2a's plugin
// bringing mail into the next model request, prompting an idle session while mail waits, and
// refusing the edit of a reserved file. Everything opencode writes goes under a sandbox HOME.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, childEnv, readUntil, ROOT, tempDir, testStore } from "../harness/run";
import { standIn, systemText, toolNames, toolResults, type Request } from "./fixtures/openai-chat";

setDefaultTimeout(120_000);

const OPENCODE = join(ROOT, "node_modules", ".bin", "opencode");

function skipped(what: string): boolean {
  if (existsSync(OPENCODE)) return false;
  console.log(`SKIPPED ${what}: ${OPENCODE} is missing (bun install installs opencode-ai)`);
  return true;
}

interface Sandbox {
  home: string;
  config: string; // ~/.config/opencode
  proj: string; // a git repository
  store: string;
}

// opencode installs @opencode-ai/plugin into each config directory it reads (from the npm
// registry, ~30 s, which plugin loading waits for) unless node_modules exists and the lock file
// lists it: so each directory gets both, and no test downloads anything.
function skipPluginInstall(dir: string): void {
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  writeFileSync(join(dir, "package-lock.json"), JSON.stringify({ packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } } }));
}

function sandbox(path: string, store: string): Sandbox {
  const home = join(path, "home");
  const config = join(home, ".config", "opencode");
  const proj = join(path, "proj");
  mkdirSync(config, { recursive: true });
  mkdirSync(join(proj, "src"), { recursive: true });
  const r = Bun.spawnSync({ cmd: ["git", "init", "-q", proj], stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git init: ${r.stderr}`);
  writeFileSync(join(proj, "src", "api.ts"), "export {};\n");
  skipPluginInstall(config);
  return { home, config, proj, store };
}

// The environment of opencode (and of a2a setup) in the sandbox: its HOME, no XDG_* or OPENCODE_*
// of the developer's, no update check or model list download; PWD is the directory opencode works in.
function env(s: Sandbox, cwd: string): Record<string, string | undefined> {
  const e: Record<string, string | undefined> = { HOME: s.home, PWD: cwd, PATH: `${join(BIN, "..")}:${process.env.PATH}`, OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1" };
  for (const k of Object.keys(process.env)) if (k.startsWith("XDG_") || (k.startsWith("OPENCODE") && !(k in e))) e[k] = undefined;
  return e;
}

async function opencode(args: string[], cwd: string, s: Sandbox): Promise<{ stdout: string; stderr: string; code: number }> {
  const p = Bun.spawn({ cmd: [OPENCODE, ...args], cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: childEnv({ dir: s.store, env: env(s, cwd) }) });
  const timer = setTimeout(() => p.kill(), 100_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { stdout, stderr, code };
}

const setup = (s: Sandbox, extra: string[] = [], cwd = s.proj) => a2a(["setup", "opencode", ...extra], { dir: s.store, cwd, env: env(s, cwd) });

// `opencode mcp list`'s line for a2a, without colours ("✓ a2a connected"), or undefined.
async function listed(s: Sandbox, cwd = s.proj): Promise<string | undefined> {
  const r = await opencode(["mcp", "list"], cwd, s);
  return r.stdout.replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => / a2a( |$)/.test(l));
}

// The stand-in as opencode's model: a custom provider (@ai-sdk/openai-compatible, bundled in opencode).
const provider = (url: string) => ({
  provider: { standin: { npm: "@ai-sdk/openai-compatible", name: "Stand-in", options: { baseURL: url, apiKey: "test-key-offline" }, models: { m: { name: "m", tool_call: true } } } },
  model: "standin/m",
});

// A user's opencode.json with comments, a trailing comma and settings of their own.
const USER_CONFIG = `{
  // my opencode settings
  "$schema": "https://opencode.ai/config.json",
  "theme": "tokyonight", /* the dark one */
  "mcp": {
    "other": { "type": "local", "command": ["true"], "enabled": false },
  },
}
`;

const byTools = (r: Request) => toolNames(r).includes("a2a_whoami"); // a session's request (not the title's)

describe("opencode: a2a setup opencode", () => {
  test("opencode mcp list shows a2a connected; comments and settings kept; twice and --dry-run change nothing; --remove restores the file", async () => {
    if (skipped("setup and opencode mcp list")) return;
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    const file = join(s.config, "opencode.json");
    writeFileSync(file, USER_CONFIG);
    expect(await listed(s)).toBeUndefined();

    const dry = await setup(s, ["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(readFileSync(file, "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(s.config, "plugins", "a2a.js"))).toBe(false);

    const r = await setup(s);
    expect(r.code).toBe(0);
    const text = readFileSync(file, "utf8");
    for (const kept of ["// my opencode settings", `"theme": "tokyonight", /* the dark one */`, `"other": { "type": "local", "command": ["true"], "enabled": false },`]) expect(text).toContain(kept);
    expect(readFileSync(join(s.config, "plugins", "a2a.js"), "utf8")).toContain(JSON.stringify([BIN, "--dir", s.store]));
    expect(readdirSync(s.config).filter((f) => f.startsWith("opencode.json.a2a-backup-"))).toHaveLength(1);
    expect(await listed(s)).toMatch(/✓ a2a connected/);

    const again = await setup(s);
    expect(again.stdout).toMatch(/opencode\.json: unchanged \(already set up\)\n.*a2a\.js: unchanged \(already set up\)/);
    expect(readFileSync(file, "utf8")).toBe(text);

    const rm = await setup(s, ["--remove"]);
    expect(rm.code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(s.config, "plugins", "a2a.js"))).toBe(false);
    expect(await listed(s)).toBeUndefined();
  });

  test("a broken opencode.json, or a plugin of the user's at a2a's path, is left alone: exit 2, one line", async () => {
    if (skipped("broken config")) return;
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    const file = join(s.config, "opencode.json");
    writeFileSync(file, `{ "theme": "x", `);
    const r = await setup(s);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`${file} is not valid JSON`);
    expect(readFileSync(file, "utf8")).toBe(`{ "theme": "x", `);
    expect(existsSync(join(s.config, "plugins"))).toBe(false);

    writeFileSync(file, "{}\n");
    mkdirSync(join(s.config, "plugins"));
    writeFileSync(join(s.config, "plugins", "a2a.js"), "export const Mine = async () => ({});\n");
    const mine = await setup(s);
    expect(mine.code).toBe(2);
    expect(mine.stderr).toContain("a2a.js is not a2a's plugin");
    expect(readFileSync(file, "utf8")).toBe("{}\n");
    expect(readFileSync(join(s.config, "plugins", "a2a.js"), "utf8")).toBe("export const Mine = async () => ({});\n");
  });

  test("--scope project: opencode.json at the git root and .opencode/plugins/a2a.js; opencode mcp list there shows a2a connected", async () => {
    if (skipped("--scope project")) return;
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    skipPluginInstall(join(s.proj, ".opencode"));
    const sub = join(s.proj, "src");
    const r = await setup(s, ["--scope", "project"], sub);
    expect(r.code).toBe(0);
    const config = JSON.parse(readFileSync(join(s.proj, "opencode.json"), "utf8"));
    expect(config.mcp.a2a.command).toEqual(["a2a", "--dir", s.store, "mcp"]); // the bare name: a team's a2a lives elsewhere
    expect(readFileSync(join(s.proj, ".opencode", "plugins", "a2a.js"), "utf8")).toContain(`const A2A = ${JSON.stringify(["a2a", "--dir", s.store])};`);
    expect(existsSync(join(s.config, "opencode.json"))).toBe(false);
    expect(await listed(s, sub)).toMatch(/✓ a2a connected/);
    expect((await setup(s, ["--scope", "project", "--remove"], sub)).code).toBe(0);
    expect(existsSync(join(s.proj, ".opencode", "plugins", "a2a.js"))).toBe(false);
    expect(await listed(s, sub)).toBeUndefined();
  });
});
