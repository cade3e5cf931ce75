// Codex CLI with a2a: `a2a setup codex` against the real CLI (@openai/codex, its own config
// commands), and real `codex exec` sessions offline against the Responses API stand-in
// (fixtures/openai-responses.ts): a2a's MCP tools called, mail delivered by a2a's hooks (session
// start, prompt, stop), an apply_patch of a reserved file denied.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, setupBackups, collect, tempDir, testStore } from "../harness/run";
import { connect } from "../harness/mcp";
import { CODEX, codex, type CodexEnv, session, setup, skipped } from "./fixtures/codex";
import { newText, type Request, standIn, toolNames, toolOutputs } from "./fixtures/openai-responses";

setDefaultTimeout(90_000);

// A word of a hook command as a shell reads it: a store URL (its "?schema=") comes quoted.
const sh = (w: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(w) ? w : `'${w}'`);

const USER_CONFIG = `# my Codex settings
model = "o3" # the one I like

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]   # keep this comment

# projects I trust
[projects."/srv/app"]
trust_level = "trusted"
`;

function sandbox(path: string, store: string, dirs: string[] = ["proj"]): CodexEnv & { dirs: string[]; config: string } {
  const home = join(path, "home");
  mkdirSync(join(home, ".codex"), { recursive: true });
  const made = dirs.map((d) => join(path, d));
  made.forEach((d) => mkdirSync(d));
  return { home, store, dirs: made, config: join(home, ".codex", "config.toml") };
}

const run = async (p: ReturnType<typeof setup>) => collect(p);

describe("a2a setup codex (real Codex CLI config)", () => {
  test("codex mcp get shows a2a after setup, other settings and comments kept byte for byte; twice changes nothing; --remove restores the file", async () => {
    if (await skipped("codex setup")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    writeFileSync(o.config, USER_CONFIG);
    const r = await run(setup(o));
    expect(r.code).toBe(0);
    const text = readFileSync(o.config, "utf8");
    expect(text.startsWith(USER_CONFIG)).toBe(true); // every line of the user's, as it was
    expect(text).toContain(`[mcp_servers.a2a]\ncommand = ${JSON.stringify(BIN)}\nargs = ["--dir", ${JSON.stringify(store.path)}, "mcp"]\ntool_timeout_sec = 600\ndefault_tools_approval_mode = "approve"\n`);
    const got = await codex(["mcp", "get", "a2a", "--json"], o.dirs[0], o);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ name: "a2a", enabled: true, transport: { type: "stdio", command: BIN, args: ["--dir", store.path, "mcp"] }, tool_timeout_sec: 600 });
    const listed = await codex(["mcp", "list"], o.dirs[0], o);
    expect(listed.stdout).toMatch(/^a2a\s+\S*a2a\s+--dir \S+ mcp\s+-\s+-\s+enabled/m);
    expect(listed.stdout).toMatch(/^docs\s+docs-server/m);
    // Twice: nothing changes, no backup is made.
    const backups = () => setupBackups(o.home).length;
    const before = backups();
    const again = await run(setup(o));
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/config\.toml: unchanged/);
    expect(readFileSync(o.config, "utf8")).toBe(text);
    expect(backups()).toBe(before);
    // --remove: the user's file exactly as it was, hooks.json (a2a's own) gone.
    const removed = await run(setup(o, ["--remove"]));
    expect(removed.code).toBe(0);
    expect(readFileSync(o.config, "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(o.home, ".codex", "hooks.json"))).toBe(false);
    const after = await codex(["mcp", "list"], o.dirs[0], o);
    expect(after.stdout).not.toMatch(/^a2a\s/m);
    expect(after.stdout).toMatch(/^docs\s/m);
  });

  test("the user's [mcp_servers.a2a.env] stays through a re-setup; --worker gives the Stop hook its wait and a timeout above it", async () => {
    if (await skipped("codex setup env")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    expect((await run(setup(o))).code).toBe(0);
    writeFileSync(o.config, readFileSync(o.config, "utf8").replace("[hooks.state.", '[mcp_servers.a2a.env]\nA2A_AGENT = "reviewer"\n\n[hooks.state.'));
    expect((await run(setup(o, ["--worker", "5m"]))).code).toBe(0);
    const got = JSON.parse((await codex(["mcp", "get", "a2a", "--json"], o.dirs[0], o)).stdout);
    expect(got.transport.env).toEqual({ A2A_AGENT: "reviewer" });
    const stop = JSON.parse(readFileSync(join(o.home, ".codex", "hooks.json"), "utf8")).hooks.Stop[0].hooks[0];
    expect(stop).toEqual({ type: "command", command: `${BIN} --dir ${sh(store.path)} hook stop --agent codex --wait 300s`, timeout: 330 });
  });

  test("a2a doctor: not set up (a note with its fix), set up (ok), and a2a hook Codex would skip as untrusted", async () => {
    if (await skipped("codex doctor")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    const doctor = async () => (await a2a(["doctor"], { dir: o.store, cwd: o.dirs[0], env: { HOME: o.home, CODEX_HOME: undefined, PATH: `${join(CODEX, "..")}:${process.env.PATH}` } })).stdout;
    const before = await doctor();
    expect(before).toMatch(/^note\s+Codex CLI\s+\S+codex, version \d+\.\d+\.\d+; a2a is not set up for it \(nothing more to check\)\n\s+fix: to use it with a2a: a2a setup codex$/m);
    expect(before).not.toMatch(/^PROBLEM Codex/m);
    expect((await run(setup(o))).code).toBe(0);
    const after = await doctor();
    expect(after).toMatch(/^ok\s+Codex CLI\s+\S+codex, version \d+\.\d+\.\d+$/m);
    expect(after).toMatch(/^ok\s+Codex CLI MCP\s+a2a: \S+a2a --dir \S+ mcp \[scope: user/m);
    expect(after).toMatch(/^ok\s+Codex CLI hooks\s+installed: SessionStart: /m);
    // A hook changed by hand no longer matches its recorded trust: Codex would skip it.
    const hooks = join(o.home, ".codex", "hooks.json");
    writeFileSync(hooks, readFileSync(hooks, "utf8").replace('"timeout": 10', '"timeout": 11'));
    expect(await doctor()).toMatch(/^PROBLEM Codex CLI hooks\s+1 a2a hook\(s\) in \S+hooks\.json are not trusted: Codex skips them\n\s+fix: a2a setup codex/m);
  });

  test("CODEX_HOME moves Codex's files, and setup follows it", async () => {
    if (await skipped("codex setup with CODEX_HOME")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    const codexHome = join(d.path, "codex-home");
    mkdirSync(codexHome);
    const r = await a2a(["setup", "codex"], { dir: o.store, env: { HOME: o.home, CODEX_HOME: codexHome } });
    expect(r.code).toBe(0);
    expect(readFileSync(join(codexHome, "config.toml"), "utf8")).toContain(`[hooks.state.${JSON.stringify(join(codexHome, "hooks.json") + ":stop:0:0")}]`);
    expect(existsSync(o.config)).toBe(false);
    const got = await codex(["mcp", "get", "a2a", "--json"], o.dirs[0], { ...o, env: { CODEX_HOME: codexHome } });
    expect(JSON.parse(got.stdout)).toMatchObject({ name: "a2a", transport: { command: BIN } });
  });

  test("--dry-run changes nothing; a broken config.toml and an inline a2a are left alone (exit 2, one line)", async () => {
    if (await skipped("codex setup refusals")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    writeFileSync(o.config, USER_CONFIG);
    const dry = await run(setup(o, ["--dry-run"]));
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("+ [mcp_servers.a2a]");
    expect(readFileSync(o.config, "utf8")).toBe(USER_CONFIG);
    expect(existsSync(join(o.home, ".codex", "hooks.json"))).toBe(false);
    for (const [broken, why] of [
      ['model = "o3"\n[mcp_servers.a2a\ncommand = "x"\n', /config\.toml is not valid TOML .*: fix it \(or move it aside\), then run a2a setup codex again; nothing was changed/],
      ['[mcp_servers]\na2a = { command = "old-a2a", args = ["mcp"] }\n', /config\.toml line 2: mcp_servers\.a2a is defined here as a key, not as a \[mcp_servers\.a2a\] table: write it as a \[mcp_servers\.a2a\] table/],
      ['mcp_servers.a2a.command = "old-a2a"\n', /config\.toml line 1: mcp_servers\.a2a is defined here as a key/],
      ['mcp_servers = { docs = { command = "d" } }\n', /config\.toml line 1: mcp_servers is defined here as a value \(an inline table\)/],
    ] as const) {
      writeFileSync(o.config, broken);
      const r = await run(setup(o));
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(why);
      expect(readFileSync(o.config, "utf8")).toBe(broken);
      expect(existsSync(join(o.home, ".codex", "hooks.json"))).toBe(false); // nothing written when one file is refused
    }
  });

  test("--scope project writes .codex/config.toml and .codex/hooks.json with the bare command; codex lists it in a trusted project", async () => {
    if (await skipped("codex setup --scope project")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    const proj = o.dirs[0];
    mkdirSync(join(proj, ".git"));
    writeFileSync(o.config, `[projects.${JSON.stringify(proj)}]\ntrust_level = "trusted"\n`);
    const r = await run(setup(o, ["--scope", "project"], proj));
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/review its hooks/);
    const text = readFileSync(join(proj, ".codex", "config.toml"), "utf8");
    expect(text).toMatch(/^\[mcp_servers\.a2a\]\ncommand = "a2a"\n/);
    expect(JSON.parse(readFileSync(join(proj, ".codex", "hooks.json"), "utf8")).hooks.Stop[0].hooks[0].command).toMatch(/^a2a .*hook stop --agent codex$/);
    const got = await codex(["mcp", "get", "a2a", "--json"], proj, o);
    expect(JSON.parse(got.stdout)).toMatchObject({ name: "a2a", transport: { command: "a2a" } });
    expect(readFileSync(o.config, "utf8")).toBe(`[projects.${JSON.stringify(proj)}]\ntrust_level = "trusted"\n`); // the user's file untouched
  });
});

const hasA2a = (r: Request) => toolNames(r).includes("mcp__a2a__whoami");

describe("real codex exec sessions against the Responses API stand-in", () => {
  test("a session calls a2a's tools (names mcp__a2a__*): whoami, send_message; a2a peers shows it as Codex CLI", async () => {
    if (await skipped("codex exec with a2a tools")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    expect((await run(setup(o))).code).toBe(0);
    let peers = "";
    let table = "";
    const api = standIn(async (r) => {
      if (!hasA2a(r)) return [{ text: "no a2a tools offered" }];
      const out = toolOutputs(r);
      if (!out.length) return [{ tool: "mcp__a2a__whoami", input: {} }];
      if (/"name":"proj"/.test(out[0]) && !/"sent"|"id"/.test(out[0])) {
        peers = (await a2a(["peers", "--json"], { dir: o.store })).stdout;
        table = (await a2a(["peers"], { dir: o.store })).stdout;
        return [{ tool: "mcp__a2a__send_message", input: { to_id: "lead", message: "tests pass on my side" } }];
      }
      return [{ text: `sent: ${out[0]}` }];
    });
    try {
      const s = await session("tell the lead the tests pass", o.dirs[0], { ...o, apiUrl: api.url });
      expect(s.code).toBe(0);
      expect(s.stdout).toMatch(/^sent: /m);
      const inbox = await a2a(["inbox", "--as", "lead", "--json"], { dir: o.store });
      expect(inbox.stdout).toContain("tests pass on my side");
      expect(inbox.stdout).toContain('"from":"proj"');
      const me = JSON.parse(peers).peers.find((p: any) => p.name === "proj");
      expect(me).toMatchObject({ client: expect.stringMatching(/^codex-mcp-client \d/), agent: "Codex CLI" });
      expect(table).toMatch(/^proj\s+Codex CLI\s/m);
    } finally {
      api.close();
    }
  });
});

// The a2a texts among the developer messages Codex put in a request (what hooks added).
const a2aContext = (r: Request) => (r.body.input ?? []).filter((i: any) => i.role === "developer").map((i: any) => i.content?.[0]?.text ?? "").filter((t: string) => t.startsWith("a2a: "));

// A git repository (the reservations' unit) with src/api.ts in it.
function gitRepo(dir: string): string {
  mkdirSync(join(dir, "src"), { recursive: true });
  const r = Bun.spawnSync({ cmd: ["git", "init", "-q", dir], stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git init: ${r.stderr}`);
  writeFileSync(join(dir, "src", "api.ts"), "export const v = 1;\n");
  return dir;
}

describe("a2a's hooks in real codex exec sessions", () => {
  test("mail waiting when the session starts: SessionStart announces it and UserPromptSubmit shows it in the first request, naming the session as its a2a mcp does (proj-2); Stop holds the session until check_messages reads it", async () => {
    if (await skipped("codex hooks at start and prompt")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    const proj = o.dirs[0];
    expect((await run(setup(o))).code).toBe(0);
    // Another a2a mcp in the same directory already holds "proj": this session's server is
    // proj-2, and the hooks must find that name (their own session's server), not derive one.
    const other = await connect(o.store, {}, { cwd: proj });
    expect((await a2a(["send", "proj-2", "please review PR 7", "--as", "alice"], { dir: o.store })).code).toBe(0);
    const api = standIn((r) => {
      if (!hasA2a(r)) return [{ text: "ok" }];
      const out = toolOutputs(r);
      if (out.some((t) => /please review PR 7/.test(t))) return [{ text: "read my mail" }];
      if (/<hook_prompt[^>]*>1 unread a2a message/.test(newText(r))) return [{ tool: "mcp__a2a__check_messages", input: {} }];
      return [{ text: "nothing else to do" }];
    });
    try {
      const s = await session("what is new?", proj, { ...o, apiUrl: api.url });
      expect(s.code).toBe(0);
      const [start, prompt] = a2aContext(api.requests[0]);
      expect(start).toMatch(/^a2a: on the a2a bus \(store \S+\) this session is "proj-2" \(the a2a mcp server of this session \(pid \d+\) holds it\).*\n1 unread message from alice: call check_messages/);
      expect(prompt).toMatch(/^a2a: 1 new message for you \("proj-2"\) arrived since the last prompt/);
      expect(prompt).toContain("please review PR 7");
      // The model ended its turn without reading: the Stop hook sent it back.
      const held = api.requests.find((r) => /<hook_prompt/.test(newText(r)))!;
      expect(newText(held)).toMatch(/1 unread a2a message for \\"proj-2\\" from alice: call check_messages/);
      expect(s.stdout.trim().split("\n").at(-1)).toBe("read my mail");
      expect(JSON.parse((await a2a(["whoami", "--as", "proj-2", "--json"], { dir: o.store })).stdout).unread).toBe(0);
      expect(api.requests).toHaveLength(3); // read: the Stop hook let the session end
    } finally {
      api.close();
      await other.close();
    }
  });

  test("mail arriving while the session works: the Stop hook holds the stop and says so in the next request", async () => {
    if (await skipped("codex Stop hook")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path);
    expect((await run(setup(o))).code).toBe(0);
    const api = standIn(async (r) => {
      if (!hasA2a(r)) return [{ text: "ok" }];
      const out = toolOutputs(r);
      if (r.n === 1) return [{ tool: "mcp__a2a__whoami", input: {} }];
      if (r.n === 2) {
        const sent = await a2a(["send", JSON.parse(out[0]).name, "the build is red", "--as", "ci"], { dir: o.store });
        if (sent.code !== 0) throw new Error(sent.stderr);
        return [{ text: "nothing else to do" }];
      }
      if (out.some((t) => /the build is red/.test(t))) return [{ text: "read my mail" }];
      if (/<hook_prompt/.test(newText(r))) return [{ tool: "mcp__a2a__check_messages", input: {} }];
      return [{ text: `unexpected request ${r.n}` }];
    });
    try {
      const s = await session("who am I?", o.dirs[0], { ...o, apiUrl: api.url });
      expect(s.code).toBe(0);
      expect(a2aContext(api.requests[0])[0]).toMatch(/this session is "proj".*\nNo unread messages\./);
      expect(newText(api.requests[2])).toMatch(/<hook_prompt hook_run_id=\\"stop:[^>]*>1 unread a2a message for \\"proj\\" from ci/);
      expect(s.stdout.trim().split("\n").at(-1)).toBe("read my mail");
      expect(api.requests).toHaveLength(4);
    } finally {
      api.close();
    }
  });

  test("an apply_patch of a file another agent reserved is denied: the reason is the call's output, the file unchanged; after the release the same patch applies", async () => {
    if (await skipped("codex PreToolUse hook")) return;
    using d = tempDir();
    using store = testStore();
    const o = sandbox(d.path, store.path, []);
    const repo = gitRepo(join(d.path, "repo"));
    expect((await run(setup(o))).code).toBe(0);
    const r = await a2a(["reserve", "src/api.ts", "--as", "bob", "--reason", "renaming the API"], { dir: o.store, cwd: repo });
    expect(r.code).toBe(0);
    const patch = "*** Begin Patch\n*** Update File: src/api.ts\n@@\n-export const v = 1;\n+export const v = 2;\n*** End Patch\n";
    // gpt-5.5: a model Codex knows to offer apply_patch (as a freeform tool).
    const api = standIn((req) => (toolOutputs(req).length ? [{ text: `patch said: ${toolOutputs(req)[0]}` }] : [{ patch }]));
    try {
      const s = await session("bump v", repo, { ...o, apiUrl: api.url, model: "gpt-5.5" });
      expect(s.code).toBe(0);
      expect(toolNames(api.requests[0])).toContain("apply_patch");
      const denied = toolOutputs(api.requests[1])[0];
      expect(denied).toMatch(/a2a: src\/api\.ts is reserved by bob \(pattern src\/api\.ts, exclusive, their reason: "renaming the API"\) until \S+ \(\d+ min from now\), so this edit was not made/);
      expect(readFileSync(join(repo, "src", "api.ts"), "utf8")).toBe("export const v = 1;\n");
      expect((await a2a(["release", "src/api.ts", "--as", "bob"], { dir: o.store, cwd: repo })).code).toBe(0);
      const again = await session("bump v", repo, { ...o, apiUrl: api.url, model: "gpt-5.5" });
      expect(again.code).toBe(0);
      expect(readFileSync(join(repo, "src", "api.ts"), "utf8")).toBe("export const v = 2;\n");
    } finally {
      api.close();
    }
  });
});
