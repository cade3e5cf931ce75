// `a2a hook pre-tool-use` through the compiled binary, fed the PreToolUse JSON Claude Code sends
// (tests/e2e/claude-code.test.ts runs it under the real Claude Code): an edit of a file another
// agent holds exclusively is denied with the holder named; everything else is silent; a store
// a2a cannot use lets the edit through with one line on stderr. Reservations are made through
// the bus in-process (lib/bus.ts), as `a2a reserve` makes them. Then the real Claude Code
// (fixtures/claude.ts, offline against the Messages API stand-in): the denied Edit, its reason
// in the model's next request, the file unchanged; and the edit after the release.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openBus } from "../../lib/bus";
import { a2a, collect, tempDir, testStore } from "../harness/run";
import { claude, setup, skipped } from "./fixtures/claude";
import { standIn, toolResults, type Request } from "./fixtures/messages-api";

setDefaultTimeout(60_000);

// A git repository (git init: the hook reads .git itself) with src/api.ts in it.
function gitRepo(parent: string, name = "repo"): string {
  const repo = join(parent, name);
  mkdirSync(join(repo, "src"), { recursive: true });
  const r = Bun.spawnSync({ cmd: ["git", "init", "-q", repo], stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git init: ${r.stderr}`);
  writeFileSync(join(repo, "src", "api.ts"), "export {};\n");
  return repo;
}

// What Claude Code writes on the hook's stdin before an Edit (Claude Code 2.1).
const editEvent = (cwd: string, tool: string, input: Record<string, unknown>) => ({
  session_id: "3f1c0a52-0d6b-4a8e-9d43-5b2f7f9c1e01",
  transcript_path: join(cwd, ".transcript.jsonl"),
  cwd,
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: tool,
  tool_input: input,
  tool_use_id: "toolu_01",
});

const hook = (store: string, event: object, env: Record<string, string> = {}) => a2a(["hook", "pre-tool-use"], { dir: store, stdin: JSON.stringify(event), env, cwd: (event as any).cwd });

async function reserve(store: string, cwd: string, as: string, patterns: string[], opts: { shared?: boolean; reason?: string } = {}) {
  const bus = openBus({ dir: store, env: {} });
  try {
    const o = await bus.reservations.reserve(patterns, { as, cwd, ...opts });
    if (o.kind !== "done") throw new Error(`reserve ${patterns.join(" ")} as ${as}: ${o.kind}`);
  } finally {
    await bus.close();
  }
}

async function release(store: string, cwd: string, as: string, patterns: string[]) {
  const bus = openBus({ dir: store, env: {} });
  try {
    await bus.reservations.release(patterns, { as, cwd });
  } finally {
    await bus.close();
  }
}

describe("a2a hook pre-tool-use", () => {
  test("an edit of a file another agent holds exclusively is denied, naming holder, pattern, reason, expiry and what to do", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, "alice", ["src/**"], { reason: "refactoring the API" });
    const file = join(repo, "src", "api.ts");
    const asBob = { A2A_AGENT: "bob" };
    for (const [tool, input] of [
      ["Edit", { file_path: file, old_string: "export {};", new_string: "export const x = 1;", replace_all: false }],
      ["Write", { file_path: join(repo, "src", "new.ts"), content: "x" }],
      ["MultiEdit", { file_path: file, edits: [{ old_string: "a", new_string: "b" }] }],
      ["NotebookEdit", { notebook_path: join(repo, "src", "nb.ipynb"), new_source: "1" }],
    ] as const) {
      const r = await hook(s.path, editEvent(repo, tool, input), asBob);
      expect({ tool, code: r.code, stderr: r.stderr }).toEqual({ tool, code: 0, stderr: "" });
      const out = JSON.parse(r.stdout);
      expect(Object.keys(out)).toEqual(["hookSpecificOutput"]);
      expect(out.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
      const why: string = out.hookSpecificOutput.permissionDecisionReason;
      expect(why).toMatch(/^a2a: src\/\S+ is reserved by alice \(pattern src\/\*\*, exclusive, their reason: "refactoring the API"\) until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(60 min from now\), so this edit was not made\./);
      expect(why).toContain(`a2a reserve ${(input as any).file_path ?? (input as any).notebook_path}`);
      expect(why).toContain('a2a send alice "..."');
    }
    // A path relative to the session's directory, from a subdirectory, is the same file.
    const sub = join(repo, "src");
    const rel = await hook(s.path, editEvent(sub, "Edit", { file_path: "api.ts", old_string: "a", new_string: "b" }), asBob);
    expect(JSON.parse(rel.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/^a2a: src\/api\.ts is reserved by alice/);
  });

  test("a holder name with terminal escapes (a record written by hand) reaches the deny reason inert, in the send hint too (review finding 14b)", async () => {
    using d = tempDir();
    using s = tempDir("a2a-store-"); // a file store: the record is rewritten by hand
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, "alice", ["src/**"]);
    const dir = join(s.path, "reservations");
    const [name] = readdirSync(dir).filter((f) => f.endsWith(".json"));
    const hostile = "al\u001b]0;owned\u0007\u001b[2Jice";
    writeFileSync(join(dir, name), readFileSync(join(dir, name), "utf8").replace('"holder":"alice"', `"holder":${JSON.stringify(hostile)}`));
    const r = await hook(s.path, editEvent(repo, "Edit", { file_path: join(repo, "src", "api.ts"), old_string: "a", new_string: "b" }), { A2A_AGENT: "bob" });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const why: string = JSON.parse(r.stdout).hookSpecificOutput.permissionDecisionReason;
    expect(why).toContain("a2a send al\\x1b]0;owned\\x07\\x1b[2Jice");
    expect(why).not.toMatch(/[\u0000-\u001f\u007f]/);
  });

  test("silent (exit 0, nothing on stdout) for the holder, a shared reservation, a free file, a path outside the repository, a tool that writes no file", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, "alice", ["src/api.ts"]);
    await reserve(s.path, repo, "carol", ["docs/**"], { shared: true });
    const silent = { code: 0, stdout: "", stderr: "" };
    const asBob = { A2A_AGENT: "bob" };
    const edit = (file: string) => ({ file_path: file, old_string: "a", new_string: "b" });
    // The holder itself.
    expect(await hook(s.path, editEvent(repo, "Edit", edit(join(repo, "src", "api.ts"))), { A2A_AGENT: "alice" })).toEqual(silent);
    // A shared reservation does not keep anyone out of an edit.
    expect(await hook(s.path, editEvent(repo, "Write", { file_path: join(repo, "docs", "x.md"), content: "x" }), asBob)).toEqual(silent);
    // A file nobody reserved.
    expect(await hook(s.path, editEvent(repo, "Edit", edit(join(repo, "src", "other.ts"))), asBob)).toEqual(silent);
    // Outside the repository (the same relative name elsewhere).
    const elsewhere = join(d.path, "elsewhere");
    mkdirSync(join(elsewhere, "src"), { recursive: true });
    expect(await hook(s.path, editEvent(repo, "Edit", edit(join(elsewhere, "src", "api.ts"))), asBob)).toEqual(silent);
    // Tools that write no file, even naming the reserved one.
    expect(await hook(s.path, editEvent(repo, "Read", { file_path: join(repo, "src", "api.ts") }), asBob)).toEqual(silent);
    expect(await hook(s.path, editEvent(repo, "Bash", { command: `echo x > ${join(repo, "src", "api.ts")}` }), asBob)).toEqual(silent);
    // The control: the same hook does deny bob's edit of the reserved file.
    expect(JSON.parse((await hook(s.path, editEvent(repo, "Edit", edit(join(repo, "src", "api.ts"))), asBob)).stdout).hookSpecificOutput.permissionDecision).toBe("deny");
    // After alice releases it, bob's edit is silent too.
    await release(s.path, repo, "alice", ["src/api.ts"]);
    expect(await hook(s.path, editEvent(repo, "Edit", edit(join(repo, "src", "api.ts"))), asBob)).toEqual(silent);
  });

  test("without A2A_AGENT the session's name is who edits: the name a2a mcp takes in the directory", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path, "shop");
    await reserve(s.path, repo, "shop", ["src/api.ts"]);
    const ev = editEvent(repo, "Edit", { file_path: join(repo, "src", "api.ts"), old_string: "a", new_string: "b" });
    expect(await hook(s.path, ev)).toEqual({ code: 0, stdout: "", stderr: "" }); // "shop" is this session: its own
    await release(s.path, repo, "shop", ["src/api.ts"]);
    await reserve(s.path, repo, "alice", ["src/api.ts"]);
    expect(JSON.parse((await hook(s.path, ev)).stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/reserved by alice/);
  });

  test("the README's two agents through the CLI: alice reserves, bob's edit is denied, alice releases, bob's edit goes", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    const r = await a2a(["reserve", "src/**", "--as", "alice", "--reason", "moving to v2", "--ttl", "2h"], { dir: s.path, cwd: repo });
    expect(r.code).toBe(0);
    const ev = editEvent(repo, "Edit", { file_path: join(repo, "src", "users.ts"), old_string: "a", new_string: "b" });
    const denied = await hook(s.path, ev, { A2A_AGENT: "bob" });
    expect(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/^a2a: src\/users\.ts is reserved by alice \(pattern src\/\*\*, exclusive, their reason: "moving to v2"\) until \S+ \(120 min from now\)/);
    expect((await a2a(["release", "src/**", "--as", "alice"], { dir: s.path, cwd: repo })).code).toBe(0);
    expect(await hook(s.path, ev, { A2A_AGENT: "bob" })).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("a store a2a cannot use lets the edit through: no answer, one line on stderr, exit 1 (never 2); input that is not JSON is denied", async () => {
    using d = tempDir();
    const repo = gitRepo(d.path);
    writeFileSync(join(d.path, "afile"), "x");
    const broken = join(d.path, "afile", "store"); // under a file: cannot be a store
    const ev = editEvent(repo, "Edit", { file_path: join(repo, "src", "api.ts"), old_string: "a", new_string: "b" });
    const r = await hook(broken, ev, { A2A_AGENT: "bob" });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(/^a2a: hook pre-tool-use: .*afile\/store.*\n$/);
    // Input that is not JSON is no edit a2a could check: denied, saying so (hook-side-doors.test.ts).
    using s = testStore();
    const bad = await a2a(["hook", "pre-tool-use"], { dir: s.path, stdin: "{not json", cwd: repo });
    expect({ code: bad.code, stderr: bad.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(bad.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  });

  test("a store that does not answer (a database server that accepts and says nothing) lets the edit through after the hook's deadline, not the connection's", async () => {
    using d = tempDir();
    const repo = gitRepo(d.path);
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }); // accepts, never answers
    try {
      const ev = editEvent(repo, "Edit", { file_path: join(repo, "src", "api.ts"), old_string: "a", new_string: "b" });
      const r = await hook(`postgres://postgres@127.0.0.1:${silent.port}/a2a`, ev, { A2A_AGENT: "bob" });
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
      expect(r.stderr).toMatch(/^a2a: hook pre-tool-use: the store postgres:\/\/postgres@127\.0\.0\.1:\d+\/a2a did not answer within 3 s: the edit goes ahead unchecked; a2a doctor says what is wrong\n$/);
    } finally {
      silent.stop(true);
    }
  });
});

// The model's last tool call in a request's conversation (what the new tool results answer).
const lastToolCall = (r: Request): string | undefined => {
  const msgs: any[] = r.body.messages ?? [];
  const last = [...msgs].reverse().find((m) => m.role === "assistant");
  const uses = (Array.isArray(last?.content) ? last.content : []).filter((c: any) => c.type === "tool_use");
  return uses.at(-1)?.name;
};

describe("real Claude Code", () => {
  test("an Edit of a file another agent reserved is denied, the model's next request names the holder, the file is unchanged; after release the same edit goes through", async () => {
    if (await skipped("the PreToolUse reservation hook")) return;
    using d = tempDir();
    using store = testStore();
    const o = { home: join(d.path, "home"), store: store.path };
    mkdirSync(o.home);
    const set = await collect(setup(o));
    expect(set.code).toBe(0);
    const repo = gitRepo(d.path, "proj");
    const file = join(repo, "src", "api.ts");
    writeFileSync(file, "export const version = 1;\n");
    await reserve(store.path, repo, "alice", ["src/**"], { reason: "rewriting the API" });
    // The model: read the file (Edit wants it read first), edit it, then say what the edit answered.
    const api = standIn((r) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "Edit")) return [{ text: "ok" }]; // a side request
      const after = lastToolCall(r);
      if (!after) return [{ tool: "Read", input: { file_path: file } }];
      if (after === "Read") return [{ tool: "Edit", input: { file_path: file, old_string: "version = 1", new_string: "version = 2", replace_all: false } }];
      return [{ text: `edit answered: ${toolResults(r).join(" ")}` }];
    });
    const run = () => claude(["-p", "bump the version in src/api.ts", "--output-format", "json", "--allowedTools", "mcp__a2a__* Read Edit"], repo, { ...o, apiUrl: api.url });
    try {
      const s = await run();
      expect(s.code).toBe(0);
      const next = api.requests.find((r) => lastToolCall(r) === "Edit")!;
      expect(next).toBeDefined();
      const answered = toolResults(next).join(" ");
      expect(answered).toMatch(/src\/api\.ts is reserved by alice \(pattern src\/\*\*, exclusive, their reason: \\?"rewriting the API\\?"\)/);
      expect(answered).toContain("a2a send alice");
      expect(readFileSync(file, "utf8")).toBe("export const version = 1;\n");

      await release(store.path, repo, "alice", ["src/**"]);
      api.requests.length = 0;
      const again = await run();
      expect(again.code).toBe(0);
      const edited = api.requests.find((r) => lastToolCall(r) === "Edit")!;
      expect(toolResults(edited).join(" ")).not.toMatch(/reserved by/);
      expect(readFileSync(file, "utf8")).toBe("export const version = 2;\n");
    } finally {
      api.close();
    }
  });
});
