// keep_session (issue 36) against a hostile agent and a careless user, through `a2a crew up` and
// the compiled binary: the agent is a stand-in `claude` on the worker's PATH that prints what a
// hostile model (or a broken CLI) would, or the real claude -p against a model stand-in.
//   - a session's text saying "Task X is done." of a task it did not do this session (done before
//     it started) is not counted as done, nor resets the give-up count;
//   - usage an agent reports as negative, or beyond any number, is not added to the worker's totals;
//   - `crew restart` of a keep_session worker: a held task given back (no attempt used), a new
//     session; one in backoff starts its session again at once (as a per-task worker claims again).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { a2a, BIN, descendants, exitWithin, readUntil, ROOT, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { skipped as claudeSkipped } from "./fixtures/claude";
import { GIT_ENV, userRepo } from "./fixtures/crew";
import { newText, standIn, type Request } from "./fixtures/messages-api";

setDefaultTimeout(240_000);

const toml = (v: unknown): string => (typeof v === "object" ? `{ ${Object.entries(v as object).map(([k, x]) => `${k} = ${toml(x)}`).join(", ")} }` : JSON.stringify(v));

// A stand-in `claude`: reads its prompt, prints `lines` on stdout (its stream-json events) and exits 0.
function fakeClaude(dir: string, lines: unknown[]): string {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "out.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\ncat '${join(bin, "out.jsonl")}'\n`);
  chmodSync(join(bin, "claude"), 0o755);
  return bin;
}

function crewFile(repo: string, env: Record<string, string>, extra: string[]): string {
  const file = join(repo, "crew.toml");
  writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "sal"', 'agent = "claude"', 'queues = ["work"]', "keep_session = true", ...extra, `env = ${toml({ ...GIT_ENV, ...env })}`, ""].join("\n"));
  return file;
}

function upSession(file: string, repo: string, store: string) {
  const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
  const p = spawnA2A(["crew", "up", file], { dir: store, cwd: repo, env: { PATH } });
  let said = "";
  return {
    p,
    async until(re: RegExp, limitMs = 60_000) {
      if (!re.test(said)) said += await readUntil(p.stderr as ReadableStream<Uint8Array>, (t) => re.test(said + t), limitMs);
      const m = said.match(re);
      if (!m) throw new Error(`crew up never said ${re}; it said:\n${said}`);
      return m;
    },
    [Symbol.dispose]() {
      if (p.exitCode !== null || p.signalCode !== null) return;
      for (const pid of descendants(p.pid)) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // not a group leader, or gone
        }
      }
      p.kill("SIGKILL");
    },
  };
}

// Whether process `pid` runs: there and not a zombie (whose parent died: the container's first
// process may never reap it).
const alive = (pid: number): boolean => {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1][0] !== "Z";
  } catch {
    return false;
  }
};

const status = async (store: string) => JSON.parse((await a2a(["crew", "--json"], { dir: store })).stdout)[0].workers[0];
const show = async (store: string, id: string) => JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store })).stdout);

describe("a2a crew up: keep_session against a hostile agent", () => {
  test("a session saying a task is done that it did not do is not counted, and does not keep it from giving up", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    // A task of its queue, done by someone else before the crew starts.
    const id = (await a2a(["task", "add", "work", "someone else's"], { dir: store.path })).stdout.trim();
    const c = JSON.parse((await a2a(["task", "claim", "work", "--as", "other", "--json"], { dir: store.path })).stdout);
    expect(await a2a(["task", "done", id, c.token, "by other"], { dir: store.path })).toMatchObject({ code: 0 });
    const said = `Task ${id} is done.`;
    const bin = fakeClaude(d.path, [{ type: "assistant", message: { content: [{ type: "text", text: said }] } }, { type: "result", subtype: "success", result: said }]);
    using sup = upSession(crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, ["restarts = 2", 'backoff = "0"']), repo, store.path);
    expect(await exitWithin(sup.p, 60_000)).toBe(1); // gave up: two session ends in a row, nothing done
    expect(await status(store.path)).toMatchObject({ state: "gave-up", done: 0, failures: 2 });
    expect(await show(store.path, id)).toMatchObject({ state: "done", result: "by other", attempt: 1 });
  });

  test("usage an agent reports as negative or beyond any number is left out of the worker's totals", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const bin = fakeClaude(d.path, [
      { type: "result", subtype: "success", result: "ok", usage: { input_tokens: 1e308, output_tokens: -50, cache_read_input_tokens: "9" }, total_cost_usd: -5 },
    ]);
    using sup = upSession(crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, ["restarts = 2", 'backoff = "0"']), repo, store.path);
    expect(await exitWithin(sup.p, 60_000)).toBe(1);
    expect((await status(store.path)).usage).toEqual({ input: 0, output: 0, cost: null });
  });

  test("a session's escape sequences and control characters reach no terminal through its reasons: the supervisor's lines, the status, the task it held", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const id = (await a2a(["task", "add", "work", "one"], { dir: store.path })).stdout.trim();
    // It claims (as the worker: A2A_AGENT), then prints a title, a clear screen, colours, a bell,
    // a carriage return, and exits 1 holding the task.
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\n'${BIN}' task claim work >/dev/null 2>&1 || exit 9\nprintf 'evil \\033]0;pwned\\007\\033[2J\\033[31mred\\033[0m\\007 \\001x\\r\\nlast line\\n'\nexit 1\n`);
    chmodSync(join(bin, "claude"), 0o755);
    using sup = upSession(crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, ["restarts = 1"]), repo, store.path);
    expect(await exitWithin(sup.p, 60_000)).toBe(1);
    const said = await new Response(sup.p.stderr).text().catch(() => "");
    const reason = (await show(store.path, id)).attempts[0].reason;
    expect(reason).toBe("its session exited 1 without ending the task: evil red   x\nlast line");
    const w = await status(store.path);
    expect(w.reason).toMatch(/^gave up after 1 session ends in a row with no task done between \(last: exited with exit 1: evil red   x\nlast line\)$/);
    expect(said).toContain("its session ended: exited with exit 1: evil red   x\n");
    expect(said).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
    // The log keeps the output as it came.
    expect((await a2a(["crew", "logs", "sal"], { dir: store.path })).stdout).toContain("\x1b]0;pwned\x07");
  });

  test("a claim the session makes from a queue not its own is not left held: failed with the session's exit, like its own", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const id = (await a2a(["task", "add", "other", "not sal's"], { dir: store.path })).stdout.trim();
    // The model claims from queue other, then ends its turn: claude -p exits 0 holding it.
    const api = standIn((r: Request) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_claim")) return [{ text: "ok" }];
      if (/\\*"queue\\*":\\*"other\\*"/.test(newText(r))) return [{ text: "I stop here" }];
      return [{ tool: "mcp__a2a__task_claim", input: { queue: "other" } }];
    });
    const env = { HOME: home, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "test-key-offline", ENABLE_TOOL_SEARCH: "false", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1" };
    using sup = upSession(crewFile(repo, env, ["restarts = 1"]), repo, store.path);
    try {
      expect(await exitWithin(sup.p, 120_000)).toBe(1);
      const t = await show(store.path, id);
      expect({ state: t.state, attempts: t.attempts.map((a: any) => [a.attempt, a.assignee, a.reason.split(":")[0]]) }).toEqual({ state: "ready", attempts: [[1, "sal", "its session exited 0 without ending the task"]] });
      expect(JSON.parse((await a2a(["task", "list", "--state", "claimed", "--json"], { dir: store.path })).stdout)).toEqual([]);
    } finally {
      api.close();
    }
  });

  test("after a kill -9 of the supervisor, its session ends with it (the kernel's parent-death signal), and the next one's session does not take up the claim the dead one's session left: it runs out and goes back to the queue", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const id = (await a2a(["task", "add", "work", "one"], { dir: store.path })).stdout.trim();
    // Each session claims what it can (a lease of 3 s), then works on it for ever.
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\n'${BIN}' task claim work --lease 3 >/dev/null 2>&1\nexec sleep 974.25\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const file = crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, []);
    writeFileSync(file, `lease = "2s"\n${readFileSync(file, "utf8")}`);
    using first = upSession(file, repo, store.path);
    const pid = Number((await first.until(/ sal: session pid (\d+)\n/))[1]);
    await until(() => JSON.parse(Bun.spawnSync([BIN, "task", "show", id, "--json"], { env: { ...process.env, A2A_DIR: store.path } }).stdout.toString()).state === "claimed", 30_000, "the session's claim");
    expect(alive(pid)).toBe(true);
    first.p.kill("SIGKILL");
    await first.p.exited;
    // The session (a process that never ends by itself) is ended by the kernel with its
    // supervisor: it claims nothing more and spends nothing more meanwhile.
    await until(() => !alive(pid), 30_000, "the dead supervisor's session to end");
    // Its lease runs out (a wait on it), then the next supervisor starts its own session.
    const lease = `crewhost.long.${hostname().replace(/[^A-Za-z0-9._-]/g, "-")}`;
    expect(await a2a(["lease", "take", lease, "--as", "probe", "--wait", "--timeout", "60"], { dir: store.path })).toMatchObject({ code: 0 });
    expect(await a2a(["lease", "release", lease, "--as", "probe"], { dir: store.path })).toMatchObject({ code: 0 });
    using second = upSession(file, repo, store.path);
    await second.until(/ sal: session pid \d+\n/);
    // Not renewed by the new session: the claim runs out, an expired attempt, and the task is ready.
    await until(() => JSON.parse(Bun.spawnSync([BIN, "task", "show", id, "--json"], { env: { ...process.env, A2A_DIR: store.path } }).stdout.toString()).state === "ready", 30_000, "the left claim to run out", 100);
    expect((await show(store.path, id)).attempts).toEqual([expect.objectContaining({ attempt: 1, outcome: "expired", assignee: "sal" })]);
    expect(await status(store.path)).toMatchObject({ state: "waiting", task: null });
    expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
    expect(await exitWithin(second.p, 60_000)).toBe(0);
  });

  test("an idle session does not publish the crew's status at each look: it is written when something changes", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\nexec sleep 974.5\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const file = crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, []);
    writeFileSync(file, `lease = "3s"\n${readFileSync(file, "utf8")}`);
    using sup = upSession(file, repo, store.path);
    await sup.until(/ sal: session pid \d+\n/);
    const crew = async () => JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0];
    const before = await crew();
    expect(before.workers[0]).toMatchObject({ state: "waiting", task: null });
    // Two renewals of the crew's lease (every second): several looks at the session (every 0.5 s).
    const lease = `crewhost.long.${hostname().replace(/[^A-Za-z0-9._-]/g, "-")}`;
    const expiry = async () => JSON.parse((await a2a(["lease", "list", lease, "--json"], { dir: store.path })).stdout)[0].expires_at;
    const bound = Date.now() + 30_000;
    for (let seen = await expiry(), renewals = 0; renewals < 2; ) {
      if (Date.now() > bound) throw new Error("the crew's lease was not renewed twice in 30 s");
      const now = await expiry();
      if (now !== seen) (seen = now), renewals++;
    }
    expect((await crew()).updated_at).toBe(before.updated_at);
    expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
    expect(await exitWithin(sup.p, 60_000)).toBe(0);
  });

  test("crew restart of a keep_session worker in backoff starts its session again at once", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const bin = fakeClaude(d.path, [{ type: "result", subtype: "success", result: "nothing to do" }]);
    using sup = upSession(crewFile(repo, { PATH: `${bin}:${process.env.PATH}` }, ["restarts = 5", 'backoff = "10m"']), repo, store.path);
    await sup.until(/sal: its session ended: exited with exit 0/);
    expect(await status(store.path)).toMatchObject({ state: "backoff", failures: 1 });
    const restarting = a2a(["crew", "restart", "sal"], { dir: store.path });
    // The backoff cut short: a second session, which ends as the first did, well before the first
    // session's backoff (10m, capped at 60 s) would have ended.
    await sup.until(/its session ended: [^]*its session ended: exited with exit 0/, 30_000);
    expect(await restarting).toMatchObject({ code: 0 });
    expect(await status(store.path)).toMatchObject({ restarts: 1, failures: 2 });
    expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
    expect(await exitWithin(sup.p, 60_000)).toBe(0);
  });

  test("crew restart of a keep_session worker holding a task gives it back (no attempt used) and starts a new session, which does it", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const held = new Promise<void>((r) => (claimed = r));
    let claims = 0;
    // The model works on its first claim until the restart; the next session's claim it ends.
    const api = standIn(async (r: Request) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_claim")) return [{ text: "ok" }];
      const m = newText(r).match(/\\*"id\\*":\\*"(\d+-[0-9a-f]{8})\\*",\\*"queue\\*":\\*"work\\*",\\*"attempt\\*":(\d+),\\*"token\\*":\\*"(\d+-[0-9a-f]{16})/);
      if (m && ++claims === 1) {
        claimed();
        await released;
        return [{ text: "cut short" }];
      }
      if (m) return [{ tool: "mcp__a2a__task_done", input: { id: m[1], token: m[3], result: `done at attempt ${m[2]}` } }];
      return [{ tool: "mcp__a2a__task_claim", input: { queue: "work", wait: true, timeout: 20 } }];
    });
    const env = { HOME: home, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "test-key-offline", ENABLE_TOOL_SEARCH: "false", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1" };
    using sup = upSession(crewFile(repo, env, []), repo, store.path);
    try {
      const first = Number((await sup.until(/ sal: session pid (\d+)\n/))[1]);
      const id = (await a2a(["task", "add", "work", "a long one"], { dir: store.path })).stdout.trim();
      await held;
      expect(await a2a(["crew", "restart", "sal"], { dir: store.path })).toMatchObject({ code: 0 });
      const second = Number((await sup.until(/ sal: session pid \d+\n[^]* sal: session pid (\d+)\n/))[1]);
      expect(second).not.toBe(first);
      const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
      expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/^done at attempt \d+$/) });
      expect((await show(store.path, id)).attempts).toEqual([]); // the given-back claim is no attempt
      expect(await status(store.path)).toMatchObject({ restarts: 1, failed: 0, failures: 0 });
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(await status(store.path)).toMatchObject({ state: "stopped", done: 1, failed: 0 });
    } finally {
      release();
      api.close();
    }
  });
});
