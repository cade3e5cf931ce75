// A crew of a Qwen Code worker (qwen -p) and a GitHub Copilot CLI worker (copilot, prompt mode),
// started by `a2a crew up` through the compiled binary (issue 36), each against the Chat
// Completions stand-in (fixtures/openai-chat.ts: Qwen Code's "openai" auth type, Copilot CLI's
// offline BYOK provider), with a2a's server and hooks given for that run only. Each takes one
// task: a2a's hooks refuse it the file another worker reserved, "edits" refuses it a shell command
// that is not git's, it writes its file with its own file tool, commits it on a2a/NAME with git
// and ends the task with task_done through a2a's MCP. Each task done once, at attempt 1; Qwen
// Code's tokens as it reported them (Copilot CLI reports none: unknown); the store named by
// reference only in the run's settings; the user's checkout untouched; crew down leaves no
// process, no claim and no crew lease.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, descendants, exitWithin, readUntil, ROOT, spawnA2A, tempDir, testStore } from "../harness/run";
import { framing, GIT_ENV, sh, snapshot, userRepo } from "./fixtures/crew";
import { newText, standIn, toolResults } from "./fixtures/openai-chat";

setDefaultTimeout(240_000);

const QWEN = join(ROOT, "node_modules", ".bin", "qwen");
const COPILOT = join(ROOT, "node_modules", ".bin", "copilot");
const toml = (v: unknown): string => (Array.isArray(v) ? `[${v.map(toml).join(", ")}]` : typeof v === "object" ? `{ ${Object.entries(v as object).map(([k, x]) => `${k} = ${toml(x)}`).join(", ")} }` : JSON.stringify(v));
const tokens = (r: { n: number }) => ({ input: 1000 * r.n + 7, output: 10 * r.n + 3 });

type Call = { tool: string; input: Record<string, unknown> };
// The model's script: write the file another worker reserved (a2a's PreToolUse hook refuses it),
// run a shell command that is not git's (refused: nobody is there to approve it), write the task's file with the agent's file tool, stage and commit it with its shell tool (git's
// recording commands are what "edits" allows it), then task_done; text for anything else (a
// request with no tools, or no task in it). What each tool answered is kept.
function script(write: (path: string, text: string) => Call, shell: (command: string) => Call, wt: string, done: string, who: string, said: string[]) {
  return (r: any) => {
    const f = framing(JSON.stringify(r.body.messages ?? ""));
    if (!f || !(r.body.tools ?? []).length || newText(r).includes(`Task ${f.id} is done.`)) return [{ text: "done" }];
    said.push(...toolResults(r));
    const calls = (r.body.messages ?? []).filter((m: any) => m.role === "assistant" && m.tool_calls?.length).length;
    if (calls === 0) return [write(join(wt, "src", "theirs.ts"), "taken\n")];
    if (calls === 1) return [shell("touch not-git.txt")];
    if (calls === 2) return [write(join(wt, `out-${f.id}.txt`), `${who} did ${f.id}\n`)];
    if (calls === 3) return [shell(`git add out-${f.id}.txt`)];
    if (calls === 4) return [shell(`git commit -q -m '${who}: task ${f.id}'`)];
    if (calls === 5) return [{ tool: done, input: { id: f.id, token: f.token, result: `${who} did ${f.id}` } }];
    return [{ text: "done" }];
  };
}

describe("a2a crew up: Qwen Code and Copilot CLI workers", () => {
  test("each takes one task, does it through its own tools and a2a's MCP (done once, at attempt 1), its file on a2a/NAME; Qwen Code's tokens counted; crew down leaves nothing", async () => {
    if (!existsSync(QWEN) || !existsSync(COPILOT)) return void console.log("SKIPPED the qwen and copilot crew workers: bun install installs them");
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(join(home, ".qwen"), { recursive: true });
    const wt = (name: string) => join(d.path, "app.crew", name);
    // A new file another worker reserved (a new one: Qwen Code overwrites no file it has not read).
    expect(await a2a(["reserve", "src/theirs.ts", "--as", "other-worker", "-q"], { dir: store.path, cwd: repo })).toMatchObject({ code: 0 });
    const said: Record<string, string[]> = { quinn: [], cope: [] };
    const qwenApi = standIn(script((path, content) => ({ tool: "write_file", input: { file_path: path, content } }), (command) => ({ tool: "run_shell_command", input: { command, is_background: false } }), wt("quinn"), "mcp__a2a__task_done", "quinn", said.quinn), tokens);
    const copilotApi = standIn(script((path, file_text) => ({ tool: "create", input: { path, file_text } }), (command) => ({ tool: "bash", input: { command, description: "git", mode: "sync", initial_wait: 30 } }), wt("cope"), "a2a-task_done", "cope", said.cope), tokens);
    const qwenEnv = { HOME: home, OPENAI_API_KEY: "test-key-offline", OPENAI_BASE_URL: qwenApi.url, OPENAI_MODEL: "qwen3-coder-plus", NO_COLOR: "1", ...GIT_ENV };
    const copilotEnv = { HOME: home, XDG_CACHE_HOME: join(ROOT, "node_modules", ".cache"), COPILOT_OFFLINE: "true", COPILOT_PROVIDER_BASE_URL: copilotApi.url, COPILOT_PROVIDER_API_KEY: "test-key-offline", COPILOT_MODEL: "gpt-4.1", COPILOT_AUTO_UPDATE: "false", NO_COLOR: "1", ...GIT_ENV };
    const file = join(repo, "crew.toml");
    writeFileSync(file, [
      'name = "forks"',
      "[[worker]]", 'name = "quinn"', 'agent = "qwen"', 'queues = ["q"]', 'time_limit = "2m"', 'args = ["--auth-type", "openai"]', `env = ${toml(qwenEnv)}`,
      "[[worker]]", 'name = "cope"', 'agent = "copilot"', 'queues = ["c"]', 'time_limit = "2m"', `env = ${toml(copilotEnv)}`,
      "",
    ].join("\n"));
    const snap = snapshot(repo);
    const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
    const sup = spawnA2A(["crew", "up", file], { dir: store.path, cwd: repo, env: { PATH, GH_TOKEN: undefined, GITHUB_TOKEN: undefined, COPILOT_GITHUB_TOKEN: undefined, GITHUB_SHA: undefined } });
    try {
      const ids = { quinn: (await a2a(["task", "add", "q", "write your file"], { dir: store.path })).stdout.trim(), cope: (await a2a(["task", "add", "c", "write your file"], { dir: store.path })).stdout.trim() };
      const waited = await a2a(["task", "wait", ids.quinn, ids.cope, "--timeout", "180"], { dir: store.path });
      if (waited.code !== 0) console.log((await a2a(["crew", "logs", "quinn"], { dir: store.path })).stdout, (await a2a(["crew", "logs", "cope"], { dir: store.path })).stdout);
      expect({ code: waited.code, stderr: waited.stderr }).toEqual({ code: 0, stderr: "" });
      for (const [who, id] of Object.entries(ids)) {
        const t = JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout);
        expect({ state: t.state, attempt: t.attempt, result: t.result }).toEqual({ state: "done", attempt: 1, result: `${who} did ${id}` });
      }
      const crew = async () => JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0];
      let status = await crew();
      for (const end = Date.now() + 60_000; status.workers.reduce((n: number, w: any) => n + w.done, 0) < 2 && Date.now() < end;) status = await crew();
      // Qwen Code's last result holds the run's totals: every answer of its stand-in.
      const sum = (rs: { n: number }[]) => rs.map(tokens).reduce((a, t) => ({ input: a.input + t.input, output: a.output + t.output }), { input: 0, output: 0 });
      expect(Object.fromEntries(status.workers.map((w: any) => [w.name, w.usage]))).toEqual({ quinn: { ...sum(qwenApi.requests), cost: null }, cope: undefined }); // Copilot CLI reports no tokens: none shown, never 0
      // a2a's hooks ran in each run: the reserved file's write was refused, naming its holder.
      for (const who of ["quinn", "cope"]) expect(said[who][0]).toMatch(/src\/theirs\.ts is reserved by other-worker/);
      // "edits": a shell command other than git's recording ones is refused, not run.
      expect(said.quinn[1]).toMatch(/^Qwen Code requires permission to use "run_shell_command", but that permission was declined/);
      expect(said.cope[1]).toMatch(/^Permission denied because no interactive user response was available/);
      for (const who of ["quinn", "cope"]) expect(existsSync(join(wt(who), "not-git.txt"))).toBe(false);
      for (const who of ["quinn", "cope"]) {
        const log = (await a2a(["crew", "logs", who], { dir: store.path })).stdout;
        expect(log).toMatch(new RegExp(`\\[a2a crew\\] task \\S+: the work is on a2a/${who} at [0-9a-f]{12}\n`)); // the agent committed it all itself
      }
      // a2a's settings for the run name the store only by reference (a database URL's password
      // among it): never its value in a file.
      const settings = [join(wt("quinn"), ".qwen", "settings.json"), join(wt("cope"), ".github", "mcp.json"), join(wt("cope"), ".github", "copilot", "settings.json")];
      for (const f of settings) expect(readFileSync(f, "utf8")).not.toContain(store.path);
      expect(JSON.parse(readFileSync(settings[1], "utf8")).mcpServers.a2a.env.A2A_DIR).toBe("${A2A_DIR}");
      expect(await a2a(["crew", "down", "forks"], { dir: store.path })).toMatchObject({ code: 0 });
      expect(await exitWithin(sup, 60_000)).toBe(0);
      // Each file on its worker's branch, committed with nothing else (a2a's settings files stay out).
      for (const [who, id] of Object.entries(ids)) {
        expect(sh(["git", "show", `a2a/${who}:out-${id}.txt`], repo)).toBe(`${who} did ${id}\n`);
        expect(sh(["git", "log", "--format=%s", `HEAD..a2a/${who}`], repo).trim()).toBe(`${who}: task ${id}`);
        expect(sh(["git", "diff", "--name-only", "HEAD", `a2a/${who}`], repo).trim()).toBe(`out-${id}.txt`); // not the reserved file, nor a2a's settings
      }
      const running = readdirSync("/proc").filter((p) => /^\d+$/.test(p)).filter((p) => {
        try {
          const env = readFileSync(`/proc/${p}/environ`, "utf8");
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes("app.crew") || env.includes("A2A_AGENT=quinn\0") || env.includes("A2A_AGENT=cope\0");
        } catch {
          return false;
        }
      });
      expect(running).toEqual([]);
      for (const q of ["q", "c"]) expect(JSON.parse((await a2a(["task", "list", q, "--json"], { dir: store.path })).stdout).filter((t: any) => t.state === "claimed")).toEqual([]);
      expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
      expect([existsSync(wt("quinn")), existsSync(wt("cope"))]).toEqual([false, false]);
      expect(snapshot(repo)).toEqual(snap);
    } finally {
      if (sup.exitCode === null) sup.kill("SIGKILL");
      qwenApi.close();
      copilotApi.close();
    }
  });
});

// keep_session: one long `qwen -p` or `copilot` run that claims its tasks itself (task_claim with
// wait), ends each and claims again, as lib/crew/session.ts drives the other agents' sessions.
describe("a2a crew up: keep_session Qwen Code and Copilot CLI workers", () => {
  const cases = [
    { agent: "qwen", bin: QWEN, claim: "mcp__a2a__task_claim", done: "mcp__a2a__task_done", args: ["--auth-type", "openai"], env: (home: string, url: string) => ({ HOME: home, OPENAI_API_KEY: "test-key-offline", OPENAI_BASE_URL: url, OPENAI_MODEL: "qwen3-coder-plus", NO_COLOR: "1", ...GIT_ENV }) },
    { agent: "copilot", bin: COPILOT, claim: "a2a-task_claim", done: "a2a-task_done", args: [], env: (home: string, url: string) => ({ HOME: home, XDG_CACHE_HOME: join(ROOT, "node_modules", ".cache"), COPILOT_OFFLINE: "true", COPILOT_PROVIDER_BASE_URL: url, COPILOT_PROVIDER_API_KEY: "test-key-offline", COPILOT_MODEL: "gpt-4.1", COPILOT_AUTO_UPDATE: "false", NO_COLOR: "1", ...GIT_ENV }) },
  ];
  for (const c of cases) {
    test(`a keep_session ${c.agent} worker does two tasks in one agent process, each done once; crew down ends it`, async () => {
      if (!existsSync(c.bin)) return void console.log(`SKIPPED the keep_session ${c.agent} worker: ${c.bin} is missing (bun install installs it)`);
      using d = tempDir();
      using store = testStore();
      const repo = userRepo(d.path);
      const home = join(d.path, "home");
      mkdirSync(join(home, ".qwen"), { recursive: true });
      const api = standIn((r) => {
        if (!(r.body.tools ?? []).length) return [{ text: "ok" }];
        const got = newText(r).match(/task_done\(id=\\*"([^"\\]+)\\*", token=\\*"(\d+-[0-9a-f]{16})/);
        if (got) return [{ tool: c.done, input: { id: got[1], token: got[2], result: `${c.agent} session did ${got[1]}` } }];
        return [{ tool: c.claim, input: { queue: "work", wait: true, timeout: 20 } }];
      });
      const file = join(repo, "crew.toml");
      writeFileSync(file, ['name = "long"', "[[worker]]", 'name = "sal"', `agent = "${c.agent}"`, 'queues = ["work"]', "keep_session = true", `args = ${toml(c.args)}`, `env = ${toml(c.env(home, api.url))}`, ""].join("\n"));
      const PATH = `${join(ROOT, "node_modules", ".bin")}:${join(BIN, "..")}:${process.env.PATH}`;
      const sup = spawnA2A(["crew", "up", file], { dir: store.path, cwd: repo, env: { PATH, GH_TOKEN: undefined, GITHUB_TOKEN: undefined, COPILOT_GITHUB_TOKEN: undefined, GITHUB_SHA: undefined } });
      try {
        const said = await readUntil(sup.stderr as ReadableStream<Uint8Array>, (t) => / sal: session pid \d+\n/.test(t), 60_000);
        const pid = Number(said.match(/ sal: session pid (\d+)\n/)![1]);
        for (let i = 1; i <= 2; i++) {
          const id = (await a2a(["task", "add", "work", `task ${i}`], { dir: store.path })).stdout.trim();
          const waited = await a2a(["task", "wait", id, "--timeout", "120"], { dir: store.path });
          expect({ code: waited.code, stdout: waited.stdout }).toEqual({ code: 0, stdout: `${c.agent} session did ${id}` });
          expect(JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store.path })).stdout)).toMatchObject({ state: "done", attempt: 1 });
        }
        expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0].proc?.pid).toBe(pid);
        expect(await a2a(["crew", "down", "long"], { dir: store.path })).toMatchObject({ code: 0 });
        expect(await exitWithin(sup, 60_000)).toBe(0);
        expect(JSON.parse((await a2a(["crew", "--json"], { dir: store.path })).stdout)[0].workers[0]).toMatchObject({ state: "stopped", done: 2, failed: 0 });
        expect(JSON.parse((await a2a(["lease", "list", "--json"], { dir: store.path })).stdout)).toEqual([]);
        expect(existsSync(`/proc/${pid}`)).toBe(false);
      } finally {
        if (sup.exitCode === null) {
          for (const p of descendants(sup.pid)) {
            try {
              process.kill(-p, "SIGKILL");
            } catch {
              // not a group leader, or gone
            }
          }
          sup.kill("SIGKILL");
        }
        api.close();
      }
    });
  }
});
