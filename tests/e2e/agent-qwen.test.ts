// Qwen Code on the bus, with the real @qwen-code/qwen-code (0.24.4, a devDependency): `a2a setup
// qwen` in a sandbox HOME, checked by `qwen mcp list` and a2a doctor, and real non-interactive
// sessions (`qwen -p`) against the Chat Completions stand-in (fixtures/openai-chat.ts, Qwen
// Code's "openai" auth type) that call a2a's MCP tools while a2a's hooks (Claude Code's dialect:
// SessionStart, UserPromptSubmit, Stop, PreToolUse) bring mail in and keep a reserved file unwritten.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, BIN, childEnv, ROOT, tempDir, testStore, type RunResult } from "../harness/run";
import { stripJsonComments } from "../../cli/agents/edit";
import { newText, standIn, toolNames, toolResults, type Request } from "./fixtures/openai-chat";

setDefaultTimeout(90_000);

const sh = (w: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(w) ? w : `'${w}'`);
const QWEN = join(ROOT, "node_modules", ".bin", "qwen");

function skipped(what: string): boolean {
  if (existsSync(QWEN)) return false;
  console.log(`SKIPPED ${what}: ${QWEN} is missing (bun install installs @qwen-code/qwen-code)`);
  return true;
}

interface Sandbox {
  home: string;
  store: string;
  settings: string; // ~/.qwen/settings.json
}

function sandbox(path: string, store: string, settings: string): Sandbox {
  const home = join(path, "home");
  mkdirSync(join(home, ".qwen"), { recursive: true });
  const file = join(home, ".qwen", "settings.json");
  writeFileSync(file, settings);
  return { home, store, settings: file };
}

// Qwen Code's environment: the sandbox HOME, a2a on PATH, the "openai" auth type pointed at the
// stand-in (a closed port when none: never a real API).
function qwenEnv(o: Sandbox, apiUrl = "http://127.0.0.1:9/v1", path = `${dirname(BIN)}:${process.env.PATH}`) {
  return childEnv({ dir: o.store, env: { HOME: o.home, PATH: path, QWEN_HOME: undefined, OPENAI_API_KEY: "test-key-offline", OPENAI_BASE_URL: apiUrl, OPENAI_MODEL: "qwen3-coder-plus", GITHUB_SHA: undefined, NO_COLOR: "1" } });
}

async function run(cmd: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const p = Bun.spawn({ cmd, cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

const qwen = (args: string[], cwd: string, o: Sandbox, apiUrl?: string) => run([QWEN, ...args], cwd, qwenEnv(o, apiUrl));
// `qwen mcp list`, without the colours it prints whatever NO_COLOR says.
const mcpList = async (cwd: string, o: Sandbox) => {
  const r = await qwen(["mcp", "list"], cwd, o);
  return (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, "");
};
// One non-interactive session; yolo so the MCP and file tools run without a confirmation.
const session = (prompt: string, cwd: string, o: Sandbox, apiUrl: string) => qwen(["-p", prompt, "--auth-type", "openai", "--approval-mode", "yolo", "-o", "json"], cwd, o, apiUrl);
const setup = (o: Sandbox, args: string[] = [], cwd?: string) => a2a(["setup", "qwen", ...args], { dir: o.store, env: { HOME: o.home, QWEN_HOME: undefined }, cwd });

const USER_SETTINGS = `{
  "$version": 4,
  // my own settings, with comments
  "privacy": { "usageStatisticsEnabled": false }, // no statistics
  "mcpServers": {
    "other": { "command": "true" } /* not a2a's */
  }
}
`;

describe("a2a setup qwen with the real Qwen Code", () => {
  test("qwen mcp list shows a2a connected; comments and other settings kept; hooks in Claude Code's dialect with timeouts in seconds; twice and --dry-run change nothing; --remove restores the file byte for byte", async () => {
    if (skipped("qwen mcp list")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, USER_SETTINGS);
    const dry = await setup(o, ["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);

    const set = await setup(o);
    expect(set.code).toBe(0);
    const text = readFileSync(o.settings, "utf8");
    for (const kept of ["// my own settings, with comments", "// no statistics", "/* not a2a's */"]) expect(text).toContain(kept);
    const hooks = (ev: string) => JSON.parse(stripJsonComments(text)).hooks[ev];
    expect(hooks("Stop")[0].hooks[0]).toEqual({ type: "command", command: `${BIN} --dir ${sh(store.path)} hook stop --agent qwen`, timeout: 10 });
    expect(Object.keys(JSON.parse(stripJsonComments(text)).hooks)).toEqual(["SessionStart", "UserPromptSubmit", "Stop", "PreToolUse", "Notification"]);
    expect(hooks("PreToolUse")[0].matcher).toBe("^(write_file|edit|notebook_edit)$");
    expect((await setup(o)).stdout).toContain("unchanged (already set up)");
    expect(readFileSync(o.settings, "utf8")).toBe(text);

    expect(await mcpList(proj, o)).toMatch(new RegExp(`^✓ a2a: ${BIN} --dir \\S+ mcp \\(stdio\\) - Connected$`, "m"));

    const removed = await setup(o, ["--remove"]);
    expect(removed.code).toBe(0);
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);
  });

  test("a2a doctor: Qwen Code found on PATH with its version, then registered and hooked; --live asks qwen mcp list; disableAllHooks is named", async () => {
    if (skipped("a2a doctor for Qwen Code")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, USER_SETTINGS);
    // Only Qwen Code (and a2a) on PATH: doctor's other agents are not found, so not started.
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    symlinkSync(QWEN, join(bin, "qwen"));
    const path = `${bin}:${dirname(BIN)}:${dirname(process.execPath)}:/usr/bin:/bin`;
    const doctor = async (...more: string[]) => JSON.parse((await run([BIN, "doctor", "--json", ...more], proj, qwenEnv(o, undefined, path))).stdout).checks.filter((c: any) => c.check.startsWith("Qwen Code"));
    const before = await doctor();
    expect(before.map((c: any) => [c.check, c.level])).toEqual([["Qwen Code", "note"]]);
    expect(before[0].detail).toMatch(/version 0\.24\.4; a2a is not set up for it/);
    expect(before[0].fix).toBe("to use it with a2a: a2a setup qwen");
    expect((await setup(o)).code).toBe(0);
    const files = await doctor();
    expect(files[1]).toMatchObject({ check: "Qwen Code MCP", level: "ok", detail: expect.stringMatching(/^a2a is registered \[scope: user \(/) });
    expect(files[2]).toMatchObject({ check: "Qwen Code hooks", level: "ok", detail: expect.stringMatching(/^installed: SessionStart: .*hook session-start --agent qwen/) });
    const live = await doctor("--live");
    expect(live[1]).toMatchObject({ check: "Qwen Code MCP", level: "ok", detail: expect.stringMatching(/^✓ a2a: \S+ --dir \S+ mcp \(stdio\) - Connected \[user \(/) });
    writeFileSync(o.settings, readFileSync(o.settings, "utf8").replace("{", '{ "disableAllHooks": true,'));
    expect((await doctor()).find((c: any) => c.check === "Qwen Code hooks" && c.level === "problem")).toMatchObject({ detail: `disableAllHooks is true in ${o.settings}: Qwen Code runs no hook` });
  });

  test("a settings file that is not JSON is left alone: exit 2, one line naming it", async () => {
    using d = tempDir();
    using store = testStore();
    const broken = '{ "ui": { "theme": "GitHub" }\n';
    const o = sandbox(d.path, store.path, broken);
    const r = await setup(o);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([`a2a: ${o.settings} is not valid JSON: fix it (or move it aside), then run a2a setup qwen again; nothing was changed`]);
    expect(readFileSync(o.settings, "utf8")).toBe(broken);
  });

  test("--scope project writes .qwen/settings.json at the git root with the bare a2a command; --worker makes the stop hook wait; qwen mcp list lists it there", async () => {
    if (skipped("qwen mcp list (project scope)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "sub"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path, '{ "$version": 4 }\n');
    const r = await setup(o, ["--scope", "project", "--worker", "2m"], join(repo, "sub"));
    expect(r.code).toBe(0);
    const project = JSON.parse(readFileSync(join(repo, ".qwen", "settings.json"), "utf8"));
    expect(project.mcpServers.a2a).toEqual({ alwaysLoadTools: true, command: "a2a", args: ["--dir", store.path, "mcp"] });
    expect(r.stdout).toContain("Qwen Code starts the project's a2a server once each user approved it: qwen mcp approve a2a");
    expect(project.hooks.Stop[0].hooks[0]).toEqual({ type: "command", command: `a2a --dir ${sh(store.path)} hook stop --agent qwen --wait 120s`, timeout: 150 });
    expect(readFileSync(o.settings, "utf8")).toBe('{ "$version": 4 }\n');
    // A project's server waits for each user's approval; once given, it connects.
    expect(await mcpList(repo, o)).toMatch(/^● a2a: a2a --dir \S+ mcp \(stdio\) - Pending approval$/m);
    const pending = JSON.parse((await run([BIN, "doctor", "--json", "--live"], repo, qwenEnv(o, undefined, `${dirname(QWEN)}:${dirname(BIN)}:${process.env.PATH}`))).stdout).checks.find((c: any) => c.check === "Qwen Code MCP");
    expect(pending).toMatchObject({ level: "problem", detail: expect.stringMatching(/Pending approval: Qwen Code starts a project's MCP server only once each user approved it$/), fix: `qwen mcp approve a2a (in ${repo})` });
    expect((await qwen(["mcp", "approve", "a2a"], repo, o)).code).toBe(0);
    expect(await mcpList(repo, o)).toMatch(/^✓ a2a: a2a --dir \S+ mcp \(stdio\) - Connected$/m);
  });
});

const inSession = (r: Request) => toolNames(r).includes("mcp__a2a__whoami");

describe("real Qwen Code sessions on the bus (offline, against the Chat Completions stand-in)", () => {
  test("the session's name is announced at start; mail sent mid-turn holds the stop (Stop) and reaches the next request; check_messages reads it; a2a peers shows Qwen Code", async () => {
    if (skipped("a Qwen Code session")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, USER_SETTINGS);
    expect((await setup(o)).code).toBe(0);
    // Qwen Code runs SessionStart before it starts its MCP servers: that hook names the session
    // by what a2a mcp started here would take (no second server here: one the test started
    // would count as this session's, the test being an ancestor of the hook).
    let name = "";
    let peers: any[] = [];
    const api = standIn(async (r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (/unread a2a message/.test(newText(r)) && !results.length) return [{ tool: "mcp__a2a__check_messages", input: {} }];
      if (results.some((t) => /please review PR 7/.test(t))) return [{ text: "read my mail" }];
      if (!results.length) return [{ tool: "mcp__a2a__whoami", input: {} }];
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
      // SessionStart: the first request carries who the session is.
      expect(JSON.stringify(turns[0].body.messages)).toContain("a2a: on the a2a bus (store ");
      expect(JSON.stringify(turns[0].body.messages)).toMatch(/this session is \\+"proj\\+"/);
      expect(peers.find((p) => p.name === "proj")).toMatchObject({ agent: "Qwen Code", client: expect.stringMatching(/^qwen-cli-mcp-client-a2a /) });
      // Stop held the stop: its reason, naming the mail, is the next prompt.
      const held = turns.find((r) => /unread a2a message/.test(newText(r)))!;
      expect(held).toBeDefined();
      expect(newText(held)).toMatch(/1 unread a2a message for \\+"proj\\+" from alice: call check_messages/);
      expect(JSON.parse((await a2a(["whoami", "--as", "proj", "--json"], { dir: o.store })).stdout).unread).toBe(0);
      expect(s.stdout).toContain("read my mail");
    } finally {
      api.close();
    }
  });

  test("write_file of a file another agent reserved is denied by the PreToolUse hook; the session then messages the holder with send_message", async () => {
    if (skipped("a Qwen Code session (reservations)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path, USER_SETTINGS);
    expect((await setup(o)).code).toBe(0);
    const held = await a2a(["reserve", "src/**", "--as", "bob", "--reason", "refactoring the API"], { dir: o.store, cwd: repo });
    expect(held.code).toBe(0);
    const target = join(repo, "src", "api.ts");
    const api = standIn((r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (!results.length) return [{ tool: "write_file", input: { file_path: target, content: "export const x = 1;\n" } }];
      if (/reserved by bob/.test(results[0])) return [{ tool: "mcp__a2a__send_message", input: { to_id: "bob", message: "may I edit src/api.ts after you?" } }];
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
