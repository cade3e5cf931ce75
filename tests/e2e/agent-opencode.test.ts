// opencode (the opencode-ai devDependency) with a2a: `a2a setup opencode` through the compiled
// binary, checked by the real CLI (`opencode mcp list`), and real sessions (`opencode run`, and
// `opencode serve` for the idle continuation) offline against the Chat Completions stand-in
// (fixtures/openai-chat.ts) as a custom provider: the a2a MCP tools called, and a2a's plugin
// bringing mail into the next model request, prompting an idle session while mail waits, and
// refusing the edit of a reserved file. Everything opencode writes goes under a sandbox HOME.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, setupBackups, childEnv, readUntil, ROOT, tempDir, testStore } from "../harness/run";
import { standIn, systemText, toolNames, toolResults, type Request } from "./fixtures/openai-chat";
import { env, OPENCODE, opencode, provider, sandbox, sessionSandbox, setup, skipPluginInstall, skipped, type Sandbox } from "./fixtures/opencode";

setDefaultTimeout(120_000);

// `opencode mcp list`'s line for a2a, without colours ("✓ a2a connected"), or undefined.
async function listed(s: Sandbox, cwd = s.proj): Promise<string | undefined> {
  const r = await opencode(["mcp", "list"], cwd, s);
  return r.stdout.replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => / a2a( |$)/.test(l));
}

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

// a2a doctor's opencode lines (run where opencode is on PATH), by check.
async function doctor(s: Sandbox, more: string[] = []): Promise<Record<string, { level: string; detail: string; fix?: string }>> {
  const r = await a2a(["doctor", "--json", ...more], { dir: s.store, cwd: s.proj, env: { ...env(s, s.proj), PATH: `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}` } });
  return Object.fromEntries(JSON.parse(r.stdout).checks.filter((c: any) => c.check.startsWith("opencode")).map((c: any) => [c.check, c]));
}

// What a2a's plugin sends `a2a hook EVENT --agent opencode` (cli/agents/opencode-plugin.ts), through the binary.
describe("opencode: a2a hook --agent opencode", () => {
  const hook = (s: Sandbox, event: string, input: object) => a2a(["hook", event, "--agent", "opencode"], { dir: s.store, cwd: s.proj, stdin: JSON.stringify({ cwd: s.proj, ...input }), env: { A2A_AGENT: "proj" } });

  test("pre-tool-use finds the files of write, edit (a relative path too) and apply_patch; read and bash are let through", async () => {
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    expect((await a2a(["reserve", "src/api.ts", "--as", "alice", "-q"], { dir: s.store, cwd: s.proj })).code).toBe(0);
    const patch = "*** Begin Patch\n*** Add File: src/new.ts\n+x\n*** Update File: src/api.ts\n@@\n-export {};\n+export const a = 1;\n*** End Patch";
    for (const call of [{ tool: "write", args: { filePath: join(s.proj, "src", "api.ts"), content: "" } }, { tool: "edit", args: { filePath: "src/api.ts", oldString: "a", newString: "b" } }, { tool: "apply_patch", args: { patchText: patch } }]) {
      const r = await hook(s, "pre-tool-use", call);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).deny).toMatch(/^a2a: src\/api\.ts is reserved by alice \(pattern src\/api\.ts, exclusive\)/);
    }
    for (const call of [{ tool: "read", args: { filePath: "src/api.ts" } }, { tool: "bash", args: { command: "echo > src/api.ts" } }, { tool: "write", args: { filePath: "src/other.ts", content: "" } }]) {
      const r = await hook(s, "pre-tool-use", call);
      expect(r).toMatchObject({ code: 0, stdout: "" });
    }
  });

  test("session-start and user-prompt-submit answer {context}; stop answers {block} while mail waits, and lets a continuation go for the same mail", async () => {
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    expect(JSON.parse((await hook(s, "session-start", {})).stdout).context).toMatch(/^a2a: on the a2a bus .* this session is "proj"/);
    expect((await hook(s, "user-prompt-submit", {})).stdout).toBe("");
    expect((await a2a(["send", "proj", "the build is broken", "--as", "alice"], { dir: s.store })).code).toBe(0);
    expect(JSON.parse((await hook(s, "user-prompt-submit", {})).stdout).context).toContain("the build is broken");
    expect(JSON.parse((await hook(s, "stop", { continuation: false })).stdout).block).toMatch(/^1 unread a2a message for "proj" from alice: call check_messages/);
    expect((await hook(s, "stop", { continuation: true })).stdout).toBe("");
  });
});

describe("opencode: a2a setup opencode", () => {
  test("a2a doctor: opencode's version; not set up: a note with its fix; after setup both ok, --live sees it connected", async () => {
    if (skipped("doctor")) return;
    using d = tempDir();
    using store = testStore();
    const s = sandbox(d.path, store.path);
    const before = await doctor(s);
    expect(Object.keys(before)).toEqual(["opencode"]);
    expect(before.opencode).toMatchObject({ level: "note", fix: "to use it with a2a: a2a setup opencode" });
    expect(before.opencode.detail).toMatch(/, version 1\.\d+\.\d+; a2a is not set up for it/);
    expect((await setup(s)).code).toBe(0);
    expect((await doctor(s))["opencode MCP"]).toMatchObject({ level: "ok", detail: `a2a is registered [scope: user (${join(s.config, "opencode.json")})] (a2a doctor --live starts it to see it connect)` });
    const after = await doctor(s, ["--live"]);
    expect(after["opencode MCP"]).toMatchObject({ level: "ok", detail: `a2a connected [scope: user (${join(s.config, "opencode.json")})]` });
    expect(after["opencode plugin"]).toMatchObject({ level: "ok", detail: `installed: ${join(s.config, "plugins", "a2a.js")}` });
  });

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
    expect(readdirSync(s.config).filter((f) => f.includes("a2a-backup"))).toHaveLength(0); // backups are kept out of the user's tree
    expect(setupBackups(s.home).filter((f) => f.includes("/opencode.json/"))).toHaveLength(1);
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
    // --worker: the plugin's stop hook waits for the next message.
    expect((await setup(s, ["--scope", "project", "--worker", "5m"], sub)).code).toBe(0);
    expect(readFileSync(join(s.proj, ".opencode", "plugins", "a2a.js"), "utf8")).toContain(`const STOP_ARGS = ["--wait","300s"];`);
    expect((await setup(s, ["--scope", "project", "--remove"], sub)).code).toBe(0);
    expect(existsSync(join(s.proj, ".opencode", "plugins", "a2a.js"))).toBe(false);
    expect(await listed(s, sub)).toBeUndefined();
  });
});

// A sandbox whose user config has the user's settings and the stand-in as model, then a2a set up.
const run = (prompt: string, s: Sandbox) => opencode(["run", "--format", "json", prompt], s.proj, s);

describe("opencode: a real session", () => {
  test("calls a2a's tools (whoami, send_message); the plugin announces the session's name and brings mail into the next model request; a2a peers shows opencode", async () => {
    if (skipped("the opencode session")) return;
    using d = tempDir();
    using store = testStore();
    let name = "";
    let peers: any;
    const api = standIn(async (r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      const results = toolResults(r);
      if (!name && !results.length) return [{ tool: "a2a_whoami", input: {} }];
      if (!name) {
        name = JSON.parse(results[0]).name;
        if (!name) throw new Error(`whoami answered ${results[0]}`);
        peers = JSON.parse((await a2a(["peers", "--json"], { dir: s.store })).stdout);
        const sent = await a2a(["send", name, "please review PR 7", "--as", "alice"], { dir: s.store });
        if (sent.code !== 0) throw new Error(`a2a send: ${sent.stderr}`);
        return [{ tool: "a2a_send_message", input: { to_id: "bob", message: "hello from opencode" } }];
      }
      return [{ text: "done" }];
    });
    const s = await sessionSandbox(d.path, store.path, api.url);
    try {
      const r = await run("say hello to bob", s);
      expect(r.code).toBe(0);
      const session = api.requests.filter(byTools);
      expect(session).toHaveLength(3);
      // The session start, in the first request: the name is the one its a2a mcp server has.
      expect(systemText(session[0])).toContain(`a2a: on the a2a bus (store ${s.store}) this session is "${name}"`);
      expect(name).toBe("proj");
      // The mail sent while the model worked is in the next request, not before.
      expect(systemText(session[1])).not.toContain("please review PR 7");
      expect(systemText(session[2])).toContain(`a2a: 1 new message for you ("${name}") arrived since the last prompt`);
      expect(systemText(session[2])).toContain("please review PR 7");
      // opencode joins a result's text blocks with a blank line: a2a's result, then its unread note.
      expect(JSON.parse(toolResults(session[2])[0].split("\n\n")[0])).toMatchObject({ ok: true, from: name, to: "bob" });
      const bob = await a2a(["recv", "--as", "bob", "--json"], { dir: s.store });
      expect(JSON.parse(bob.stdout)).toMatchObject({ from: name, body: "hello from opencode" });
      const me = peers.peers.find((p: any) => p.name === name);
      expect(me).toMatchObject({ agent: "opencode" });
      expect(me.client).toMatch(/^opencode \S+$/);
      console.log(`opencode's MCP client: ${me.client}`);
    } finally {
      api.close();
    }
  });
});

describe("opencode: a2a's plugin in a real session", () => {
  test("a write to a file another agent reserved is refused, naming the holder; the model sees why; other files are written", async () => {
    if (skipped("the reserved-file block")) return;
    using d = tempDir();
    using store = testStore();
    let s!: Sandbox;
    const api = standIn((r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      const results = toolResults(r);
      if (!results.length) return [{ tool: "write", input: { filePath: join(s.proj, "src", "api.ts"), content: "export const changed = 1;\n" } }];
      if (results[0].startsWith("a2a:")) return [{ tool: "write", input: { filePath: join(s.proj, "src", "free.ts"), content: "export {};\n" } }];
      return [{ text: "done" }];
    });
    s = await sessionSandbox(d.path, store.path, api.url);
    try {
      const held = await a2a(["reserve", "src/api.ts", "--as", "alice", "--reason", "refactoring the API"], { dir: s.store, cwd: s.proj });
      expect(held.code).toBe(0);
      const r = await run("change the api", s);
      expect(r.code).toBe(0);
      const session = api.requests.filter(byTools);
      expect(session).toHaveLength(3);
      expect(toolResults(session[1])[0]).toMatch(/^a2a: src\/api\.ts is reserved by alice \(pattern src\/api\.ts, exclusive, their reason: "refactoring the API"\)/);
      expect(readFileSync(join(s.proj, "src", "api.ts"), "utf8")).toBe("export {};\n");
      expect(toolResults(session[2])[0]).toContain("Wrote file successfully");
      expect(readFileSync(join(s.proj, "src", "free.ts"), "utf8")).toBe("export {};\n");
    } finally {
      api.close();
    }
  });

  test("an idle session is prompted again while mail waits (opencode serve): the reason is the next request, the model reads its mail", async () => {
    if (skipped("the idle continuation")) return;
    using d = tempDir();
    using store = testStore();
    let s!: Sandbox;
    let read!: (r: Request) => void;
    const mailRead = new Promise<Request>((res) => (read = res));
    const api = standIn(async (r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      const results = toolResults(r);
      const last = JSON.stringify(r.body.messages.at(-1));
      if (last.includes("unread a2a message")) return [{ tool: "a2a_check_messages", input: {} }];
      if (results.length) {
        read(r);
        return [{ text: "read it" }];
      }
      // The first turn: mail arrives while the model works, and the model ends its turn without reading it.
      const sent = await a2a(["send", "proj", "the build is broken", "--as", "alice"], { dir: s.store });
      if (sent.code !== 0) throw new Error(`a2a send: ${sent.stderr}`);
      return [{ text: "nothing to do" }];
    });
    s = await sessionSandbox(d.path, store.path, api.url);
    const server = Bun.spawn({ cmd: [OPENCODE, "serve", "--port", "0", "--hostname", "127.0.0.1"], cwd: s.proj, stdin: "ignore", stdout: "pipe", stderr: "pipe", env: childEnv({ dir: s.store, env: env(s, s.proj) }) });
    try {
      const said = await readUntil(server.stdout, (t) => /listening on http:\/\/\S+/.test(t), 60_000);
      const url = said.match(/listening on (http:\/\/\S+)/)![1];
      const session: any = await (await fetch(`${url}/session`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).json();
      const sent = await fetch(`${url}/session/${session.id}/prompt_async`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ parts: [{ type: "text", text: "look around" }] }) });
      expect(sent.ok).toBe(true);
      const r = await mailRead;
      const reason = r.body.messages.filter((m: any) => m.role === "user").map((m: any) => JSON.stringify(m.content)).find((c: string) => c.includes("unread a2a message"));
      expect(reason).toContain(`1 unread a2a message for \\"proj\\" from alice: call check_messages`);
      expect(toolResults(r)[0]).toContain("the build is broken");
    } finally {
      server.kill();
      await server.exited;
      api.close();
    }
  });
});

describe("opencode: when a2a cannot run", () => {
  test("the session goes on: the write is made, the run succeeds, and opencode's log has one line per failed hook", async () => {
    if (skipped("a2a failing under the plugin")) return;
    using d = tempDir();
    using store = testStore();
    let s!: Sandbox;
    const api = standIn((r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      if (!toolResults(r).length) return [{ tool: "write", input: { filePath: join(s.proj, "src", "api.ts"), content: "export const changed = 1;\n" } }];
      return [{ text: "done" }];
    });
    s = await sessionSandbox(d.path, store.path, api.url);
    const plugin = join(s.config, "plugins", "a2a.js");
    const missing = join(d.path, "no-such-a2a");
    writeFileSync(plugin, readFileSync(plugin, "utf8").replace(JSON.stringify([BIN, "--dir", s.store]), JSON.stringify([missing])));
    try {
      // --print-logs: opencode's log file is written in batches and can miss its last lines at exit
      // (a full CI run found the pre-tool-use line absent from the file); its stderr copy cannot.
      const r = await opencode(["run", "--print-logs", "--format", "json", "change the api"], s.proj, s);
      expect(r.code).toBe(0);
      expect(readFileSync(join(s.proj, "src", "api.ts"), "utf8")).toBe("export const changed = 1;\n");
      expect(api.requests.filter(byTools)).toHaveLength(2);
      // One line per hook run: session-start once, user-prompt-submit at each model request (the
      // title's too), pre-tool-use at the write.
      const lines = (event: string) => r.stderr.match(new RegExp(`WARN .*a2a hook ${event}: ENOENT: .*${missing}`, "g"))?.length ?? 0;
      expect([lines("session-start"), lines("user-prompt-submit"), lines("pre-tool-use")]).toEqual([1, api.requests.length, 1]);
    } finally {
      api.close();
    }
  });
});

// The a2a processes, by command line, that name this store (none should outlive the session).
function a2aProcesses(store: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
      if (cmd.includes(store) && cmd.includes(" hook ")) found.push(cmd);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe("opencode: a worker (--worker)", () => {
  test("opencode run ends its plugin's stop hook (a2a hook stop --wait) as it exits: nothing is left waiting", async () => {
    if (skipped("the worker's stop hook at exit")) return;
    using d = tempDir();
    using store = testStore();
    const api = standIn(() => [{ text: "nothing to do" }]);
    const s = sandbox(d.path, store.path);
    writeFileSync(join(s.config, "opencode.json"), JSON.stringify(provider(api.url), null, 2));
    try {
      expect((await setup(s, ["--worker", "90s"])).code).toBe(0);
      const r = await run("look around", s);
      expect(r.code).toBe(0);
      expect(a2aProcesses(s.store)).toEqual([]);
    } finally {
      api.close();
    }
  });
});
