// Gemini CLI on the bus, with the real @google/gemini-cli (0.61.0, a devDependency): `a2a setup
// gemini` in a sandbox HOME, checked by `gemini mcp list` (from a trusted folder) and a2a doctor,
// and real non-interactive sessions (`gemini -p`) against the Gemini API stand-in
// (fixtures/gemini-api.ts) that call a2a's MCP tools while a2a's hooks (SessionStart,
// BeforeAgent, AfterAgent, BeforeTool) bring mail in and keep a reserved file unwritten.
// Gemini CLI takes ~4 s of CPU to start, so the tests start it few times.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, BIN, childEnv, ROOT, tempDir, testStore, type RunResult } from "../harness/run";
import { connect } from "../harness/mcp";
import { stripJsonComments } from "../../cli/agents/edit";
import { newText, standIn, toolNames, toolResults, type Request } from "./fixtures/gemini-api";

setDefaultTimeout(90_000);

// A word of a hook command as a shell reads it: a store URL (its "?schema=") comes quoted.
const sh = (w: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(w) ? w : `'${w}'`);

const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");

function skipped(what: string): boolean {
  if (existsSync(GEMINI)) return false;
  console.log(`SKIPPED ${what}: ${GEMINI} is missing (bun install installs @google/gemini-cli)`);
  return true;
}

interface Sandbox {
  home: string;
  store: string;
  settings: string; // ~/.gemini/settings.json
}

// A sandbox HOME whose Gemini CLI uses an API key (so GOOGLE_GEMINI_BASE_URL is honoured), sends
// no usage statistics and trusts `trusted`.
function sandbox(path: string, store: string, trusted: string[], settings: string = "{}"): Sandbox {
  const home = join(path, "home");
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify(Object.fromEntries(trusted.map((d) => [d, "TRUST_FOLDER"]))));
  const file = join(home, ".gemini", "settings.json");
  writeFileSync(file, settings);
  return { home, store, settings: file };
}

// Gemini CLI's environment: the sandbox HOME, a2a on PATH, an API key and the stand-in (a closed
// port when none: never the real API). GITHUB_SHA would make it strip every variable but a few
// from its MCP servers and hooks (its "strict sanitization" in CI).
function geminiEnv(o: Sandbox, apiUrl = "http://127.0.0.1:9", path = `${dirname(BIN)}:${process.env.PATH}`) {
  return childEnv({ dir: o.store, env: { HOME: o.home, PATH: path, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: apiUrl, GITHUB_SHA: undefined, SURFACE: undefined, NO_COLOR: "1" } });
}

async function run(cmd: string[], cwd: string, env: Record<string, string>): Promise<RunResult> {
  const p = Bun.spawn({ cmd, cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

const gemini = (args: string[], cwd: string, o: Sandbox, apiUrl?: string) => run([GEMINI, ...args], cwd, geminiEnv(o, apiUrl));
// `gemini mcp list` writes its list to stdout or stderr (it varies from run to run).
const mcpList = async (cwd: string, o: Sandbox) => {
  const r = await gemini(["mcp", "list"], cwd, o);
  return r.stdout + r.stderr;
};
// One non-interactive session; --yolo so the MCP and file tools run without a confirmation.
const session = (prompt: string, cwd: string, o: Sandbox, apiUrl: string) => gemini(["-p", prompt, "-m", "gemini-2.5-flash", "--yolo", "-o", "json"], cwd, o, apiUrl);
const setup = (o: Sandbox, args: string[] = [], cwd?: string) => a2a(["setup", "gemini", ...args], { dir: o.store, env: { HOME: o.home }, cwd });

const USER_SETTINGS = `{
  // my own settings, with comments
  "security": { "auth": { "selectedType": "gemini-api-key" } }, // the key in GEMINI_API_KEY
  "privacy": { "usageStatisticsEnabled": false },
  "mcpServers": {
    "other": { "command": "true" } /* not a2a's */
  }
}
`;

describe("a2a setup gemini with the real Gemini CLI", () => {
  test("gemini mcp list shows a2a connected from a trusted folder; comments and other settings kept; twice and --dry-run change nothing; --remove restores the file", async () => {
    if (skipped("gemini mcp list")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, [proj], USER_SETTINGS);
    const dry = await setup(o, ["--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("dry run: nothing was changed");
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);

    const set = await setup(o);
    expect(set.code).toBe(0);
    const text = readFileSync(o.settings, "utf8");
    for (const kept of ["// my own settings, with comments", "// the key in GEMINI_API_KEY"]) expect(text).toContain(kept);
    expect(text).toMatch(/\n {4}"other": \{ "command": "true" \}, \/\* not a2a's \*\/\n {4}"a2a": \{\n/); // the comment stays with its member
    const hooks = (ev: string) => JSON.parse(stripJsonComments(text)).hooks[ev];
    expect(hooks("AfterAgent")[0].hooks[0]).toEqual({ type: "command", command: `${BIN} --dir ${sh(store.path)} hook stop --agent gemini`, timeout: 10_000 });
    expect(hooks("BeforeTool")[0].matcher).toBe("^(write_file|replace)$");
    expect((await setup(o)).stdout).toContain("unchanged (already set up)");
    expect(readFileSync(o.settings, "utf8")).toBe(text);

    expect(await mcpList(proj, o)).toMatch(new RegExp(`^✓ a2a: ${BIN} --dir \\S+ mcp \\(stdio\\) - Connected$`, "m"));

    const removed = await setup(o, ["--remove"]);
    expect(removed.code).toBe(0);
    expect(readFileSync(o.settings, "utf8")).toBe(USER_SETTINGS);
  });

  test("a2a doctor: Gemini CLI found on PATH with its version; in a folder Gemini CLI does not trust, a2a is Disabled and doctor says how to trust it", async () => {
    if (skipped("a2a doctor for Gemini CLI")) return;
    using d = tempDir();
    using store = testStore();
    const untrusted = join(d.path, "elsewhere");
    mkdirSync(untrusted);
    const o = sandbox(d.path, store.path, [], USER_SETTINGS);
    // Only Gemini CLI (and a2a) on PATH: doctor's other agents are not found, so not started.
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    symlinkSync(GEMINI, join(bin, "gemini"));
    const path = `${bin}:${dirname(BIN)}:${dirname(process.execPath)}:/usr/bin:/bin`;
    const before = await run([BIN, "doctor", "--json"], untrusted, geminiEnv(o, undefined, path));
    const checks = (r: RunResult) => JSON.parse(r.stdout).checks.filter((c: any) => c.check.startsWith("Gemini CLI"));
    expect(checks(before).map((c: any) => [c.check, c.level])).toEqual([["Gemini CLI", "note"]]);
    expect(checks(before)[0].detail).toMatch(/version 0\.61\.0; a2a is not set up for it/);
    expect(checks(before)[0].fix).toBe("to use it with a2a: a2a setup gemini");
    expect((await setup(o)).code).toBe(0);
    // Read from the files: registered and hooked; --live asks Gemini CLI, which says it would not start it here.
    const files = checks(await run([BIN, "doctor", "--json"], untrusted, geminiEnv(o, undefined, path)));
    expect(files[1]).toMatchObject({ check: "Gemini CLI MCP", level: "ok", detail: expect.stringMatching(/^a2a is registered \[scope: user \(/) });
    const after = checks(await run([BIN, "doctor", "--json", "--live"], untrusted, geminiEnv(o, undefined, path)));
    expect(after[1]).toMatchObject({ level: "problem", detail: expect.stringMatching(/^○ a2a: .* - Disabled: Gemini CLI starts no MCP server in a folder you have not trusted/) });
    expect(after[1].fix).toMatch(/trust this folder in Gemini CLI/);
    expect(after[2]).toMatchObject({ level: "ok", detail: expect.stringMatching(/^installed: SessionStart: .*hook session-start --agent gemini/) });
    // The idle wake's two experimental settings: named while either is missing, quiet once both are set.
    expect(files.find((c: any) => c.check === "Gemini CLI idle wake")).toMatchObject({ level: "note", detail: expect.stringContaining('experimental.modelSteering: true and tools.shell.backgroundCompletionBehavior: "inject"') });
    const set = readFileSync(o.settings, "utf8"); // JSONC, as setup left it: the two keys go first
    writeFileSync(o.settings, set.replace("{", '{ "experimental": { "modelSteering": true }, "tools": { "shell": { "backgroundCompletionBehavior": "inject" } },'));
    expect(checks(await run([BIN, "doctor", "--json"], untrusted, geminiEnv(o, undefined, path))).map((c: any) => c.check)).not.toContain("Gemini CLI idle wake");
  });

  test("a settings file that is not JSON is left alone: exit 2, one line naming it", async () => {
    using d = tempDir();
    using store = testStore();
    const broken = '{ "ui": { "theme": "GitHub" }\n';
    const o = sandbox(d.path, store.path, [], broken);
    const r = await setup(o);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split("\n")).toEqual([`a2a: ${o.settings} is not valid JSON: fix it (or move it aside), then run a2a setup gemini again; nothing was changed`]);
    expect(readFileSync(o.settings, "utf8")).toBe(broken);
  });

  test("an a2a entry the user edited keeps their trust and timeout; a cwd or URL that would start a2a elsewhere goes", async () => {
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path, [], JSON.stringify({ mcpServers: { a2a: { httpUrl: "http://x/mcp", cwd: "/elsewhere", command: "a2a", args: ["mcp"], trust: true, timeout: 900000 } } }));
    expect((await setup(o, ["--tools", "default,tasks"])).code).toBe(0);
    expect(JSON.parse(readFileSync(o.settings, "utf8")).mcpServers.a2a).toEqual({ trust: true, timeout: 900000, command: BIN, args: ["--dir", store.path, "mcp", "--tools", "default,tasks"] });
  });

  test("--scope project writes .gemini/settings.json at the git root with the bare a2a command; --worker makes the stop hook wait; gemini mcp list lists it there", async () => {
    if (skipped("gemini mcp list (project scope)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "sub"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path, [repo], '{ "security": { "auth": { "selectedType": "gemini-api-key" } } }\n');
    const r = await setup(o, ["--scope", "project", "--worker", "2m"], join(repo, "sub"));
    expect(r.code).toBe(0);
    const project = JSON.parse(readFileSync(join(repo, ".gemini", "settings.json"), "utf8"));
    expect(project.mcpServers.a2a).toEqual({ command: "a2a", args: ["--dir", store.path, "mcp"] });
    expect(project.hooks.AfterAgent[0].hooks[0]).toEqual({ type: "command", command: `a2a --dir ${sh(store.path)} hook stop --agent gemini --wait 120s`, timeout: 150_000 });
    expect(readFileSync(o.settings, "utf8")).not.toContain("a2a");
    expect(await mcpList(repo, o)).toMatch(/^✓ a2a: a2a --dir \S+ mcp \(stdio\) - Connected$/m);
  });
});

const inSession = (r: Request) => toolNames(r).includes("mcp_a2a_whoami");

describe("real Gemini CLI sessions on the bus (offline, against the Gemini API stand-in)", () => {
  test("the session's name is announced at start; mail sent mid-turn holds the stop (AfterAgent) and reaches the next request; check_messages reads it; a2a peers shows Gemini CLI", async () => {
    if (skipped("a Gemini CLI session")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, [proj], USER_SETTINGS);
    expect((await setup(o)).code).toBe(0);
    // Another a2a mcp in the same directory already holds "proj": this session's server is
    // proj-2, and the hooks must find that name (their own session's server), not derive one.
    const other = await connect(o.store, {}, { cwd: proj });
    let name = "";
    let peers: any[] = [];
    const api = standIn(async (r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (/unread a2a message/.test(newText(r)) && !results.length) return [{ call: "mcp_a2a_check_messages", args: {} }];
      if (results.some((t) => /please review PR 7/.test(t))) return [{ text: "read my mail" }];
      if (!results.length) return [{ call: "mcp_a2a_whoami", args: {} }];
      name = /\\"name\\":\\"([^\\]+)\\"/.exec(results[0])?.[1] ?? "";
      if (!name) throw new Error(`whoami answered ${results[0]}`);
      peers = JSON.parse((await a2a(["peers", "--json"], { dir: o.store, cwd: proj })).stdout).peers;
      const sent = await a2a(["send", name, "please review PR 7", "--as", "alice"], { dir: o.store });
      if (sent.code !== 0) throw new Error(sent.stderr);
      return [{ text: "nothing else to do" }];
    });
    try {
      const s = await session("who am I?", proj, o, api.url);
      expect(s.code).toBe(0);
      expect(name).toBe("proj-2");
      const turns = api.requests.filter(inSession);
      // SessionStart: the first request's prompt carries who the session is.
      expect(newText(turns[0])).toContain('<hook_context>a2a: on the a2a bus (store ');
      expect(newText(turns[0])).toMatch(/this session is \\"proj-2\\"/);
      expect(peers.find((p) => p.name === "proj-2")).toMatchObject({ agent: "Gemini CLI", client: expect.stringMatching(/^gemini-cli-mcp-client /) });
      // AfterAgent held the stop: its reason is the next prompt, and BeforeAgent (fired again
      // for that prompt) shows the message itself.
      const held = turns.find((r) => /unread a2a message/.test(newText(r)))!;
      expect(held).toBeDefined();
      expect(newText(held)).toMatch(/1 unread a2a message for \\"proj-2\\" from alice: call check_messages/);
      expect(newText(held)).toContain("please review PR 7");
      expect(JSON.parse(s.stdout).response).toContain("read my mail");
      expect(JSON.parse((await a2a(["whoami", "--as", "proj-2", "--json"], { dir: o.store })).stdout).unread).toBe(0);
    } finally {
      api.close();
      await other.close();
    }
  });

  test("a worker session (--worker) claims and completes the queue's tasks; AfterAgent sends it back while work waits", async () => {
    if (skipped("a Gemini CLI worker session")) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "worker");
    mkdirSync(proj);
    const o = sandbox(d.path, store.path, [proj], USER_SETTINGS);
    expect((await setup(o, ["--tools", "default,tasks", "--worker", "2s"])).code).toBe(0);
    for (const p of ["build the parser", "build the lexer"]) expect((await a2a(["task", "add", "build", p], { dir: o.store })).code).toBe(0);
    const api = standIn((r) => {
      if (!toolNames(r).includes("mcp_a2a_task_claim")) return [{ text: "ok" }];
      const last = toolResults(r).at(-1);
      if (last) {
        const body = JSON.parse(/\{.*\}/s.exec(JSON.parse(last).output)![0]);
        if (body.token) return [{ call: "mcp_a2a_task_done", args: { id: body.id, token: body.token, result: `did: ${body.payload}` } }];
        if (body.state === "done") return [{ text: `finished ${body.id}` }];
      }
      return [{ call: "mcp_a2a_task_claim", args: { queue: "build" } }];
    });
    try {
      const s = await session("work the build queue", proj, o, api.url);
      expect(s.code).toBe(0);
      const tasks = JSON.parse((await a2a(["task", "list", "build", "--json"], { dir: o.store })).stdout);
      expect(tasks.map((t: any) => [t.state, t.result]).sort()).toEqual([["done", "did: build the lexer"], ["done", "did: build the parser"]]);
      // After the first task the session wanted to stop; the hook named the claimable work.
      expect(api.requests.find((r) => /claimable tasks: build/.test(newText(r)))).toBeDefined();
    } finally {
      api.close();
    }
  });

  test("write_file of a file another agent reserved is denied by the BeforeTool hook; the session then messages the holder with send_message", async () => {
    if (skipped("a Gemini CLI session (reservations)")) return;
    using d = tempDir();
    using store = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    expect(Bun.spawnSync({ cmd: ["git", "init", "-q", repo] }).exitCode).toBe(0);
    const o = sandbox(d.path, store.path, [repo], USER_SETTINGS);
    expect((await setup(o)).code).toBe(0);
    const held = await a2a(["reserve", "src/**", "--as", "bob", "--reason", "refactoring the API"], { dir: o.store, cwd: repo });
    expect(held.code).toBe(0);
    const target = join(repo, "src", "api.ts");
    const api = standIn((r) => {
      if (!inSession(r)) return [{ text: "ok" }];
      const results = toolResults(r);
      if (!results.length) return [{ call: "write_file", args: { file_path: target, content: "export const x = 1;\n" } }];
      if (/reserved by bob/.test(results[0])) return [{ call: "mcp_a2a_send_message", args: { to_id: "bob", message: "may I edit src/api.ts after you?" } }];
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
