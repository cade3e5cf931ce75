// A crew of two coding agents of different kinds, started by `a2a crew up` through the compiled
// binary (issue 36): Claude Code (claude -p) and Codex CLI (codex exec), each against its model
// stand-in, each in its own worktree (branch a2a/NAME beside the checkout). A queue of four tasks
// is drained: each task done once, by the agent's own task_done, its file committed on the branch
// of the worker that did it (Codex's sandbox keeps .git read-only: the supervisor commits what it
// left, and says so in the worker's log); the user's checkout is untouched; crew down leaves no
// process, no claim and no crew lease. Each worker's tokens (and Claude Code's cost), as its agent reported
// them, are in its log and `a2a crew`: the sums of what its stand-in answered, not a constant;
// so are a Gemini CLI worker's and an opencode worker's.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, exitWithin, ROOT, spawnA2A, tempDir, testStore } from "../harness/run";
import { framing, GIT_ENV, sh, snapshot, userRepo } from "./fixtures/crew";
import { skipped as claudeSkipped } from "./fixtures/claude";
import { skipped as codexSkipped } from "./fixtures/codex";
import { standIn } from "./fixtures/messages-api";
import { standIn as responsesStandIn } from "./fixtures/openai-responses";
import { newText as geminiNew, standIn as geminiStandIn } from "./fixtures/gemini-api";
import { newText as chatNew, standIn as chatStandIn } from "./fixtures/openai-chat";
import { OPENCODE, provider as opencodeProvider, skipPluginInstall } from "./fixtures/opencode";

setDefaultTimeout(240_000);

const toml = (v: unknown): string => (Array.isArray(v) ? `[${v.map(toml).join(", ")}]` : typeof v === "object" ? `{ ${Object.entries(v as object).map(([k, x]) => `${k} = ${toml(x)}`).join(", ")} }` : JSON.stringify(v));
const userText = (r: any) => JSON.stringify(r.body.messages?.[0] ?? "");
// Each answer reports tokens of its own (none twice the same), so a total is the sum of these.
const tokens = (r: { n: number }) => ({ input: 1000 * r.n + 7, output: 10 * r.n + 3 });

describe("a2a crew up: coding agents", () => {
  test("a Claude Code worker and a Codex worker drain a queue of four tasks: each done once, each file on its worker's branch, the checkout untouched; crew down leaves nothing running", async () => {
    if ((await claudeSkipped("the crew of agents")) || (await codexSkipped("the crew of agents"))) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const wt = (name: string) => join(d.path, "app.crew", name);
    // Claude Code: write the task's file, commit it, end the task.
    const claudeApi = standIn((r) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_done")) return [{ text: "ok" }];
      const f = framing(userText(r));
      if (!f) return [{ text: "no task in the prompt" }];
      const step = r.body.messages.filter((m: any) => m.role === "assistant").length;
      if (step === 0) return [{ tool: "Write", input: { file_path: join(wt("ann"), `out-${f.id}.txt`), content: `ann did ${f.id}\n` } }];
      if (step === 1) return [{ tool: "Bash", input: { command: `git add out-${f.id}.txt && git commit -q -m 'task ${f.id}'`, description: "commit" } }];
      if (step === 2) return [{ tool: "mcp__a2a__task_done", input: { id: f.id, token: f.token, result: `ann did ${f.id}` } }];
      return [{ text: "done" }];
    }, tokens);
    // Codex: add the task's file with apply_patch, end the task (its sandbox cannot commit).
    const codexApi = responsesStandIn((r) => {
      const f = framing(JSON.stringify(r.body.input ?? ""));
      if (!f) return [{ text: "no task in the prompt" }];
      const calls = (r.body.input ?? []).filter((i: any) => i.type === "custom_tool_call" || i.type === "function_call").length;
      if (calls === 0) return [{ patch: `*** Begin Patch\n*** Add File: out-${f.id}.txt\n+cy did ${f.id}\n*** End Patch\n` }];
      if (calls === 1) return [{ tool: "mcp__a2a__task_done", input: { id: f.id, token: f.token, result: `cy did ${f.id}` } }];
      return [{ text: "done" }];
    }, tokens);
    const claudeEnv = { HOME: home, ANTHROPIC_BASE_URL: claudeApi.url, ANTHROPIC_API_KEY: "test-key-offline", ENABLE_TOOL_SEARCH: "false", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_TELEMETRY: "1", ...GIT_ENV };
    const codexArgs = ["-c", 'model="gpt-5.5"', "-c", 'model_provider="standin"', "-c", `model_providers.standin={ name = "standin", base_url = "${codexApi.url}", wire_api = "responses", env_key = "STANDIN_API_KEY", request_max_retries = 0, stream_max_retries = 0 }`];
    const codexEnv = { HOME: home, STANDIN_API_KEY: "test-key-offline", ...GIT_ENV };
    const file = join(repo, "crew.toml");
    writeFileSync(file, [
      'name = "mixed"',
      "[[worker]]", 'name = "ann"', 'agent = "claude"', 'queues = ["work"]', 'time_limit = "2m"', "restarts = 2", `env = ${toml(claudeEnv)}`,
      "[[worker]]", 'name = "cy"', 'agent = "codex"', 'queues = ["work"]', 'time_limit = "2m"', "restarts = 2", `env = ${toml(codexEnv)}`, `args = ${toml(codexArgs)}`,
      "",
    ].join("\n"));
    const snap = snapshot(repo); // the crew file is the user's own, untracked, in the checkout
    const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
    const sup = spawnA2A(["crew", "up", file], { dir: store.path, cwd: repo, env: { PATH } });
    try {
      // Both workers are waiting on the queue before the tasks come: each gets one at once.
      for (const w of ["ann", "cy"]) expect(JSON.parse((await a2a(["wait-state", w, "waiting", "--timeout", "60", "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "waiting" });
      const ids: string[] = [];
      for (let i = 1; i <= 4; i++) ids.push((await a2a(["task", "add", "work", `task ${i}: write your file`], { dir: store.path })).stdout.trim());
      const waited = await a2a(["task", "wait", ...ids, "--timeout", "180", "--json"], { dir: store.path });
      expect({ code: waited.code, stderr: waited.stderr }).toEqual({ code: 0, stderr: "" });
      const by: Record<string, string[]> = { ann: [], cy: [] };
      for (const id of ids) {
        const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
        expect({ id, state: t.state, attempt: t.attempt }).toEqual({ id, state: "done", attempt: 1 }); // once, at the first attempt
        const who = t.result.split(" ")[0];
        expect(t.result).toBe(`${who} did ${id}`);
        by[who].push(id);
        // Its file, committed on the branch of the worker that did it.
        expect(sh(["git", "show", `a2a/${who}:out-${id}.txt`], repo)).toBe(`${who} did ${id}\n`);
      }
      expect(by.ann.length).toBeGreaterThan(0);
      expect(by.cy.length).toBeGreaterThan(0);
      // Tokens and cost, as each agent reported them: once every run has ended (each worker's
      // done count in), each worker's total is the sum of what its stand-in's answers reported.
      const crew = async () => JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0];
      let status = await crew();
      for (const end = Date.now() + 60_000; status.workers.reduce((n: number, w: any) => n + w.done, 0) < 4 && Date.now() < end;) status = await crew();
      const sum = (api: { requests: { n: number }[] }) => api.requests.map(tokens).reduce((a, t) => ({ input: a.input + t.input, output: a.output + t.output }), { input: 0, output: 0 });
      const usage = Object.fromEntries(status.workers.map((w: any) => [w.name, w.usage]));
      expect(usage).toEqual({ ann: { ...sum(claudeApi), cost: expect.any(Number) }, cy: { ...sum(codexApi), cost: null } }); // Codex reports no cost
      expect(usage.ann.cost).toBeGreaterThan(0);
      const shown = (await a2a(["crew"], { dir: store.path })).stdout;
      expect(shown).toContain(`${usage.ann.input}/${usage.ann.output} $${usage.ann.cost.toFixed(4)}`);
      expect(shown).toContain(`${usage.cy.input}/${usage.cy.output} `);
      const annLog = await a2a(["crew", "logs", "ann"], { dir: store.path });
      expect(annLog.stdout).toMatch(/\n\[a2a crew\] task \S+ attempt 1: \d+ tokens in, \d+ out, \$\d+\.\d{4}\n-- done: task \S+ \(\d+ tokens in, \d+ out, \$\d+\.\d{4}\)\n$/);
      const logs = await a2a(["crew", "logs", "cy"], { dir: store.path });
      expect(logs.stdout).toMatch(/\[a2a crew\] task \S+ attempt 1: \d+ tokens in, \d+ out\n/);
      expect(logs.stdout).toMatch(/\[a2a crew\] task \S+: the work is on a2a\/cy at [0-9a-f]{12} \(what was left uncommitted was committed\)/);
      expect(await a2a(["crew", "down", "mixed"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup, 60_000)).toBe(0);
      // Nothing left: no run of either agent in a worktree, no claim, no crew lease.
      const running = readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("app.crew") || readFileSync(`/proc/${p}/environ`, "utf8").includes(`A2A_AGENT=ann\0`) || readFileSync(`/proc/${p}/environ`, "utf8").includes(`A2A_AGENT=cy\0`);
        } catch {
          return false;
        }
      });
      expect(running).toEqual([]);
      expect(JSON.parse((await a2a(["task", "list", "work", "--json"], { dir: store.path })).stdout).filter((t: any) => t.state === "claimed")).toEqual([]);
      expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
      // Everything committed: the worktrees are gone, their branches hold the work (above).
      expect([existsSync(wt("ann")), existsSync(wt("cy"))]).toEqual([false, false]);
      expect(sh(["git", "worktree", "list", "--porcelain"], repo).split("\n").filter((l) => l.startsWith("worktree "))).toEqual([`worktree ${repo}`]);
      expect(snapshot(repo)).toEqual(snap);
    } finally {
      if (sup.exitCode === null) sup.kill("SIGKILL");
      claudeApi.close();
      codexApi.close();
    }
  });

  test("a Gemini CLI worker and an opencode worker: each run's tokens (and opencode's cost) as the agent reported them, summed per worker", async () => {
    const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");
    if (!existsSync(GEMINI) || !existsSync(OPENCODE)) return void console.log("SKIPPED the tokens of gemini and opencode workers: bun install installs them");
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(join(home, ".gemini"), { recursive: true });
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false } }));
    const geminiApi = geminiStandIn((r) => {
      const f = framing(JSON.stringify(r.body.contents ?? ""));
      if (!f || geminiNew(r).includes(`Task ${f.id} is done.`)) return [{ text: "done" }];
      return [{ call: "mcp_a2a_task_done", args: { id: f.id, token: f.token, result: `gil did ${f.id}` } }];
    }, tokens);
    const chatApi = chatStandIn((r) => {
      const f = framing(JSON.stringify(r.body.messages ?? ""));
      if (!(r.body.tools ?? []).length || !f || chatNew(r).includes(`Task ${f.id} is done.`)) return [{ text: "done" }];
      return [{ tool: "a2a_task_done", input: { id: f.id, token: f.token, result: `oli did ${f.id}` } }];
    }, tokens);
    const config = join(home, ".config", "opencode");
    mkdirSync(config, { recursive: true });
    mkdirSync(join(home, "tmp"));
    skipPluginInstall(config);
    writeFileSync(join(config, "opencode.json"), JSON.stringify(opencodeProvider(chatApi.url), null, 2));
    const geminiEnv = { HOME: home, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: geminiApi.url, NO_COLOR: "1", ...GIT_ENV };
    const opencodeEnv = { HOME: home, TMPDIR: join(home, "tmp"), XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share"), XDG_CACHE_HOME: join(home, ".cache"), XDG_STATE_HOME: join(home, ".local", "state"), OPENCODE_DISABLE_AUTOUPDATE: "1", OPENCODE_DISABLE_MODELS_FETCH: "1", ...GIT_ENV };
    const file = join(repo, "crew.toml");
    writeFileSync(file, [
      'name = "counted"',
      "[[worker]]", 'name = "gil"', 'agent = "gemini"', 'queues = ["g"]', 'args = ["-m", "gemini-2.5-flash"]', `env = ${toml(geminiEnv)}`,
      "[[worker]]", 'name = "oli"', 'agent = "opencode"', 'queues = ["o"]', 'args = ["-m", "standin/m"]', `env = ${toml(opencodeEnv)}`,
      "",
    ].join("\n"));
    const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
    const sup = spawnA2A(["crew", "up", file], { dir: store.path, cwd: repo, env: { PATH } });
    try {
      const ids: string[] = [];
      for (const q of ["g", "o", "g", "o"]) ids.push((await a2a(["task", "add", q, `task for ${q}`], { dir: store.path })).stdout.trim());
      const waited = await a2a(["task", "wait", ...ids, "--timeout", "180"], { dir: store.path });
      expect({ code: waited.code, stderr: waited.stderr }).toEqual({ code: 0, stderr: "" });
      const crew = async () => JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0];
      let status = await crew();
      for (const end = Date.now() + 60_000; status.workers.reduce((n: number, w: any) => n + w.done, 0) < 4 && Date.now() < end;) status = await crew();
      const usage = Object.fromEntries(status.workers.map((w: any) => [w.name, w.usage]));
      // Gemini CLI: every answer of its model (a next-speaker check counts 1 and 1); opencode: the
      // answers of its steps (the ones with tools; a title's answer is no step), at a cost of 0
      // for a provider it has no prices for.
      const sum = (rs: { n: number }[], extra = 0) => rs.map(tokens).reduce((a, t) => ({ input: a.input + t.input, output: a.output + t.output }), { input: extra, output: extra });
      expect(usage).toEqual({
        gil: { ...sum(geminiApi.requests, geminiApi.others()), cost: null },
        oli: { ...sum(chatApi.requests.filter((r) => (r.body.tools ?? []).length)), cost: 0 },
      });
      for (const id of ids) expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "done", attempt: 1 });
      expect(await a2a(["crew", "down", "counted"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup, 60_000)).toBe(0);
    } finally {
      if (sup.exitCode === null) sup.kill("SIGKILL");
      geminiApi.close();
      chatApi.close();
    }
  });
});
