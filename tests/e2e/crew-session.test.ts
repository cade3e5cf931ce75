// keep_session (issue 36): a crew worker whose coding agent runs as one long session that claims
// its tasks itself (task_claim with wait), ends each (task_done) and claims again, through
// `a2a crew up` and the compiled binary, with each real agent CLI (claude -p, codex exec, gemini
// -p, opencode run) against its model stand-in. The supervisor starts it once and watches the
// claims it holds: two tasks are done by one agent process (its pid unchanged), each once at
// attempt 1; crew down ends the session and leaves no claim, lease or process; a task held past
// time_limit ends the session and fails that attempt, and the restarted session does it; a stop
// gives back what the session holds.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, descendants, exitWithin, readUntil, ROOT, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { GIT_ENV, userRepo } from "./fixtures/crew";
import { skipped as claudeSkipped } from "./fixtures/claude";
import { newText, standIn, type Request } from "./fixtures/messages-api";
import { skipped as codexSkipped } from "./fixtures/codex";
import { newText as newContentsText, standIn as geminiStandIn } from "./fixtures/gemini-api";
import { newText as newChatText, standIn as chatStandIn } from "./fixtures/openai-chat";
import { OPENCODE, provider as opencodeProvider, skipPluginInstall } from "./fixtures/opencode";
import { newText as newItemsText, standIn as responsesStandIn } from "./fixtures/openai-responses";

setDefaultTimeout(240_000);

const toml = (v: unknown): string => (typeof v === "object" ? `{ ${Object.entries(v as object).map(([k, x]) => `${k} = ${toml(x)}`).join(", ")} }` : JSON.stringify(v));

// The model of a session that loops: claim with wait, end the task it got, claim again.
function looping(r: Request) {
  if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_claim")) return [{ text: "ok" }];
  const calls = (r.body.messages as any[]).flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : [])).filter((c: any) => c.type === "tool_use");
  const last = calls.at(-1)?.name;
  const got = newText(r).match(/task_done\(id=\\*"([^"\\]+)\\*", token=\\*"(\d+-[0-9a-f]{16})/);
  if (last === "mcp__a2a__task_claim" && got) return [{ tool: "mcp__a2a__task_done", input: { id: got[1], token: got[2], result: `session did ${got[1]}` } }];
  return [{ tool: "mcp__a2a__task_claim", input: { queue: "work", wait: true, timeout: 20 } }];
}

// The crew file of one keep_session claude worker "sal" on queue work, against `api`.
function sessionCrew(repo: string, home: string, api: { url: string }, extra: string[] = []): string {
  const env = { HOME: home, ANTHROPIC_BASE_URL: api.url, ANTHROPIC_API_KEY: "test-key-offline", ENABLE_TOOL_SEARCH: "false", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", ...GIT_ENV };
  const file = join(repo, "crew.toml");
  writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "sal"', 'agent = "claude"', 'queues = ["work"]', "keep_session = true", ...extra, `env = ${toml(env)}`, ""].join("\n"));
  return file;
}

// `a2a crew up` of that file, its stderr read as it comes; disposed: nothing of it left running.
function upSession(file: string, repo: string, store: string, env: Record<string, string> = {}) {
  const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
  const p = spawnA2A(["crew", "up", file], { dir: store, cwd: repo, env: { PATH, ...env } });
  let said = "";
  return {
    p,
    get said() {
      return said;
    },
    async until(re: RegExp) {
      if (!re.test(said)) said += await readUntil(p.stderr as ReadableStream<Uint8Array>, (t) => re.test(said + t), 60_000);
      return said.match(re)!;
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

// A task claimed in this request's new tool results: its id, token and attempt.
const claimedIn = (r: Request) => {
  const m = newText(r).match(/\\*"id\\*":\\*"(\d+-[0-9a-f]{8})\\*",\\*"queue\\*":\\*"work\\*",\\*"attempt\\*":(\d+),\\*"token\\*":\\*"(\d+-[0-9a-f]{16})/);
  return m ? { id: m[1], attempt: Number(m[2]), token: m[3] } : undefined;
};

describe("a2a crew up: keep_session", () => {
  test("a keep_session Claude Code worker does two tasks in one agent process, each done once; crew down ends it and leaves nothing held", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const api = standIn(looping);
    using sup = upSession(sessionCrew(repo, home, api, ['time_limit = "2m"']), repo, store.path);
    try {
      const pid = Number((await sup.until(/ sal: session pid (\d+)\n/))[1]);
      const ids: string[] = [];
      // One task, then the next once the first is done: the same session claims both.
      for (let i = 1; i <= 2; i++) {
        const id = (await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim();
        ids.push(id);
        const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
        expect({ code: waited.code, stdout: waited.stdout, stderr: waited.stderr }).toEqual({ code: 0, stdout: `session did ${id}`, stderr: "" });
        const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
        expect({ state: t.state, attempt: t.attempt }).toEqual({ state: "done", attempt: 1 }); // once, at the first attempt
      }
      // One agent process did both: started once, still the one running.
      const status = JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0];
      expect(status.workers[0].proc?.pid).toBe(pid);
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("claude");
      expect(api.requests.filter((r) => JSON.stringify(r.body.messages?.[0] ?? "").includes("never end yourself")).length).toBeGreaterThan(0);
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      // The session's log, complete: both tasks said done, no claim token (the session's own
      // claims bring them, so they are replaced by their pattern).
      const log = (await a2a(["crew", "logs", "sal"], { dir: store.path })).stdout;
      for (const id of ids) expect(log).toContain(`[a2a crew] task ${id} attempt 1: done`);
      expect(log).toContain("[a task's token]");
      expect(log).not.toMatch(/\b\d+-[0-9a-f]{16}\b/);
      expect(JSON.parse((await a2a(["task", "list", "work", "--json"], { dir: store.path })).stdout).map((t: any) => t.state)).toEqual(["done", "done"]);
      expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 2, failed: 0, failures: 0 }); // never restarted
    } finally {
      api.close();
    }
  });

  test("a long session's log starts again once over its bound, rather than leaving the rest out", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const api = standIn(looping);
    // A small bound (the bus's limit, A2A_MAX_BYTES): Claude Code's start-up events alone fill it.
    using sup = upSession(sessionCrew(repo, home, api), repo, store.path, { A2A_MAX_BYTES: "16384" });
    try {
      await sup.until(/ sal: session pid (\d+)\n/);
      const ids: string[] = [];
      for (let i = 1; i <= 3; i++) {
        ids.push((await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim());
        expect(await a2a(["task", "wait", ids.at(-1)!, "--timeout", "120"], { dir: store.path })).toMatchObject({ code: 0 });
      }
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      const log = (await a2a(["crew", "logs", "sal"], { dir: store.path })).stdout;
      expect(log).toStartWith("-- session (queues work), continued (the earlier output was over 16384 bytes)\n");
      expect(log).toContain(`[a2a crew] task ${ids[2]} attempt 1: done`);
      expect(log).not.toContain("left out of the log");
    } finally {
      api.close();
    }
  });

  test("a task held past time_limit ends the session and fails that attempt; the session is started again and does the task at attempt 2", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    // Attempt 1: the model never answers after the claim (a stuck turn); later ones end the task.
    const api = standIn(async (r) => {
      const c = claimedIn(r);
      if (c?.attempt === 1) {
        await released;
        return [{ text: "too late" }];
      }
      if (c) return [{ tool: "mcp__a2a__task_done", input: { id: c.id, token: c.token, result: `session did ${c.id} at attempt ${c.attempt}` } }];
      return looping(r);
    });
    using sup = upSession(sessionCrew(repo, home, api, ['time_limit = "3s"', 'backoff = "1s"']), repo, store.path);
    try {
      const first = Number((await sup.until(/ sal: session pid (\d+)\n/))[1]);
      const id = (await a2a(["task", "add", "work", "the stuck one"], { dir: store.path })).stdout.trim();
      const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
      expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: `session did ${id} at attempt 2` });
      const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
      expect(t.attempts).toEqual([expect.objectContaining({ attempt: 1, assignee: "sal", outcome: "failed", reason: "time limit 3s reached" })]);
      // Two sessions: the first one ended (its process gone), a second one started.
      const second = Number((await sup.until(/ sal: session pid \d+\n[^]* sal: session pid (\d+)\n/))[1]);
      expect(second).not.toBe(first);
      await until(() => !existsSync(`/proc/${first}`), 30_000, "the first session's process to be gone");
      expect(sup.said).toContain(`sal: its session ended: time limit 3s reached on task ${id}`);
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 1, failed: 1 });
    } finally {
      release();
      api.close();
    }
  });

  test("a session that exits holding a task fails that attempt and is started again; after `restarts` ends in a row with no task done the worker gives up", async () => {
    if (await claudeSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    // The model claims, then ends its turn with the task unfinished: claude -p exits 0.
    const api = standIn((r) => (claimedIn(r) ? [{ text: "I stop here" }] : looping(r)));
    const id = (await a2a(["task", "add", "work", "never finished"], { dir: store.path })).stdout.trim();
    using sup = upSession(sessionCrew(repo, home, api, ["restarts = 2", 'backoff = "0"']), repo, store.path);
    try {
      expect(await exitWithin(sup.p, 120_000)).toBe(1); // every worker stopped, one gave up
      const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
      expect(t.attempts.map((a: any) => [a.attempt, a.reason.split(":")[0]])).toEqual([[1, "its session exited 0 without ending the task"], [2, "its session exited 0 without ending the task"]]);
      expect(t.state).toBe("ready"); // its third attempt is the queue's to hand out
      const w = JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0];
      expect(w).toMatchObject({ state: "gave-up", failed: 2, reason: expect.stringMatching(/^gave up after 2 session ends in a row with no task done between \(last: exited with exit 0/) });
      expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
    } finally {
      api.close();
    }
  });

  test("a stop while the session holds a task gives the task back, not counted as an attempt", async () => {
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
    const api = standIn(async (r) => {
      if (claimedIn(r)) {
        claimed();
        await released; // working on it until the crew stops
        return [{ text: "stopped" }];
      }
      return looping(r);
    });
    using sup = upSession(sessionCrew(repo, home, api), repo, store.path);
    try {
      const pid = Number((await sup.until(/ sal: session pid (\d+)\n/))[1]);
      const id = (await a2a(["task", "add", "work", "a long one"], { dir: store.path })).stdout.trim();
      await held;
      expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "claimed", assignee: "sal", attempt: 1 });
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
      expect({ state: t.state, attempts: t.attempts, attempts_left: t.attempts_left }).toEqual({ state: "ready", attempts: [], attempts_left: 3 });
      expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
    } finally {
      release();
      api.close();
    }
  });

  test("a keep_session Codex worker (codex exec) does two tasks in one agent process, each done once", async () => {
    if (await codexSkipped("the keep_session worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const api = responsesStandIn((r) => {
      const got = newItemsText(r).match(/task_done\(id=\\*"([^"\\]+)\\*", token=\\*"(\d+-[0-9a-f]{16})/);
      if (got) return [{ tool: "mcp__a2a__task_done", input: { id: got[1], token: got[2], result: `codex session did ${got[1]}` } }];
      return [{ tool: "mcp__a2a__task_claim", input: { queue: "work", wait: true, timeout: 20 } }];
    });
    const args = ["-c", 'model="gpt-5.5"', "-c", 'model_provider="standin"', "-c", `model_providers.standin={ name = "standin", base_url = "${api.url}", wire_api = "responses", env_key = "STANDIN_API_KEY", request_max_retries = 0, stream_max_retries = 0 }`];
    const file = join(repo, "crew.toml");
    writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "cyd"', 'agent = "codex"', 'queues = ["work"]', "keep_session = true", `env = ${toml({ HOME: home, STANDIN_API_KEY: "test-key-offline", ...GIT_ENV })}`, `args = [${args.map((a) => JSON.stringify(a)).join(", ")}]`, ""].join("\n"));
    using sup = upSession(file, repo, store.path);
    try {
      const pid = Number((await sup.until(/ cyd: session pid (\d+)\n/))[1]);
      for (let i = 1; i <= 2; i++) {
        const id = (await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim();
        const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
        expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: `codex session did ${id}` });
        expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "done", attempt: 1 });
      }
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].proc?.pid).toBe(pid);
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("codex");
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 2, failed: 0, failures: 0 });
    } finally {
      api.close();
    }
  });

  test("a keep_session Gemini CLI worker (gemini -p) does two tasks in one agent process, each done once", async () => {
    const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");
    if (!existsSync(GEMINI)) return void console.log(`SKIPPED the keep_session worker: ${GEMINI} is missing (bun install installs @google/gemini-cli)`);
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(join(home, ".gemini"), { recursive: true });
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false } }));
    const api = geminiStandIn((r) => {
      const got = newContentsText(r).match(/task_done\(id=\\*"([^"\\]+)\\*", token=\\*"(\d+-[0-9a-f]{16})/);
      if (got) return [{ call: "mcp_a2a_task_done", args: { id: got[1], token: got[2], result: `gemini session did ${got[1]}` } }];
      return [{ call: "mcp_a2a_task_claim", args: { queue: "work", wait: true, timeout: 20 } }];
    });
    const file = join(repo, "crew.toml");
    writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "gil"', 'agent = "gemini"', 'queues = ["work"]', "keep_session = true", 'args = ["-m", "gemini-2.5-flash"]', `env = ${toml({ HOME: home, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: api.url, NO_COLOR: "1", ...GIT_ENV })}`, ""].join("\n"));
    using sup = upSession(file, repo, store.path);
    try {
      const pid = Number((await sup.until(/ gil: session pid (\d+)\n/))[1]);
      for (let i = 1; i <= 2; i++) {
        const id = (await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim();
        const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
        expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: `gemini session did ${id}` });
        expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "done", attempt: 1 });
      }
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].proc?.pid).toBe(pid);
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("gemini");
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 2, failed: 0, failures: 0 });
    } finally {
      api.close();
    }
  });

  test("a keep_session opencode worker (opencode run) does two tasks in one agent process, each done once", async () => {
    if (!existsSync(OPENCODE)) return void console.log(`SKIPPED the keep_session worker: ${OPENCODE} is missing (bun install installs opencode-ai)`);
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const api = chatStandIn((r) => {
      if (!(r.body.tools ?? []).length) return [{ text: "a title" }];
      const got = newChatText(r).match(/task_done\(id=\\*"([^"\\]+)\\*", token=\\*"(\d+-[0-9a-f]{16})/);
      if (got) return [{ tool: "a2a_task_done", input: { id: got[1], token: got[2], result: `opencode session did ${got[1]}` } }];
      return [{ tool: "a2a_task_claim", input: { queue: "work", wait: true, timeout: 20 } }];
    });
    // The user's own opencode config: the stand-in as its model; no plugin download, no update check.
    const home = join(d.path, "home");
    const config = join(home, ".config", "opencode");
    mkdirSync(config, { recursive: true });
    mkdirSync(join(home, "tmp"));
    skipPluginInstall(config);
    writeFileSync(join(config, "opencode.json"), JSON.stringify(opencodeProvider(api.url), null, 2));
    const env = { HOME: home, TMPDIR: join(home, "tmp"), XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share"), XDG_CACHE_HOME: join(home, ".cache"), XDG_STATE_HOME: join(home, ".local", "state"), OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", ...GIT_ENV };
    const file = join(repo, "crew.toml");
    writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "oli"', 'agent = "opencode"', 'queues = ["work"]', "keep_session = true", 'args = ["-m", "standin/m"]', `env = ${toml(env)}`, ""].join("\n"));
    using sup = upSession(file, repo, store.path);
    try {
      const pid = Number((await sup.until(/ oli: session pid (\d+)\n/))[1]);
      for (let i = 1; i <= 2; i++) {
        const id = (await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim();
        const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
        expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: `opencode session did ${id}` });
        expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "done", attempt: 1 });
      }
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].proc?.pid).toBe(pid);
      expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).toContain("opencode");
      // A task claimed and done between two of the supervisor's looks is counted when the session
      // says so in its output, which may come a moment after the task's record: wait for the count.
      const done = async () => JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].done;
      for (const end = Date.now() + 60_000; (await done()) !== 2; await Bun.sleep(100)) if (Date.now() > end) throw new Error("the supervisor did not count both tasks within 60 s");
      expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup.p, 60_000)).toBe(0);
      expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 2, failed: 0, failures: 0 });
      // opencode reports each step's tokens as it ends (the others theirs at the session's end, which
      // a stop cuts short): the steps it finished, as the stand-in answered them (1 in, 1 out each).
      const usage = JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].usage;
      expect(usage.input).toBeGreaterThanOrEqual(2);
      expect(usage).toEqual({ input: usage.input, output: usage.input, cost: 0 });
    } finally {
      api.close();
    }
  });
});
