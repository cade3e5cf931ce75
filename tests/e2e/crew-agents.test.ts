// A crew worker's coding agent, started for one task as cli/crew/launch.ts says (issue 36), with
// the real agent CLIs offline against their model stand-ins (tests/e2e/fixtures). The test stands
// in for the supervisor: it adds a task, claims it as the worker, builds the LaunchSpec, spawns
// it and waits for its exit. The model sees the framed prompt (on stdin), is refused the file
// another worker reserved (the hooks judge a worktree by the user's repository), writes a file,
// commits it, and ends the task with task_done through a2a's MCP tool; the work is on branch
// a2a/NAME in the worker's worktree; the user's checkout is untouched. A model that never calls
// task_done leaves the task claimed: the supervisor's cue that the attempt failed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, ROOT, tempDir, testStore } from "../harness/run";
import { launchAgent, type AgentWorker } from "../../cli/crew/launch";
import type { A2AError } from "../../lib/core/errors";
import { commitLeftovers, worktreeResult } from "../../lib/crew/worktree";
import { claimed, expectFramed, framing, GIT_ENV, reserveForOther, sh, snapshot, spawnSpec, taskState, userRepo } from "./fixtures/crew";
import { CLAUDE, claudeEnv, skipped as claudeSkipped } from "./fixtures/claude";
import { standIn, toolResults, type Request } from "./fixtures/messages-api";
import { CODEX, codexEnv, skipped as codexSkipped } from "./fixtures/codex";
import { standIn as responsesStandIn, toolOutputs } from "./fixtures/openai-responses";
import { standIn as geminiStandIn, toolResults as geminiResults } from "./fixtures/gemini-api";
import { OPENCODE, env as opencodeEnv, provider as opencodeProvider, skipPluginInstall, skipped as opencodeSkipped, type Sandbox as OpencodeSandbox } from "./fixtures/opencode";
import { standIn as chatStandIn, toolResults as chatResults } from "./fixtures/openai-chat";

setDefaultTimeout(120_000);


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
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false } }));
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
      writeFileSync(join(config, "opencode.json"), JSON.stringify(opencodeProvider(api.url), null, 2));
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

describe("crew worker: bad input is refused before anything is made", () => {
  test("an unknown agent, an agent not installed, a name git cannot branch, a worktree path taken by the user: one line each, nothing changed", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const before = snapshot(repo);
    const job = { queue: "build", id: "1796552822166000-177dbdcc", attempt: 1, token: "1-11b0c9ee062321e2", payload: "x", expiresAt: 1_900_000_000 };
    const ctx = { store: store.path, a2aBin: BIN };
    const refusal = async (w: AgentWorker) => {
      try {
        await launchAgent(w, job, ctx);
      } catch (e) {
        return e as A2AError;
      }
      throw new Error("not refused");
    };
    const cases: [AgentWorker, RegExp][] = [
      [{ name: "ann", agent: "aider" as AgentWorker["agent"], worktree: true, repo }, /^worker ann: unknown agent "aider": use one of claude, codex, gemini, opencode, copilot, qwen$/],
      [{ name: "ann", agent: "codex", worktree: true, repo, bin: "no-such-codex" }, /^worker ann: Codex CLI is not installed \(no no-such-codex on PATH\): npm install -g @openai\/codex, or give the worker its path$/],
      [{ name: "ann", agent: "qwen", worktree: true, repo, bin: "no-such-qwen" }, /^worker ann: Qwen Code is not installed \(no no-such-qwen on PATH\): npm install -g @qwen-code\/qwen-code, or give the worker its path$/],
      [{ name: "ann", agent: "copilot", worktree: true, repo, bin: "no-such-copilot" }, /^worker ann: Copilot CLI is not installed \(no no-such-copilot on PATH\): npm install -g @github\/copilot, or give the worker its path$/],
      [{ name: "a..b", agent: "claude", worktree: true, repo, bin: "true" }, /^worker name "a\.\.b" cannot be a git branch \(a2a\/a\.\.b\): take out "\.\.", and a "\." or "\.lock" at its end$/],
      [{ name: "x.", agent: "claude", worktree: true, repo, bin: "true" }, /^worker name "x\." cannot be a git branch \(a2a\/x\.\): take out "\.\.", and a "\." or "\.lock" at its end$/],
      [{ name: "../up", agent: "claude", worktree: true, repo, bin: "true" }, /^worker name "\.\.\/up" is not valid: names are/],
    ];
    for (const [w, said] of cases) {
      const e = await refusal(w);
      expect(e.code).toBe("EUSAGE");
      expect(e.message).toMatch(said);
    }
    const taken = join(d.path, "app.crew", "bob");
    mkdirSync(taken, { recursive: true });
    writeFileSync(join(taken, "mine.txt"), "the user's\n");
    const e = await refusal({ name: "bob", agent: "claude", worktree: true, repo, bin: "true" });
    expect(e.message).toBe(`${taken} exists and is not an a2a crew worktree: move it aside, or give the crew another worktree directory; nothing was changed`);
    expect(readFileSync(join(taken, "mine.txt"), "utf8")).toBe("the user's\n");
    expect(sh(["git", "branch", "--list", "a2a/*"], repo)).toBe("");
    expect(sh(["git", "worktree", "list", "--porcelain"], repo).match(/^worktree /gm)!.length).toBe(1);
    expect(snapshot(repo)).toEqual(before);
  });
});
