// Start-up guard (issue 10): what each hot command loads, checked by module, not by timing.
// a2a runs from source under tests/e2e/fixtures/trace-modules.ts, which writes Bun's module
// registry at exit; each case asserts the command's own module is there (so the trace works
// and the guard can fail) and that nothing it does not need is: the MCP SDK, zod, another
// command group, another concept's lib/ folder, commander for --version, node:crypto.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { openBus } from "../../lib/bus";
import { a2a, ON_FILES, ROOT, tempDir, testStore } from "../harness/run";

setDefaultTimeout(120_000);

const GROUPS = ["slots", "mail", "topics", "presence", "gc", "mcp"];

// Runs `a2a ARGS` from source with the trace preload; returns the loaded paths, relative to
// the repository (node_modules ones as node_modules/PACKAGE/...).
async function loaded(args: string[], dir: string, stdin?: string, env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string; modules: string[]; buffer: boolean }> {
  const work = mkdtempSync(join(tmpdir(), "a2a-trace-"));
  const outFile = join(work, "modules.txt");
  try {
    const p = Bun.spawn({
      cmd: [process.execPath, "--preload", join(ROOT, "tests/e2e/fixtures/trace-modules.ts"), join(ROOT, "cli/main.ts"), ...args],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? work, A2A_DIR: dir, TRACE_MODULES_OUT: outFile, ...env },
      stdin: stdin === undefined ? "ignore" : new Blob([stdin]),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    const lines = readFileSync(outFile, "utf8").split("\n").filter(Boolean);
    const modules = lines.filter((l) => l !== "global:Buffer").map(inRepo);
    return { code, stdout, stderr, modules, buffer: lines.includes("global:Buffer") };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// A loaded path as the checks name it. node_modules may be a symlink (a git worktree sharing the
// main checkout's): its packages load from where it points, and are named node_modules/... too.
const NODE_MODULES = realpathSync(join(ROOT, "node_modules"));
const inRepo = (m: string) => (m.startsWith(NODE_MODULES + "/") ? "node_modules/" + m.slice(NODE_MODULES.length + 1) : relative(ROOT, m));

const pkgOf = (m: string) => (m.startsWith("node_modules/") ? m.split("/").slice(1, m.split("/")[1].startsWith("@") ? 3 : 2).join("/") : undefined);
const CRYPTO = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)["'](?:node:)?crypto["']/;

interface Case {
  args: string[];
  // The hook's event on stdin, in a git repository where another agent reserved the file
  // edited, so the whole check runs (a denial on stdout).
  edit?: true;
  group: string; // the command's own module: cli/commands/<group>.ts
  lib: string; // the lib/ folder (or file) it must load
  notLib: string[]; // lib/ folders it must not load
}

const HOT: Case[] = [
  { args: ["publish", "hot", "x"], group: "slots", lib: "lib/slots/slot.ts", notLib: ["lib/mail/", "lib/topics/", "lib/presence/", "lib/maintenance/gc.ts"] },
  { args: ["wait", "ready"], group: "slots", lib: "lib/slots/wait.ts", notLib: ["lib/mail/", "lib/topics/", "lib/presence/", "lib/maintenance/gc.ts"] },
  { args: ["status"], group: "slots", lib: "lib/slots/slot.ts", notLib: ["lib/mail/", "lib/topics/", "lib/presence/", "lib/maintenance/gc.ts"] },
  { args: ["append", "stream", "line"], group: "slots", lib: "lib/slots/slot.ts", notLib: ["lib/mail/", "lib/topics/", "lib/presence/", "lib/maintenance/gc.ts"] },
  { args: ["start", "job", "task"], group: "slots", lib: "lib/slots/slot.ts", notLib: ["lib/mail/", "lib/topics/", "lib/presence/", "lib/maintenance/gc.ts"] },
  { args: ["send", "bob", "hi", "--as", "alice"], group: "mail", lib: "lib/mail/send.ts", notLib: ["lib/slots/", "lib/topics/", "lib/maintenance/gc.ts"] },
  { args: ["recv", "--as", "carol"], group: "mail", lib: "lib/mail/receive.ts", notLib: ["lib/slots/", "lib/topics/", "lib/maintenance/gc.ts"] },
  // Claude Code's PreToolUse hook, before every file edit (issue 23).
  { args: ["hook", "pre-tool-use"], edit: true, group: "hook", lib: "lib/reservations/reserve.ts", notLib: ["lib/mail/", "lib/slots/", "lib/topics/", "lib/tasks/add.ts", "lib/sessions/hooks.ts", "lib/maintenance/gc.ts"] },
];

// A git repository whose src/api.ts alice reserved; the PreToolUse event of bob's Edit of it.
async function reservedEdit(store: string, parent: string): Promise<string> {
  const repo = join(parent, "repo");
  mkdirSync(join(repo, "src"), { recursive: true });
  Bun.spawnSync({ cmd: ["git", "init", "-q", repo] });
  const bus = openBus({ dir: store, env: {} });
  try {
    const o = await bus.reservations.reserve(["src/api.ts"], { as: "alice", cwd: repo });
    if (o.kind !== "done") throw new Error(`reserve: ${o.kind}`);
  } finally {
    await bus.close();
  }
  return JSON.stringify({ session_id: "s", cwd: repo, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: join(repo, "src", "api.ts"), old_string: "a", new_string: "b" } });
}

describe.concurrent("start-up loads only what the command needs", () => {
  for (const c of HOT) {
    test(`a2a ${c.args.join(" ")}`, async () => {
      using d = testStore();
      expect((await a2a(["publish", "ready", "v"], { dir: d.path })).code).toBe(0);
      expect((await a2a(["send", "carol", "for carol", "--as", "dave"], { dir: d.path })).code).toBe(0);
      using work = tempDir();
      const stdin = c.edit ? await reservedEdit(d.path, work.path) : undefined;
      const r = await loaded(c.args, d.path, stdin, c.edit ? { A2A_AGENT: "bob" } : {});
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      if (c.edit) expect(JSON.parse(r.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/reserved by alice/);
      const m = r.modules;
      // The trace saw the command: its own group module and the lib/ module doing the work.
      expect(m).toContain(`cli/commands/${c.group}.ts`);
      expect(m).toContain(c.lib);
      // A plain argv runs through cli/fast.ts: commander is never loaded.
      expect(m).toContain("cli/fast.ts");
      expect(m.filter((f) => f.startsWith("node_modules/commander/"))).toEqual([]);
      // Nothing it does not need.
      const packages = new Set(m.map(pkgOf).filter(Boolean));
      expect(packages.has("@modelcontextprotocol/sdk")).toBe(false);
      expect(packages.has("zod")).toBe(false);
      expect(m.filter((f) => f.startsWith("cli/mcp/"))).toEqual([]);
      expect(m).not.toContain("cli/help.ts");
      expect(m.filter((f) => f.startsWith("cli/commands/") && f !== "cli/commands/index.ts" && f !== `cli/commands/${c.group}.ts`)).toEqual([]);
      // On PostgreSQL lib/pg/engine.ts opens every room's storage at once, so each command loads
      // the other rooms' record modules too: kept, as a compiled status that loads the slot room
      // only was measured no faster (docs/ENGINE.md); the server's round trips are the cost there.
      if (ON_FILES) expect(m.filter((f) => c.notLib.some((l) => f.startsWith(l)))).toEqual([]);
      const ours = m.filter((f) => /^(cli|lib)\/.*\.ts$/.test(f));
      expect(ours.filter((f) => CRYPTO.test(readFileSync(join(ROOT, f), "utf8")))).toEqual([]);
    });
  }

  // A wait's stdout is usually a pipe (x=$(a2a wait ready)): watching it for a reader gone costs
  // bun:ffi and a dlopen, armed only once the command has blocked (cli/run.ts), never for an
  // answer already there. The same wait that blocks does arm it.
  test("a2a wait on a published name, its stdout a pipe, never loads bun:ffi; one that blocks does", async () => {
    using d = testStore();
    expect((await a2a(["publish", "ready", "v"], { dir: d.path })).code).toBe(0);
    const at = await loaded(["wait", "ready"], d.path);
    // The watch is armed 50 ms into the wait: on a directory the answer is one read away; on a
    // database the wait's first query also connects, which a loaded machine can stretch past
    // that, so there only the answer is held.
    expect({ code: at.code, stdout: at.stdout, ffi: ON_FILES && at.modules.some((m) => m.endsWith("bun:ffi")) }).toEqual({ code: 0, stdout: "v", ffi: false });
    const blocked = await loaded(["wait", "never", "--timeout", "1s"], d.path, undefined, { A2A_WATCH: "poll" });
    expect({ code: blocked.code, ffi: blocked.modules.some((m) => m.endsWith("bun:ffi")) }).toEqual({ code: 124, ffi: true });
  });

  // Bun's Buffer costs a start-up ~0.3 M instructions on its first touch, and its from /
  // allocUnsafe / toString as much again (~5% of a2a status): the slot commands' path (records,
  // reads, writes, stdout) does UTF-8 with lib/core/utf8.ts instead, on either engine. `a2a recv`
  // on a directory still reads mail records into Buffers, so the guard is seen to fire.
  test("a2a publish, wait and status never touch the Buffer global; the trace sees one that does", async () => {
    using d = testStore();
    expect((await a2a(["publish", "ready", "v"], { dir: d.path })).code).toBe(0);
    expect((await a2a(["send", "carol", "for carol", "--as", "dave"], { dir: d.path })).code).toBe(0);
    // The PostgreSQL engine still binds a chunk's bytes as a Buffer (lib/pg/slots.ts): append is held on a directory.
    const runs = [["publish", "hot", "x"], ["wait", "ready"], ["status"], ["status", "hot", "--json"], ["start", "job", "task"], ...(ON_FILES ? [["append", "job", "line"]] : [])];
    for (const args of runs) {
      const r = await loaded(args, d.path);
      expect({ args, code: r.code, buffer: r.buffer }).toEqual({ args, code: 0, buffer: false });
    }
    if (ON_FILES) expect((await loaded(["recv", "--as", "carol"], d.path)).buffer).toBe(true);
  });

  test("a2a --version loads nothing but the entry and package.json", async () => {
    using d = testStore();
    const r = await loaded(["--version"], d.path);
    expect(r.code).toBe(0);
    expect(r.modules.filter((f) => !f.startsWith("tests/")).sort()).toEqual(["cli/main.ts", "package.json"]);
  });

  test("an argv that is not plain (a usage error, --help) is commander's: it loads it and says what is wrong", async () => {
    using d = testStore();
    for (const args of [["publish", "x", "v", "--bogus"], ["publish", "--help"], ["wait"]]) {
      const r = await loaded(args, d.path);
      expect({ args, commander: r.modules.includes("node_modules/commander/index.js") }).toEqual({ args, commander: true });
    }
  });

  test("a2a --help builds every command but still loads neither the MCP SDK nor zod", async () => {
    using d = testStore();
    const r = await loaded(["--help"], d.path);
    expect(r.code).toBe(0);
    for (const g of GROUPS) expect(r.modules).toContain(`cli/commands/${g}.ts`);
    expect(r.modules).toContain("cli/help.ts");
    const packages = new Set(r.modules.map(pkgOf).filter(Boolean));
    expect([...packages].filter((p) => p === "zod" || p === "@modelcontextprotocol/sdk")).toEqual([]);
  });

  test("a2a mcp is the command that loads the MCP SDK and zod (the guard can see them)", async () => {
    using d = testStore();
    const r = await loaded(["mcp"], d.path); // stdin is /dev/null: the server starts and ends at once
    expect(r.code).toBe(0);
    const packages = new Set(r.modules.map(pkgOf).filter(Boolean));
    expect(packages.has("@modelcontextprotocol/sdk")).toBe(true);
    expect(packages.has("zod")).toBe(true);
    expect(r.modules).toContain("cli/commands/mcp.ts");
    expect(r.modules).not.toContain("cli/commands/slots.ts");
  });
});
