// Codex CLI with a2a: `a2a setup codex` against the real CLI (@openai/codex, its own config
// commands), and real `codex exec` sessions offline against the Responses API stand-in
// (fixtures/openai-responses.ts): a2a's MCP tools called, mail delivered by a2a's hooks (session
// start, prompt, stop), an apply_patch of a reserved file denied.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, collect, tempDir, testStore } from "../harness/run";
import { connect } from "../harness/mcp";
import { codex, type CodexEnv, session, setup, skipped } from "./fixtures/codex";
import { newText, type Request, standIn, toolNames, toolOutputs } from "./fixtures/openai-responses";

setDefaultTimeout(90_000);

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
    const backups = () => readdirSync(join(o.home, ".codex")).filter((f) => f.includes(".a2a-backup-")).length;
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
