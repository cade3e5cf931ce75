// A crew worker's coding agent, started for one task as cli/crew/launch.ts says (issue 36), with
// the real agent CLIs offline against their model stand-ins (tests/e2e/fixtures). The test stands
// in for the supervisor: it adds a task, claims it as the worker, builds the LaunchSpec, spawns
// it and waits for its exit. The model sees the framed prompt (on stdin), writes a file, is
// refused the file another worker reserved (the hooks judge worktrees by the user's repository),
// and ends the task with task_done through a2a's MCP tool; the work is committed on branch
// a2a/NAME in the worker's worktree; the user's checkout is untouched. A model that never calls
// task_done leaves the task claimed: the supervisor's cue that the attempt failed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { a2a, BIN, childEnv, tempDir, testStore } from "../harness/run";
import { launchAgent, type AgentWorker, type Job, type LaunchSpec } from "../../cli/crew/launch";
import { commitLeftovers, worktreeResult } from "../../lib/crew/worktree";

setDefaultTimeout(120_000);

const GIT_ENV = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@example.org", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@example.org" };

export function sh(cmd: string[], cwd: string): string {
  const r = Bun.spawnSync(cmd, { cwd, env: { ...process.env, ...GIT_ENV }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr}`);
  return r.stdout.toString();
}

// The user's repository, mid-work (a staged and an unstaged change, an untracked file).
export function userRepo(root: string): string {
  const repo = join(root, "app");
  mkdirSync(join(repo, "src"), { recursive: true });
  sh(["git", "init", "-q", "-b", "main", repo], root);
  writeFileSync(join(repo, "src", "api.ts"), "export {};\n");
  writeFileSync(join(repo, "src", "reserved.ts"), "export const mine = 1;\n");
  sh(["git", "add", "."], repo);
  sh(["git", "commit", "-q", "-m", "first"], repo);
  writeFileSync(join(repo, "src", "api.ts"), "export const wip = 1;\n");
  sh(["git", "add", "src/api.ts"], repo);
  writeFileSync(join(repo, "notes.txt"), "untracked\n");
  return repo;
}

// Everything of the user's checkout a worker must not change.
export function snapshot(repo: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.name === ".git" && dir === repo) continue;
      if (e.isDirectory()) walk(p);
      else out[relative(repo, p)] = readFileSync(p, "base64") + ` ${statSync(p).mtimeMs}`;
    }
  };
  walk(repo);
  out[".git/index"] = readFileSync(join(repo, ".git", "index"), "base64");
  out[".git/HEAD"] = readFileSync(join(repo, ".git", "HEAD"), "utf8");
  out.status = sh(["git", "status", "--porcelain=v2", "--branch", "--untracked-files=all"], repo);
  return out;
}

// The supervisor's part: the task added and claimed as the worker.
export async function claimed(store: string, worker: string, payload: string): Promise<Job> {
  const id = (await a2a(["task", "add", "build", payload], { dir: store })).stdout.trim();
  const r = await a2a(["task", "claim", "build", "--as", worker, "--json"], { dir: store });
  if (r.code !== 0) throw new Error(r.stderr);
  const c = JSON.parse(r.stdout);
  expect(c.id).toBe(id);
  return { queue: c.queue, id: c.id, attempt: c.attempt, token: c.token, payload: c.payload, expiresAt: c.expires_at };
}

// Another worker holds src/reserved.ts (reserved from the user's checkout: one repository).
export async function reserveForOther(store: string, repo: string): Promise<void> {
  const r = await a2a(["reserve", "src/reserved.ts", "--as", "other-worker", "-q"], { dir: store, cwd: repo });
  if (r.code !== 0) throw new Error(r.stderr);
}

// Runs the spec as the supervisor would (the test's environment scrubbed of A2A_*, as a child's).
export async function spawnSpec(spec: LaunchSpec): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = childEnv({ env: spec.env });
  const p = Bun.spawn({ cmd: spec.cmd, cwd: spec.cwd, env, stdin: new TextEncoder().encode(spec.stdin ?? ""), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => p.kill("SIGKILL"), 100_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export async function taskState(store: string, id: string): Promise<any> {
  return JSON.parse((await a2a(["task", "show", id, "--json"], { dir: store })).stdout);
}

// What the framed prompt tells the model: the task's id and token, parsed back from its text.
export function framing(text: string): { id: string; token: string; frame: string } | undefined {
  const done = text.match(/call the a2a tool task_done with id \\?"([^"\\]+)\\?", token \\?"([^"\\]+)\\?"/);
  const frame = text.match(/its payload \[frame ([0-9a-f]{8})\] ---/);
  return done && frame ? { id: done[1], token: done[2], frame: frame[1] } : undefined;
}

// The prompt's framing as the model saw it: the payload between two lines with one frame token,
// marked untrusted, and task_done with the id and token.
export function expectFramed(text: string, job: Job): void {
  const f = framing(text);
  expect(f).toMatchObject({ id: job.id, token: job.token });
  const unescaped = text.replace(/\\n/g, "\n").replace(/\\"/g, '"');
  expect(unescaped).toContain(`its payload [frame ${f!.frame}] ---\n[untrusted input from whoever added the task`);
  expect(unescaped).toContain(`${job.payload}\n--- end of the payload of task ${job.id} [frame ${f!.frame}] ---`);
  expect(unescaped).toContain("on branch a2a/");
}

export { BIN, launchAgent, tempDir, testStore, worktreeResult, type AgentWorker };

import { CLAUDE, claudeEnv, skipped as claudeSkipped } from "./fixtures/claude";
import { standIn, toolResults, type Request } from "./fixtures/messages-api";

const userText = (r: Request) => JSON.stringify(r.body.messages?.[0] ?? "");

describe("crew worker: Claude Code (claude -p)", () => {
  test("does the task in its worktree, is refused the reserved file, commits on a2a/NAME and ends it with task_done; the checkout is untouched", async () => {
    if (await claudeSkipped("the crew worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    await reserveForOther(store.path, repo);
    const before = snapshot(repo);
    const job = await claimed(store.path, "ann", "write hello.txt saying hi");
    const wt = join(d.path, "app.crew", "ann");
    const api = standIn((r) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_done")) return [{ text: "ok" }];
      const f = framing(userText(r));
      const results = toolResults(r);
      const step = r.body.messages.filter((m: any) => m.role === "assistant").length;
      if (!f) return [{ text: "no task in the prompt" }];
      if (step === 0) return [{ tool: "Write", input: { file_path: join(wt, "src", "reserved.ts"), content: "taken\n" } }];
      if (step === 1) return [{ tool: "Write", input: { file_path: join(wt, "hello.txt"), content: "hi\n" } }];
      if (step === 2) return [{ tool: "Bash", input: { command: "git add hello.txt", description: "stage" } }];
      if (step === 3) return [{ tool: "Bash", input: { command: "git commit -q -m 'hello: say hi'", description: "commit" } }];
      if (step === 4) return [{ tool: "mcp__a2a__task_done", input: { id: f.id, token: f.token, result: "wrote hello.txt" } }];
      return [{ text: `finished: ${results.join(" ")}` }];
    });
    try {
      const w: AgentWorker = { name: "ann", agent: "claude", worktree: true, repo, bin: CLAUDE, env: { ...(claudeEnv({ home, store: store.path, apiUrl: api.url }) as Record<string, string>), ...GIT_ENV } };
      const spec = await launchAgent(w, job, { store: store.path, a2aBin: BIN });
      expect(spec.cwd).toBe(wt);
      expect(spec.cmd.join(" ")).not.toContain(job.token); // the prompt is on stdin
      const run = await spawnSpec(spec);
      expect(run.code).toBe(0);
      const asked = api.requests.find((r) => framing(userText(r)))!;
      expectFramed(userText(asked), job);
      // The edit of the file another worker holds was refused by a2a's PreToolUse hook.
      const refused = api.requests.find((r) => r.body.messages.filter((m: any) => m.role === "assistant").length === 1)!;
      expect(JSON.stringify(refused.body.messages.at(-1))).toMatch(/src\/reserved\.ts.*other-worker/);
      expect(readFileSync(join(wt, "src", "reserved.ts"), "utf8")).toBe("export const mine = 1;\n");
      const t = await taskState(store.path, job.id);
      expect(t.state).toBe("done");
      expect(t.result).toBe("wrote hello.txt");
      const rec = worktreeResult(wt);
      expect(rec.branch).toBe("a2a/ann");
      expect(sh(["git", "show", "--name-only", "--format=%s", rec.commit], repo).trim().split("\n")).toEqual(["hello: say hi", "", "hello.txt"]);
      expect(sh(["git", "rev-parse", "refs/heads/a2a/ann"], repo).trim()).toBe(rec.commit);
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});

describe("crew worker: a model that never calls task_done", () => {
  test("the agent exits and the task is still claimed by the worker's attempt (the supervisor's cue that it failed)", async () => {
    if (await claudeSkipped("the crew worker that never ends its task")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const before = snapshot(repo);
    const job = await claimed(store.path, "bo", "do something");
    const api = standIn(() => [{ text: "I would rather not." }]);
    try {
      const w: AgentWorker = { name: "bo", agent: "claude", worktree: true, repo, bin: CLAUDE, env: claudeEnv({ home, store: store.path, apiUrl: api.url }) as Record<string, string> };
      const run = await spawnSpec(await launchAgent(w, job, { store: store.path, a2aBin: BIN }));
      expect(run.code).toBe(0);
      expect(run.stdout.trim().split("\n").at(-1)).toContain("I would rather not.");
      const t = await taskState(store.path, job.id);
      expect(t).toMatchObject({ state: "claimed", attempt: 1, assignee: "bo" });
      expect(worktreeResult(join(d.path, "app.crew", "bo")).commit).toBe(sh(["git", "rev-parse", "HEAD"], repo).trim());
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});

import { CODEX, codexEnv, skipped as codexSkipped } from "./fixtures/codex";
import { standIn as responsesStandIn, toolOutputs } from "./fixtures/openai-responses";

// Codex's model provider: the stand-in, through the worker's own arguments and environment.
const codexProvider = (url: string, model: string) => ["-c", `model="${model}"`, "-c", `model_provider="standin"`, "-c", `model_providers.standin={ name = "standin", base_url = "${url}", wire_api = "responses", env_key = "STANDIN_API_KEY", request_max_retries = 0, stream_max_retries = 0 }`];

describe("crew worker: Codex CLI (codex exec)", () => {
  test("does the task in its worktree, is refused the reserved file, commits on a2a/NAME and ends it with task_done; the checkout is untouched", async () => {
    if (await codexSkipped("the crew worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    await reserveForOther(store.path, repo);
    const before = snapshot(repo);
    const job = await claimed(store.path, "cy", "write hello.txt saying hi");
    const wt = join(d.path, "app.crew", "cy");
    const reservedPatch = "*** Begin Patch\n*** Update File: src/reserved.ts\n@@\n-export const mine = 1;\n+taken\n*** End Patch\n";
    const helloPatch = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";
    let step = 0;
    const api = responsesStandIn((r) => {
      const f = framing(JSON.stringify(r.body.input?.[0] ?? "") + JSON.stringify(r.body.input ?? ""));
      if (!f) return [{ text: "no task in the prompt" }];
      step++;
      if (step === 1) return [{ patch: reservedPatch }];
      if (step === 2) return [{ patch: helloPatch }];
      // Codex's sandbox keeps .git read-only: the commit fails, and the supervisor commits after the run.
      if (step === 3) return [{ tool: "exec_command", input: { cmd: "git add hello.txt && git commit -q -m 'hello: say hi'", workdir: wt } }];
      if (step === 4) return [{ tool: "mcp__a2a__task_done", input: { id: f.id, token: f.token, result: "wrote hello.txt" } }];
      return [{ text: `finished: ${toolOutputs(r).join(" ")}` }];
    });
    try {
      const w: AgentWorker = { name: "cy", agent: "codex", worktree: true, repo, bin: CODEX, args: codexProvider(api.url, "gpt-5.5"), env: { ...(codexEnv({ home, store: store.path }) as Record<string, string>), ...GIT_ENV } };
      const spec = await launchAgent(w, job, { store: store.path, a2aBin: BIN });
      expect(spec.cmd.join(" ")).not.toContain(job.token);
      const run = await spawnSpec(spec);
      expect(run.code).toBe(0);
      const asked = api.requests.find((r) => framing(JSON.stringify(r.body.input)))!;
      expectFramed(JSON.stringify(asked.body.input), job);
      expect(toolOutputs(api.requests[1])[0]).toMatch(/src\/reserved\.ts is reserved by other-worker/);
      expect(readFileSync(join(wt, "src", "reserved.ts"), "utf8")).toBe("export const mine = 1;\n");
      const t = await taskState(store.path, job.id);
      expect(t.state).toBe("done");
      expect(t.result).toBe("wrote hello.txt");
      expect(toolOutputs(api.requests[3])[0]).toMatch(/Read-only file system/);
      expect(commitLeftovers(wt, "cy", `task ${job.id} attempt 1`)).toBe(true);
      const rec = worktreeResult(wt);
      expect(rec.branch).toBe("a2a/cy");
      expect(sh(["git", "show", "--name-only", "--format=%s", rec.commit], repo).trim().split("\n")).toEqual([`task ${job.id} attempt 1`, "", "hello.txt"]);
      expect(commitLeftovers(wt, "cy", "again")).toBe(false);
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});

import { standIn as geminiStandIn, toolResults as geminiResults } from "./fixtures/gemini-api";
import { ROOT } from "../harness/run";
import { existsSync, writeFileSync as write } from "node:fs";

const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");

describe("crew worker: Gemini CLI (gemini -p)", () => {
  test("does the task in its worktree, is refused the reserved file, commits on a2a/NAME and ends it with task_done; the checkout is untouched", async () => {
    if (!existsSync(GEMINI)) return void console.log(`SKIPPED the crew worker: ${GEMINI} is missing (bun install installs @google/gemini-cli)`);
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    // The user's own Gemini CLI settings: an API key as its auth (so the base URL is honoured).
    const home = join(d.path, "home");
    mkdirSync(join(home, ".gemini"), { recursive: true });
    write(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false } }));
    await reserveForOther(store.path, repo);
    const before = snapshot(repo);
    const job = await claimed(store.path, "di", "write hello.txt saying hi");
    const wt = join(d.path, "app.crew", "di");
    let step = 0;
    const api = geminiStandIn((r) => {
      const f = framing(JSON.stringify(r.body.contents ?? ""));
      if (!f) return [{ text: "no task in the prompt" }];
      step++;
      if (step === 1) return [{ call: "write_file", args: { file_path: join(wt, "src", "reserved.ts"), content: "taken\n" } }];
      if (step === 2) return [{ call: "write_file", args: { file_path: join(wt, "hello.txt"), content: "hi\n" } }];
      if (step === 3) return [{ call: "run_shell_command", args: { command: "git add hello.txt", description: "stage" } }];
      if (step === 4) return [{ call: "run_shell_command", args: { command: "git commit -q -m 'hello: say hi'", description: "commit" } }];
      if (step === 5) return [{ call: "mcp_a2a_task_done", args: { id: f.id, token: f.token, result: "wrote hello.txt" } }];
      return [{ text: `finished: ${geminiResults(r).join(" ")}` }];
    });
    try {
      const env = { HOME: home, PATH: `${join(BIN, "..")}:${process.env.PATH}`, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: api.url, NO_COLOR: "1", ...GIT_ENV };
      const w: AgentWorker = { name: "di", agent: "gemini", worktree: true, repo, bin: GEMINI, args: ["-m", "gemini-2.5-flash"], env };
      const spec = await launchAgent(w, job, { store: store.path, a2aBin: BIN });
      expect(spec.cmd.join(" ")).not.toContain(job.token);
      const run = await spawnSpec({ ...spec, env: { ...spec.env, GITHUB_SHA: undefined, SURFACE: undefined } });
      expect(run.code).toBe(0);
      const asked = api.requests.find((r) => framing(JSON.stringify(r.body.contents)))!;
      expectFramed(JSON.stringify(asked.body.contents), job);
      expect(geminiResults(api.requests[1])[0]).toMatch(/src\/reserved\.ts is reserved by other-worker/);
      expect(readFileSync(join(wt, "src", "reserved.ts"), "utf8")).toBe("export const mine = 1;\n");
      const t = await taskState(store.path, job.id);
      expect(t.state).toBe("done");
      expect(t.result).toBe("wrote hello.txt");
      const rec = worktreeResult(wt);
      expect(rec.branch).toBe("a2a/di");
      expect(sh(["git", "show", "--name-only", "--format=%s", rec.commit], repo).trim().split("\n")).toEqual(["hello: say hi", "", "hello.txt"]);
      expect(sh(["git", "status", "--porcelain", "--untracked-files=all"], wt)).toBe(""); // a2a's settings file stays out of the commits
      expect(JSON.parse(readFileSync(join(wt, ".gemini", "settings.json"), "utf8")).mcpServers.a2a.command).toBe(BIN);
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});

import { OPENCODE, env as opencodeEnv, provider as opencodeProvider, skipPluginInstall, skipped as opencodeSkipped, type Sandbox as OpencodeSandbox } from "./fixtures/opencode";
import { standIn as chatStandIn, toolResults as chatResults } from "./fixtures/openai-chat";

describe("crew worker: opencode (opencode run)", () => {
  test("does the task in its worktree, is refused the reserved file, commits on a2a/NAME and ends it with task_done; the checkout is untouched", async () => {
    if (opencodeSkipped("the crew worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    await reserveForOther(store.path, repo);
    const before = snapshot(repo);
    const job = await claimed(store.path, "eli", "write hello.txt saying hi");
    const wt = join(d.path, "app.crew", "eli");
    let step = 0;
    const api = chatStandIn((r) => {
      const f = framing(JSON.stringify(r.body.messages ?? ""));
      if (!f || !(r.body.tools ?? []).length) return [{ text: "no task in the prompt" }];
      step++;
      if (step === 1) return [{ tool: "write", input: { filePath: join(wt, "src", "reserved.ts"), content: "taken\n" } }];
      if (step === 2) return [{ tool: "write", input: { filePath: join(wt, "hello.txt"), content: "hi\n" } }];
      if (step === 3) return [{ tool: "bash", input: { command: "git add hello.txt", description: "stage" } }];
      if (step === 4) return [{ tool: "bash", input: { command: "git commit -q -m 'hello: say hi'", description: "commit" } }];
      if (step === 5) return [{ tool: "a2a_task_done", input: { id: f.id, token: f.token, result: "wrote hello.txt" } }];
      return [{ text: `finished: ${chatResults(r).join(" ")}` }];
    });
    try {
      // The user's own opencode config: the stand-in as its model.
      const home = join(d.path, "home");
      const config = join(home, ".config", "opencode");
      mkdirSync(config, { recursive: true });
      mkdirSync(join(home, "tmp"));
      skipPluginInstall(config);
      write(join(config, "opencode.json"), JSON.stringify(opencodeProvider(api.url), null, 2));
      const s: OpencodeSandbox = { home, config, proj: wt, store: store.path };
      const env = { ...(opencodeEnv(s, wt) as Record<string, string>), ...GIT_ENV };
      const w: AgentWorker = { name: "eli", agent: "opencode", worktree: true, repo, bin: OPENCODE, args: ["-m", "standin/m"], env };
      const spec = await launchAgent(w, job, { store: store.path, a2aBin: BIN });
      expect(spec.cmd.join(" ")).not.toContain(job.token);
      const run = await spawnSpec(spec);
      expect(run.code).toBe(0);
      const asked = api.requests.find((r) => framing(JSON.stringify(r.body.messages)))!;
      expectFramed(JSON.stringify(asked.body.messages), job);
      expect(api.requests.flatMap(chatResults).find((t) => /reserved by/.test(t))).toMatch(/^a2a: src\/reserved\.ts is reserved by other-worker/);
      expect(readFileSync(join(wt, "src", "reserved.ts"), "utf8")).toBe("export const mine = 1;\n");
      const t = await taskState(store.path, job.id);
      expect(t.state).toBe("done");
      expect(t.result).toBe("wrote hello.txt");
      const rec = worktreeResult(wt);
      expect(rec.branch).toBe("a2a/eli");
      expect(sh(["git", "show", "--name-only", "--format=%s", rec.commit], repo).trim().split("\n")).toEqual(["hello: say hi", "", "hello.txt"]);
      expect(sh(["git", "status", "--porcelain", "--untracked-files=all"], wt)).toBe("");
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});
