// `a2a crew up` against what a real repository may hold around it (issue 36, r3's review), through
// the compiled binary with a stand-in agent on PATH: whatever the crew is given, the user's
// checkout is never where a worker's worktree goes, and a refusal leaves everything as it was.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, collect, exitWithin, readUntil, spawnA2A, tempDir, testStore, type RunOptions } from "../harness/run";
import { expectCleanError } from "./fixtures/core";
import { claimed, framing, GIT_ENV, sh, snapshot, spawnSpec, taskState, userRepo } from "./fixtures/crew";
import { launchAgent, type AgentWorker } from "../../cli/crew/launch";
import { CLAUDE, claudeEnv, skipped as claudeSkipped } from "./fixtures/claude";
import { standIn, toolResults, type Request } from "./fixtures/messages-api";

setDefaultTimeout(120_000);

// A stand-in `claude` on PATH (crew up only checks it is there before it refuses).
function fakeAgent(root: string): string {
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "claude"), "#!/bin/sh\nexit 1\n");
  chmodSync(join(bin, "claude"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

// `a2a crew up` that must be refused: one that starts instead is stopped (Ctrl-C's SIGTERM) and
// the test fails on it, rather than running until the test's own time limit.
async function refusedUp(file: string, o: RunOptions) {
  const p = spawnA2A(["crew", "up", file], o);
  try {
    await exitWithin(p, 30_000);
  } catch (e) {
    p.kill("SIGTERM");
    await p.exited;
    throw e;
  }
  return collect(p);
}

describe("crew up: a worker's worktree is never inside the user's checkout", () => {
  for (const [what, target] of [["the checkout itself", "app"], ["its git directory", "app/.git"]] as const) {
    test(`REPO.crew a symlink to ${what}: refused in one line, exit 2, nothing made`, async () => {
      using d = tempDir();
      using store = testStore();
      const repo = userRepo(d.path);
      symlinkSync(join(d.path, target), join(d.path, "app.crew"));
      writeFileSync(join(repo, "crew.toml"), 'lease = "3s"\n[[worker]]\nname = "ann"\nagent = "claude"\nqueues = ["q"]\n');
      const before = snapshot(repo);
      const r = await refusedUp(join(repo, "crew.toml"), { dir: store.path, env: { PATH: fakeAgent(d.path) } });
      expectCleanError(r, 2, /app\.crew\/ann \(.*\) is inside your checkout .*: give the crew a worktree directory outside it/);
      expect(existsSync(join(d.path, target, "ann"))).toBe(false);
      expect(sh(["git", "branch", "--list", "a2a/*"], repo)).toBe("");
      expect(sh(["git", "worktree", "list", "--porcelain"], repo).match(/^worktree /gm)!.length).toBe(1);
      expect(snapshot(repo)).toEqual(before);
    });
  }
});

describe("crew up: a worker's branch checked out elsewhere", () => {
  test("the user's checkout on a2a/NAME: refused at crew up in one line, exit 2, the task untouched (not three failed attempts and a dead letter)", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    sh(["git", "checkout", "-q", "-b", "a2a/ann"], repo);
    writeFileSync(join(repo, "crew.toml"), 'lease = "3s"\n[[worker]]\nname = "ann"\nagent = "claude"\nqueues = ["q"]\nbackoff = "10ms"\n');
    const id = (await collect(spawnA2A(["task", "add", "q", "x"], { dir: store.path }))).stdout.trim();
    const before = snapshot(repo);
    const r = await refusedUp(join(repo, "crew.toml"), { dir: store.path, env: { PATH: fakeAgent(d.path) } });
    expectCleanError(r, 2, /^a2a: branch a2a\/ann, worker ann's, is checked out at .*\/app: switch that checkout to another branch/);
    const t = JSON.parse((await collect(spawnA2A(["task", "show", id, "--json"], { dir: store.path }))).stdout);
    expect({ state: t.state, attempts: t.attempts }).toEqual({ state: "ready", attempts: [] });
    expect(existsSync(join(d.path, "app.crew"))).toBe(false);
    expect(snapshot(repo)).toEqual(before);
  });
});

describe("crew up: an attempt's lease token never reaches what others read", () => {
  test("a run that prints its token (whole, split over two writes, on stdout and stderr): the log, the reason and the status show it replaced", async () => {
    using d = testStore();
    using w = tempDir();
    const id = (await collect(spawnA2A(["task", "add", "q", "x", "--max-attempts", "1"], { dir: d.path }))).stdout.trim();
    writeFileSync(join(w.path, "crew.toml"), `
[[worker]]
name = "leaky"
queues = ["q"]
self_finish = true
command = 'printf %s "$A2A_TASK_TOKEN" > tok; echo "token $A2A_TASK_TOKEN"; printf %s "$(cut -c1-5 tok)"; sleep 0.5; echo "$(cut -c6- tok)"; echo "err $A2A_TASK_TOKEN" >&2; exit 1'
`);
    const p = spawnA2A(["crew", "up", join(w.path, "crew.toml")], { dir: d.path });
    try {
      expect((await collect(spawnA2A(["task", "wait", id], { dir: d.path }))).code).toBe(1);
    } finally {
      p.kill("SIGTERM");
      await exitWithin(p, 30_000);
    }
    const token = readFileSync(join(w.path, "tok"), "utf8");
    expect(token).toMatch(/^1-[0-9a-f]{8,}$/);
    const log = await collect(spawnA2A(["crew", "logs", "leaky"], { dir: d.path }));
    const shown = await collect(spawnA2A(["task", "show", id, "--json"], { dir: d.path }));
    const status = await collect(spawnA2A(["crew", "--json"], { dir: d.path }));
    const said = await new Response(p.stderr).text();
    expect(log.code).toBe(0);
    expect(log.stdout).toContain("token [the task's token]");
    expect(log.stdout).toContain("err [the task's token]");
    expect(JSON.parse(shown.stdout).attempts[0].reason).toContain("[the task's token]");
    for (const [what, text] of [["crew logs", log.stdout], ["task show", shown.stdout], ["crew --json", status.stdout], ["crew up's lines", said]]) {
      expect({ what, leaks: text.includes(token) || text.includes(token.slice(5)) }).toEqual({ what, leaks: false });
    }
  });
});

// The processes whose command line holds `marker` (a number no other test uses).
function procsWith(marker: string): number[] {
  return readdirSync("/proc").filter((d) => /^\d+$/.test(d)).flatMap((d) => {
    try {
      return readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker) ? [Number(d)] : [];
    } catch {
      return [];
    }
  });
}

describe("crew up: a run that leaves a process outside its group", () => {
  test("a setsid'd child holding the run's output: the attempt still ends (done with its stdout), and crew down returns", async () => {
    using d = testStore();
    using w = tempDir();
    const id = (await collect(spawnA2A(["task", "add", "q", "x"], { dir: d.path }))).stdout.trim();
    writeFileSync(join(w.path, "crew.toml"), `
[[worker]]
name = "daemonizer"
queues = ["q"]
command = 'setsid sh -c "echo out > escaped; exec sleep 86413" & until [ -s escaped ]; do sleep 0.05; done; echo started; exit 0'
`);
    const p = spawnA2A(["crew", "up", join(w.path, "crew.toml")], { dir: d.path });
    try {
      const waited = spawnA2A(["task", "wait", id], { dir: d.path });
      const done = await exitWithin(waited, 30_000).catch((e) => {
        waited.kill();
        throw e;
      });
      expect({ done, result: (await new Response(waited.stdout).text()).trim() }).toEqual({ done: 0, result: "started" });
      const down = spawnA2A(["crew", "down"], { dir: d.path });
      expect(await exitWithin(down, 30_000)).toBe(0);
      expect(await exitWithin(p, 30_000)).toBe(0);
      const log = await collect(spawnA2A(["crew", "logs", "daemonizer"], { dir: d.path }));
      expect(log.stdout).toContain("[a2a crew] a process the run left outside its process group still holds its output: not read further");
    } finally {
      if (p.exitCode === null) p.kill("SIGKILL");
      for (const pid of procsWith("86413")) process.kill(pid, "SIGKILL");
    }
  });
});

describe("crew worker (permissions \"edits\"): the git commands it may run write nothing outside its worktree", () => {
  test("Claude Code: git diff --output and git log --output aimed outside are not run without a human", async () => {
    if (await claudeSkipped("the crew worker")) return;
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const home = join(d.path, "home");
    mkdirSync(home);
    const before = snapshot(repo);
    const job = await claimed(store.path, "ann", "review your changes");
    const outside = [join(repo, "src", "api.ts.escaped"), join(d.path, "escaped-log.txt")];
    const userText = (r: Request) => JSON.stringify(r.body.messages?.[0] ?? "");
    const api = standIn((r) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "mcp__a2a__task_done")) return [{ text: "ok" }];
      const f = framing(userText(r));
      const step = r.body.messages.filter((m: any) => m.role === "assistant").length;
      if (!f) return [{ text: "no task in the prompt" }];
      if (step === 0) return [{ tool: "Bash", input: { command: `git diff --output=${outside[0]}`, description: "diff" } }];
      if (step === 1) return [{ tool: "Bash", input: { command: `git log --output=${outside[1]}`, description: "log" } }];
      if (step === 2) return [{ tool: "mcp__a2a__task_done", input: { id: f.id, token: f.token, result: "reviewed" } }];
      return [{ text: `finished: ${toolResults(r).join(" ")}` }];
    });
    try {
      const w: AgentWorker = { name: "ann", agent: "claude", worktree: true, repo, bin: CLAUDE, env: { ...(claudeEnv({ home, store: store.path, apiUrl: api.url }) as Record<string, string>), ...GIT_ENV } };
      const run = await spawnSpec(await launchAgent(w, job, { store: store.path, a2aBin: BIN }));
      expect(run.code).toBe(0);
      expect((await taskState(store.path, job.id)).state).toBe("done"); // the run went through all its steps
      for (const f of outside) expect({ f, written: existsSync(f) }).toEqual({ f, written: false });
      expect(snapshot(repo)).toEqual(before);
    } finally {
      api.close();
    }
  });
});

describe("crew up: a crew's name cannot collide with another crew's worker log", () => {
  test('name = "app.web" is refused in one line, exit 2 (its status would be crew app\'s worker web\'s log); a file app.web.toml names crew app-web', async () => {
    using d = testStore();
    using w = tempDir();
    const body = '[[worker]]\nname = "idle"\nqueues = ["other"]\ncommand = "true"\n';
    writeFileSync(join(w.path, "dotted.toml"), `name = "app.web"\n${body}`);
    const r = await refusedUp(join(w.path, "dotted.toml"), { dir: d.path });
    expectCleanError(r, 2, /dotted\.toml:1: crew name "app\.web" holds a dot, which a crew's name cannot \(its workers' logs are crew\.NAME\.WORKER\): use "-" instead/);
    writeFileSync(join(w.path, "app.web.toml"), body);
    const p = spawnA2A(["crew", "up", join(w.path, "app.web.toml")], { dir: d.path });
    try {
      const said = await readUntil(p.stderr as ReadableStream<Uint8Array>, (t) => t.includes(" up: "), 30_000);
      expect(said).toContain("crew app-web up: idle");
      expect(await exitWithin(spawnA2A(["crew", "down", "app-web"], { dir: d.path }), 30_000)).toBe(0);
      expect(await exitWithin(p, 30_000)).toBe(0);
    } finally {
      if (p.exitCode === null) p.kill("SIGKILL");
    }
  });
});

describe("crew up: names too long for what the crew keeps on the bus", () => {
  test("a crew name over 109 characters (its lease crewhost.NAME.HOST) and a worker whose log crew.CREW.WORKER would pass 128 are refused at their line, exit 2, nothing run", async () => {
    using d = testStore();
    using w = tempDir();
    expect((await a2a(["task", "add", "q", "hi"], { dir: d.path })).code).toBe(0);
    const crew = "c".repeat(110);
    writeFileSync(join(w.path, "long.toml"), `name = "${crew}"\n[[worker]]\nname = "w"\nqueues = ["q"]\ncommand = "cat"\n`);
    expectCleanError(await refusedUp(join(w.path, "long.toml"), { dir: d.path }), 2, new RegExp(`long\\.toml:1: crew name "${crew}" is 110 characters, over 109 \\(the crew's lease is crewhost\\.NAME\\.HOST\\): set a shorter name = "\\.\\.\\."`));
    const worker = "w".repeat(70);
    writeFileSync(join(w.path, "wide.toml"), `name = "${"c".repeat(60)}"\n[[worker]]\nname = "${worker}"\nqueues = ["q"]\ncommand = "cat"\n`);
    expectCleanError(await refusedUp(join(w.path, "wide.toml"), { dir: d.path }), 2, new RegExp(`wide\\.toml:3: worker name ${worker} is too long for crew c{60}: its log crew\\.c{60}\\.${worker} must fit in 128 characters; shorten the worker's name or the crew's`));
    const tasks = JSON.parse((await a2a(["task", "list", "q", "--json"], { dir: d.path })).stdout);
    expect(tasks.map((t: any) => [t.state, t.attempt])).toEqual([["ready", 0]]);
  });
});
