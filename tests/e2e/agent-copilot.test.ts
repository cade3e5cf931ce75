// GitHub Copilot CLI on the bus, with the real @github/copilot (1.0.102, a devDependency; its
// engine is a native binary that unpacks ~235 MB into $XDG_CACHE_HOME/copilot on its first start,
// kept under node_modules/.cache here): `a2a setup copilot` in a sandbox HOME, checked by `copilot
// mcp list` and a2a doctor, and real non-interactive sessions (`copilot -p`) offline
// (COPILOT_OFFLINE, its BYOK provider pointed at the Chat Completions stand-in,
// fixtures/openai-chat.ts) that call a2a's MCP tools while a2a's hooks (Claude Code's dialect
// under PascalCase names: SessionStart, UserPromptSubmit, Stop, PreToolUse) bring mail in and keep a
// reserved file unwritten.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { stripJsonComments } from "../../cli/agents/edit";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, BIN, childEnv, ROOT, tempDir, testStore, type RunResult } from "../harness/run";
import { newText, standIn, toolNames, toolResults, type Request } from "./fixtures/openai-chat";

setDefaultTimeout(90_000);

const sh = (w: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(w) ? w : `'${w}'`);
const COPILOT = join(ROOT, "node_modules", ".bin", "copilot");

function skipped(what: string): boolean {
  if (existsSync(COPILOT)) return false;
  console.log(`SKIPPED ${what}: ${COPILOT} is missing (bun install installs @github/copilot)`);
  return true;
}

interface Sandbox {
  home: string;
  store: string;
  mcp: string; // ~/.copilot/mcp-config.json
  settings: string; // ~/.copilot/settings.json
}

function sandbox(path: string, store: string, settings?: string): Sandbox {
  const home = join(path, "home");
  mkdirSync(join(home, ".copilot"), { recursive: true });
  const o = { home, store, mcp: join(home, ".copilot", "mcp-config.json"), settings: join(home, ".copilot", "settings.json") };
  if (settings !== undefined) writeFileSync(o.settings, settings);
  return o;
}

// Copilot CLI's environment: the sandbox HOME, a2a on PATH, offline with its BYOK provider at the
// stand-in (a closed port when none: never GitHub's), its unpacked engine shared by the tests.
function copilotEnv(o: Sandbox, apiUrl = "http://127.0.0.1:9/v1", path = `${dirname(BIN)}:${process.env.PATH}`) {
  return childEnv({ dir: o.store, env: { HOME: o.home, PATH: path, COPILOT_HOME: undefined, XDG_CACHE_HOME: join(ROOT, "node_modules", ".cache"), COPILOT_OFFLINE: "true", COPILOT_PROVIDER_BASE_URL: apiUrl, COPILOT_PROVIDER_API_KEY: "test-key-offline", COPILOT_MODEL: "gpt-4.1", COPILOT_AUTO_UPDATE: "false", GH_TOKEN: undefined, GITHUB_TOKEN: undefined, COPILOT_GITHUB_TOKEN: undefined, NO_COLOR: "1" } });
}

async function run(cmd: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const p = Bun.spawn({ cmd, cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

const copilot = (args: string[], cwd: string, o: Sandbox, apiUrl?: string) => run([COPILOT, ...args], cwd, copilotEnv(o, apiUrl));
const mcpList = async (cwd: string, o: Sandbox) => {
  const r = await copilot(["mcp", "list"], cwd, o);
  return r.stdout + r.stderr;
};
// One non-interactive session; every tool allowed, the folder trusted for this run.
const session = (prompt: string, cwd: string, o: Sandbox, apiUrl: string) => copilot(["-p", prompt, "--allow-all-tools", "--trust-folder", "--no-color"], cwd, o, apiUrl);
const setup = (o: Sandbox, args: string[] = [], cwd?: string) => a2a(["setup", "copilot", ...args], { dir: o.store, env: { HOME: o.home, COPILOT_HOME: undefined }, cwd });

const USER_SETTINGS = `{
  // my own settings, with comments
  "theme": "dark", // mine
  "hooks": {
    "PostToolUse": [{ "hooks": [{ "type": "command", "command": "true" }] }] /* not a2a's */
  }
}
`;

describe("a2a setup copilot with the real Copilot CLI", () => {
  test("copilot mcp list shows a2a; comments and the user's own hooks kept; Claude Code's hook dialect under PascalCase names; twice and --dry-run change nothing; --remove restores settings.json byte for byte and deletes the mcp-config.json it made", async () => {
    if (skipped("copilot mcp list")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, USER_SETTINGS);
    const dry = await setup(o, ["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);
    expect(existsSync(o.mcp)).toBe(false);

    const set = await setup(o);
    expect(set.code).toBe(0);
    const text = readFileSync(o.settings, "utf8");
    for (const kept of ["// my own settings, with comments", "// mine", "/* not a2a's */"]) expect(text).toContain(kept);
    expect(JSON.parse(readFileSync(o.mcp, "utf8")).mcpServers.a2a).toEqual({ type: "local", tools: ["*"], command: BIN, args: ["--dir", store.path, "mcp"] });
    const hooks = JSON.parse(stripJsonComments(text)).hooks; // a2a's own reader: a "//" inside a string (a store URL) is no comment
    expect(Object.keys(hooks)).toEqual(["PostToolUse", "SessionStart", "UserPromptSubmit", "Stop", "PreToolUse", "Notification"]);
    expect(hooks.Stop[0].hooks[0]).toEqual({ type: "command", command: `${BIN} --dir ${sh(store.path)} hook stop --agent copilot`, timeout: 10 });
    expect(hooks.PreToolUse[0].matcher).toBe("Write|Edit|create|edit");
    expect((await setup(o)).stdout).toContain("unchanged (already set up)");
    expect(readFileSync(o.settings, "utf8")).toBe(text);

    expect(await mcpList(proj, o)).toMatch(/^User servers:\n\s+a2a \(local\)$/m);

    const removed = await setup(o, ["--remove"]);
    expect(removed.code).toBe(0);
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);
    expect(existsSync(o.mcp)).toBe(false);
  });

  test("a2a doctor: Copilot CLI found on PATH with its version, then registered and hooked; --live asks copilot mcp list; disableAllHooks is named", async () => {
    if (skipped("a2a doctor for Copilot CLI")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path);
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    symlinkSync(COPILOT, join(bin, "copilot"));
    const path = `${bin}:${dirname(BIN)}:${dirname(process.execPath)}:/usr/bin:/bin`;
    const doctor = async (...more: string[]) => JSON.parse((await run([BIN, "doctor", "--json", ...more], proj, copilotEnv(o, undefined, path))).stdout).checks.filter((c: any) => c.check.startsWith("Copilot CLI"));
    const before = await doctor();
    expect(before.map((c: any) => [c.check, c.level])).toEqual([["Copilot CLI", "note"]]);
    expect(before[0].detail).toMatch(/version 1\.0\.102; a2a is not set up for it/);
    expect(before[0].fix).toBe("to use it with a2a: a2a setup copilot");
    expect((await setup(o)).code).toBe(0);
    const files = await doctor();
    expect(files[1]).toMatchObject({ check: "Copilot CLI MCP", level: "ok", detail: expect.stringMatching(/^a2a is registered \[scope: user \(.*mcp-config\.json\)\]/) });
    expect(files[2]).toMatchObject({ check: "Copilot CLI hooks", level: "ok", detail: expect.stringMatching(/^installed: SessionStart: .*hook session-start --agent copilot/) });
    expect((await doctor("--live"))[1]).toMatchObject({ check: "Copilot CLI MCP", level: "ok", detail: expect.stringMatching(/^copilot mcp list shows a2a \[user \(/) });
    writeFileSync(o.settings, readFileSync(o.settings, "utf8").replace("{", '{ "disableAllHooks": true,'));
    expect((await doctor()).find((c: any) => c.check === "Copilot CLI hooks" && c.level === "problem")).toMatchObject({ detail: `disableAllHooks is true in ${o.settings}: Copilot CLI runs no hook` });
  });

  test("--scope project writes .github/mcp.json and .github/copilot/settings.json at the git root with the bare a2a command; a trusted session there starts the server and runs the hooks; --remove takes both out, and the directories it made", async () => {
    if (skipped("copilot mcp list (project scope)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "sub"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path);
    const r = await setup(o, ["--scope", "project", "--worker", "2m"], join(repo, "sub"));
    expect(r.code).toBe(0);
    expect(JSON.parse(readFileSync(join(repo, ".github", "mcp.json"), "utf8")).mcpServers.a2a).toEqual({ type: "local", tools: ["*"], command: "a2a", args: ["--dir", store.path, "mcp"] });
    expect(JSON.parse(readFileSync(join(repo, ".github", "copilot", "settings.json"), "utf8")).hooks.Stop[0].hooks[0]).toEqual({ type: "command", command: `a2a --dir ${sh(store.path)} hook stop --agent copilot --wait 120s`, timeout: 150 });
    expect(existsSync(o.mcp)).toBe(false);
    // A session in the trusted repository starts the project's server and runs its hooks (set up
    // again without --worker, whose stop would wait 2 minutes for mail).
    expect((await setup(o, ["--scope", "project"], repo)).code).toBe(0);
    const api = standIn((r) => (inSession(r) && !toolResults(r).length ? [{ tool: "a2a-whoami", input: {} }] : [{ text: "ok" }]));
    try {
      const env = { ...copilotEnv(o, api.url), PATH: `${join(d.path, "bin")}:${dirname(BIN)}:${process.env.PATH}` };
      mkdirSync(join(d.path, "bin"));
      symlinkSync(BIN, join(d.path, "bin", "a2a")); // the bare a2a of the project's files
      expect((await run([COPILOT, "-p", "who am I?", "--allow-all-tools", "--trust-folder"], repo, env)).code).toBe(0);
      expect(api.requests.filter(inSession).length).toBeGreaterThan(0);
      expect(api.requests.some((r) => /this session is \\+"repo\\+"/.test(JSON.stringify(r.body.messages)))).toBe(true);
    } finally {
      api.close();
    }
    expect((await setup(o, ["--scope", "project", "--remove"], repo)).code).toBe(0);
    expect(existsSync(join(repo, ".github"))).toBe(false);
  });
});

const inSession = (r: Request) => toolNames(r).includes("a2a-whoami");

describe("real Copilot CLI sessions on the bus (offline, against the Chat Completions stand-in)", () => {
  test("the session's name is announced at start; mail sent mid-turn holds the stop (Stop) and reaches the next request; check_messages reads it; a2a peers shows Copilot CLI", async () => {
    if (skipped("a Copilot CLI session")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path);
    expect((await setup(o)).code).toBe(0);
    let name = "";
    let peers: any[] = [];
    const api = standIn(async (r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (/unread a2a message/.test(newText(r)) && !results.length) return [{ tool: "a2a-check_messages", input: {} }];
      if (results.some((t) => /please review PR 7/.test(t))) return [{ text: "read my mail" }];
      if (!results.length) return [{ tool: "a2a-whoami", input: {} }];
      name = /"name":\s*"([^"\\]+)"/.exec(results[0].replace(/\\"/g, '"'))?.[1] ?? "";
      if (!name) throw new Error(`whoami answered ${results[0]}`);
      peers = JSON.parse((await a2a(["peers", "--json"], { dir: o.store, cwd: proj })).stdout).peers;
      const sent = await a2a(["send", name, "please review PR 7", "--as", "alice"], { dir: o.store });
      if (sent.code !== 0) throw new Error(sent.stderr);
      return [{ text: "nothing else to do" }];
    });
    try {
      const s = await session("who am I?", proj, o, api.url);
      expect(s.code).toBe(0);
      expect(name).toBe("proj");
      const turns = api.requests.filter(inSession);
      expect(JSON.stringify(turns[0].body.messages)).toMatch(/this session is \\+"proj\\+"/);
      expect(peers.find((p) => p.name === "proj")).toMatchObject({ agent: "Copilot CLI", client: expect.stringMatching(/^copilot-cli /) });
      const held = turns.find((r) => /unread a2a message/.test(newText(r)))!;
      expect(held).toBeDefined();
      expect(newText(held)).toMatch(/1 unread a2a message for \\+"proj\\+" from alice: call check_messages/);
      expect(JSON.parse((await a2a(["whoami", "--as", "proj", "--json"], { dir: o.store })).stdout).unread).toBe(0);
      expect(s.stdout).toContain("read my mail");
    } finally {
      api.close();
    }
  });

  test("create of a file another agent reserved is denied by the PreToolUse hook; the session then messages the holder with send_message", async () => {
    if (skipped("a Copilot CLI session (reservations)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path);
    expect((await setup(o)).code).toBe(0);
    expect((await a2a(["reserve", "src/**", "--as", "bob", "--reason", "refactoring the API"], { dir: o.store, cwd: repo })).code).toBe(0);
    const target = join(repo, "src", "api.ts");
    const api = standIn((r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (!results.length) return [{ tool: "create", input: { path: target, file_text: "export const x = 1;\n" } }];
      if (/reserved by bob/.test(results[0])) return [{ tool: "a2a-send_message", input: { to_id: "bob", message: "may I edit src/api.ts after you?" } }];
      return [{ text: "done" }];
    });
    try {
      const s = await session("write src/api.ts", repo, o, api.url);
      expect(s.code).toBe(0);
      const denied = api.requests.find((r) => toolResults(r).some((t) => /reserved by bob/.test(t)))!;
      expect(denied).toBeDefined();
      expect(toolResults(denied)[0]).toMatch(/src\/api\.ts is reserved by bob \(pattern src\/\*\*, exclusive, their reason: \\*"refactoring the API\\*"\)/);
      expect(existsSync(target)).toBe(false);
      const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: o.store })).stdout);
      expect(JSON.stringify(inbox)).toContain("may I edit src/api.ts after you?");
    } finally {
      api.close();
    }
  });
});
