// A session's state (issue 35, "Know each session's state") through the compiled binary and a
// real MCP client: the hooks mark it (session-start idle, user-prompt-submit working, stop idle,
// notification needs-you), a2a mcp marks it waiting while a tool blocks, a2a peers (and --json,
// and list_peers) shows it, a2a wait-state waits for it, and a killed session is gone at once.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, exitWithin, spawnA2A, tempDir, testStore, collect } from "../harness/run";
import { connect, type Session } from "../harness/mcp";

setDefaultTimeout(120_000);

const hook = (store: string, event: string, input: object, name = "alice") =>
  a2a(["hook", event], { dir: store, stdin: JSON.stringify(input), env: { A2A_AGENT: name } });

async function stateOf(store: string, name: string): Promise<{ state: string; on: string | null; since: number | null }> {
  const r = await a2a(["peers", "--json"], { dir: store });
  expect(r).toMatchObject({ code: 0, stderr: "" });
  const p = JSON.parse(r.stdout).peers.find((x: any) => x.name === name);
  return p ? { state: p.state, on: p.on, since: p.since } : { state: "gone", on: null, since: null };
}

// Resolves once a session shows waiting (its tool call has begun to block).
async function whenWaiting(store: string, name: string): Promise<{ state: string; on: string | null }> {
  const waiter = await a2a(["wait-state", name, "waiting", "--timeout", "60", "--json"], { dir: store });
  expect(waiter).toMatchObject({ code: 0, stderr: "" });
  return JSON.parse(waiter.stdout);
}

describe("session state", () => {
  test("the hooks mark idle, working, needs-you and idle again; peers shows it; wait-state wakes on the stop", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const session: Session = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "all" });
    try {
      expect((await stateOf(s.path, "alice")).state).toBe("idle"); // a2a mcp up, nothing said yet
      expect(await hook(s.path, "session-start", { cwd, hook_event_name: "SessionStart" })).toMatchObject({ code: 0, stderr: "" });
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
      expect(await hook(s.path, "user-prompt-submit", { cwd, prompt: "go" })).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(await stateOf(s.path, "alice")).toMatchObject({ state: "working", on: null });

      const table = await a2a(["peers"], { dir: s.path });
      expect(table.stdout).toMatch(/^NAME\s+AGENT\s+STATE\s+SINCE\s+HOLDS\s+HOST/);
      expect(table.stdout).toMatch(/\nalice\s+\S+\s+working\s+\d+s\s/);

      const asked = "Claude needs your permission to use Bash";
      expect(await hook(s.path, "notification", { cwd, hook_event_name: "Notification", message: asked, notification_type: "permission_prompt" })).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(await stateOf(s.path, "alice")).toMatchObject({ state: "needs-you", on: asked });
      expect((await a2a(["peers"], { dir: s.path })).stdout).toContain(`needs-you (${asked.slice(0, 29)}`);
      // A notification that asks nothing (a login that went through) changes nothing.
      await hook(s.path, "notification", { cwd, message: "Logged in", notification_type: "auth_success" });
      expect((await stateOf(s.path, "alice")).state).toBe("needs-you");

      // A script waiting for the turn to end wakes on the stop.
      const waiter = spawnA2A(["wait-state", "alice", "idle", "--timeout", "60"], { dir: s.path });
      expect(await hook(s.path, "stop", { cwd, stop_hook_active: false })).toMatchObject({ code: 0, stdout: "", stderr: "" });
      const woke = await collect(waiter);
      expect(woke).toMatchObject({ code: 0, stderr: "" });
      expect(woke.stdout).toMatch(/^alice idle for \d+s on \S+\n$/);

      // A stop held for unread mail leaves the session working.
      await hook(s.path, "user-prompt-submit", { cwd });
      expect((await a2a(["send", "alice", "hi", "--as", "bob"], { dir: s.path })).code).toBe(0);
      const held = await hook(s.path, "stop", { cwd, stop_hook_active: false });
      expect(JSON.parse(held.stdout).decision).toBe("block");
      expect((await stateOf(s.path, "alice")).state).toBe("working");
    } finally {
      await session.close();
    }
  });

  test("Claude Code's idle_prompt (its prompt idle for a minute) is no question to the user: the session shows idle, and a turn an interrupt or a rejected permission left marked shows idle too", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const session: Session = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    const idlePrompt = { cwd, hook_event_name: "Notification", message: "Claude is waiting for your input", notification_type: "idle_prompt" };
    try {
      await hook(s.path, "user-prompt-submit", { cwd, prompt: "go" });
      await hook(s.path, "stop", { cwd, stop_hook_active: false });
      const idle = await stateOf(s.path, "alice");
      expect(idle).toMatchObject({ state: "idle", on: null });
      // A minute at its prompt: Claude Code says so; the session is idle (and reachable by a wake), since its stop.
      expect(await hook(s.path, "notification", idlePrompt)).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(await stateOf(s.path, "alice")).toEqual(idle);
      // An interrupted turn (Esc: Claude Code runs no Stop hook) left it working; its prompt idle since says idle.
      await hook(s.path, "user-prompt-submit", { cwd, prompt: "go on" });
      expect((await stateOf(s.path, "alice")).state).toBe("working");
      await hook(s.path, "notification", idlePrompt);
      expect(await stateOf(s.path, "alice")).toMatchObject({ state: "idle", on: null });
      // A permission prompt the user rejected (the turn ends with no Stop hook): the same.
      await hook(s.path, "user-prompt-submit", { cwd, prompt: "and more" });
      await hook(s.path, "notification", { cwd, message: "Claude needs your permission to use Bash", notification_type: "permission_prompt" });
      expect((await stateOf(s.path, "alice")).state).toBe("needs-you");
      await hook(s.path, "notification", idlePrompt);
      expect(await stateOf(s.path, "alice")).toMatchObject({ state: "idle", on: null });
      // Nor is a notification that asks nothing a question: a background agent that finished.
      await hook(s.path, "notification", { cwd, message: "build finished", notification_type: "agent_completed" });
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
    } finally {
      await session.close();
    }
  });

  test("Claude Code's SessionStart after a compaction (source compact, mid-turn when automatic) leaves the state as it was; a start or a /clear marks idle", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const session: Session = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    try {
      await hook(s.path, "user-prompt-submit", { cwd, prompt: "refactor everything" });
      const working = await stateOf(s.path, "alice");
      expect(working.state).toBe("working");
      const compacted = await hook(s.path, "session-start", { cwd, hook_event_name: "SessionStart", source: "compact" });
      expect(compacted).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(compacted.stdout).hookSpecificOutput.additionalContext).toContain("alice"); // who it is, said again
      expect(await stateOf(s.path, "alice")).toEqual(working);
      await hook(s.path, "session-start", { cwd, hook_event_name: "SessionStart", source: "clear" });
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
    } finally {
      await session.close();
    }
  });

  test("a2a mcp marks the session waiting, on what, while task_claim blocks, and as before when it returns; list_peers shows it", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "all" });
    const bob = await connect(s.path, { A2A_AGENT: "bob" }, { cwd, tools: "all" });
    try {
      await hook(s.path, "user-prompt-submit", { cwd });
      const claim = alice.json("task_claim", { queue: "build", wait: true, timeout: 60 });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ name: "alice", state: "waiting", on: "a claimable task in build" });
      const listed = (await bob.json("list_peers", { scope: "all" })).peers.find((p: any) => p.name === "alice");
      expect(listed).toMatchObject({ state: "waiting", on: "a claimable task in build" });
      expect(await a2a(["task", "add", "build", "compile"], { dir: s.path })).toMatchObject({ code: 0 });
      const claimed = await claim;
      expect(claimed.ok).toBe(true);
      // The turn goes on: the mark the wait found is put back (just after the answer: it waits for no bookkeeping).
      const back = await a2a(["wait-state", "alice", "working", "--timeout", "60", "--json"], { dir: s.path });
      expect(JSON.parse(back.stdout)).toMatchObject({ state: "working", on: null });
      // The task it holds, until it is done.
      const held = (await bob.json("list_peers", { scope: "all" })).peers.find((p: any) => p.name === "alice");
      expect(held.task).toEqual({ queue: "build", id: claimed.id });
      expect((await a2a(["peers"], { dir: s.path })).stdout).toMatch(new RegExp(`\\nalice\\s+\\S+\\s+working\\s+\\d+s\\s+build/${claimed.id}\\s`));
      await alice.json("task_done", { id: claimed.id, token: claimed.token, result: "built" });
      expect(JSON.parse((await a2a(["peers", "--json"], { dir: s.path })).stdout).peers.find((p: any) => p.name === "alice").task).toBeNull();
      // And the paths it reserved.
      expect(await a2a(["reserve", "src/api/**", "--as", "alice"], { dir: s.path, cwd })).toMatchObject({ code: 0 });
      expect(JSON.parse((await a2a(["peers", "--json"], { dir: s.path })).stdout).peers.find((p: any) => p.name === "alice").reserved).toEqual(["src/api/**"]);
      expect((await a2a(["peers"], { dir: s.path })).stdout).toMatch(/\nalice\s+\S+\s+\S+\s+\d+s\s+src\/api\/\*\*\s/);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("Gemini CLI: a2a setup gemini installs the Notification hook (and --remove takes it out); its ToolPermission alert marks needs-you", async () => {
    using d = tempDir();
    using s = testStore();
    const home = join(d.path, "home");
    const cwd = join(d.path, "proj");
    mkdirSync(home);
    mkdirSync(cwd);
    const o = { dir: s.path, env: { HOME: home, GEMINI_CLI_HOME: undefined }, cwd: d.path };
    expect(await a2a(["setup", "gemini"], o)).toMatchObject({ code: 0, stderr: "" });
    const settings = join(home, ".gemini", "settings.json");
    const hooks = JSON.parse(readFileSync(settings, "utf8")).hooks;
    expect(hooks.Notification).toEqual([{ hooks: [{ type: "command", command: expect.stringMatching(/\/a2a --dir \S+ hook notification --agent gemini$/), timeout: 10000 }] }]);
    expect(await a2a(["setup", "gemini", "--remove"], o)).toMatchObject({ code: 0, stderr: "" });
    expect(existsSync(settings) ? JSON.parse(readFileSync(settings, "utf8")).hooks?.Notification : undefined).toBeUndefined();

    const session = await connect(s.path, { A2A_AGENT: "gem" }, { cwd, tools: "" });
    try {
      const alert = { cwd, hook_event_name: "Notification", notification_type: "ToolPermission", message: "Tool write_file requires permission", details: { tool: "write_file" } };
      const r = await a2a(["hook", "notification", "--agent", "gemini"], { dir: s.path, stdin: JSON.stringify(alert), env: { A2A_AGENT: "gem" } });
      expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
      expect(await stateOf(s.path, "gem")).toMatchObject({ state: "needs-you", on: "Tool write_file requires permission" });
    } finally {
      await session.close();
    }
  });

  test("a2a recv --wait in a session's shell shows the session waiting on mail until a message comes; a script's inbox is no session", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    try {
      const recv = spawnA2A(["recv", "--wait", "--timeout", "60"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "mail" });
      expect((await a2a(["send", "alice", "here you go", "--as", "bob"], { dir: s.path })).code).toBe(0);
      const got = await collect(recv);
      expect(got).toMatchObject({ code: 0, stderr: "" });
      expect(got.stdout).toContain("here you go");
      expect(JSON.parse((await a2a(["wait-state", "alice", "idle", "--timeout", "60", "--json"], { dir: s.path })).stdout)).toMatchObject({ state: "idle", on: null });
      // No live session holds "worker": its recv --wait writes no session record.
      const script = await a2a(["recv", "--wait", "--timeout", "0.1"], { dir: s.path, env: { A2A_AGENT: "worker" } });
      expect(script.code).toBe(124);
      expect(JSON.parse((await a2a(["wait-state", "worker", "gone", "--json"], { dir: s.path })).stdout)).toEqual({ name: "worker", state: "gone", since: null, on: null, host: null });
    } finally {
      await alice.close();
    }
  });

  test("a2a wait and task claim --wait in a session's shell show it waiting, on the slot or the queue, and its mark back after", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    try {
      expect((await hook(s.path, "user-prompt-submit", { cwd, prompt: "go" })).code).toBe(0);
      const marked = await stateOf(s.path, "alice");
      expect(marked.state).toBe("working");
      const wait = spawnA2A(["wait", "report", "--timeout", "60"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "slot report" });
      expect((await a2a(["publish", "report", "all green"], { dir: s.path })).code).toBe(0);
      expect(await collect(wait)).toMatchObject({ code: 0, stdout: "all green", stderr: "" });
      // Put back as it was: working, since the prompt (not since the wait).
      expect(await stateOf(s.path, "alice")).toEqual(marked);

      const claim = spawnA2A(["task", "claim", "build", "--wait", "--timeout", "60", "--json"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "a claimable task in build" });
      expect((await a2a(["task", "add", "build", "make all"], { dir: s.path })).code).toBe(0);
      const got = await collect(claim);
      expect(got).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(got.stdout)).toMatchObject({ queue: "build", payload: "make all", assignee: "alice" });
      expect(await stateOf(s.path, "alice")).toEqual(marked);

      // Published already: the wait returns at once, and the state is as it was.
      expect((await a2a(["wait", "report"], { dir: s.path, env: { A2A_AGENT: "alice" } })).stdout).toBe("all green");
      expect(await stateOf(s.path, "alice")).toEqual(marked);
    } finally {
      await alice.close();
    }
  });

  test("a wait in a session's shell killed with SIGKILL leaves no waiting mark behind: the session reads as the wait found it", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    try {
      expect((await hook(s.path, "user-prompt-submit", { cwd, prompt: "go" })).code).toBe(0);
      const marked = await stateOf(s.path, "alice");
      expect(marked.state).toBe("working");
      const wait = spawnA2A(["wait", "report", "--timeout", "60"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "slot report" });
      wait.kill("SIGKILL"); // Esc in the agent, or its tool's timeout: no finally runs
      await wait.exited;
      expect(await stateOf(s.path, "alice")).toEqual(marked); // in its turn still, since the prompt
      const r = await a2a(["wait-state", "alice", "working", "--timeout", "10", "--json"], { dir: s.path });
      expect(r).toMatchObject({ code: 0, stderr: "" });
      // From idle (its stop) it reads idle again.
      expect((await hook(s.path, "stop", { cwd, stop_hook_active: false })).code).toBe(0);
      const recv = spawnA2A(["recv", "--wait", "--timeout", "60"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "mail" });
      recv.kill("SIGKILL");
      await recv.exited;
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
      // The next wait and its end work from there.
      const again = spawnA2A(["wait", "report2", "--timeout", "60"], { dir: s.path, env: { A2A_AGENT: "alice" } });
      expect(await whenWaiting(s.path, "alice")).toMatchObject({ state: "waiting", on: "slot report2" });
      expect((await a2a(["publish", "report2", "ok"], { dir: s.path })).code).toBe(0);
      expect(await collect(again)).toMatchObject({ code: 0, stdout: "ok" });
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
    } finally {
      await alice.close();
    }
  });

  test("a killed session is gone at once: peers never shows it, wait-state gone returns", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    const waiter = spawnA2A(["wait-state", "alice", "gone", "--timeout", "60", "--json"], { dir: s.path });
    try {
      expect((await stateOf(s.path, "alice")).state).toBe("idle");
      process.kill(alice.pid, "SIGKILL");
      const woke = await collect(waiter);
      expect(woke).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(woke.stdout)).toMatchObject({ name: "alice", state: "gone" });
      const r = await a2a(["peers", "--json"], { dir: s.path });
      expect(JSON.parse(r.stdout).peers).toEqual([]);
    } finally {
      waiter.kill();
      await alice.close().catch(() => {});
    }
  });

  test("wait-state: 124 on --timeout, a warning for a name not on the bus yet, 2 for an unknown state or a name no session can have, one line each", async () => {
    using d = tempDir();
    using s = testStore();
    const cwd = join(d.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(s.path, { A2A_AGENT: "alice" }, { cwd, tools: "" });
    try {
      const t = await a2a(["wait-state", "alice", "working", "--timeout", "0.2"], { dir: s.path });
      expect(t).toMatchObject({ code: 124, stdout: "" });
      expect(t.stderr).toMatch(/^a2a: alice was not working in time: raise --timeout, or see what it is doing \(a2a peers\)\n$/);
      // A name not on the bus yet: a warning, and the wait goes on until it starts.
      const nf = await a2a(["wait-state", "nobody", "idle", "--timeout", "0.2"], { dir: s.path });
      expect(nf).toMatchObject({ code: 124, stdout: "" });
      expect(nf.stderr).toMatch(/^a2a: warning: no session named nobody has been on the bus yet: waiting for it to start \(a2a peers lists the live ones\)\na2a: nobody was not idle in time/);
      expect(await a2a(["wait-state", "nobody", "gone", "--json"], { dir: s.path })).toMatchObject({ code: 0, stderr: "", stdout: '{"name":"nobody","state":"gone","since":null,"on":null,"host":null}\n' });
      const bad = await a2a(["wait-state", "alice", "asleep"], { dir: s.path });
      expect(bad).toMatchObject({ code: 2, stdout: "" });
      expect(bad.stderr).toMatch(/^a2a: unknown session state "asleep": use working, idle, waiting, needs-you, gone/);
      expect(bad.stderr.split("\n").length).toBe(2);
      // A name no session can have: said at once (it never starts), and nothing is read outside the store.
      for (const name of ["bad name", "../../x", ""]) {
        const r = await a2a(["wait-state", name, "idle,gone"], { dir: s.path });
        expect(r).toMatchObject({ code: 2, stdout: "" });
        expect(r.stderr).toMatch(/^a2a: invalid session name "[^"]*": /);
        expect(r.stderr.split("\n").length).toBe(2);
      }
    } finally {
      await alice.close();
    }
  });
});
