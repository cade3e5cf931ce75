// A session's state with real, interactive Claude Code (issue 35): the @anthropic-ai/claude-code
// CLI on a pseudo-terminal (util-linux `script`), offline against the Messages API stand-in
// (fixtures/messages-api.ts), set up by `a2a setup claude` in a sandbox HOME. Its hooks and its
// a2a mcp keep the state that a2a peers shows and a2a wait-state waits for: idle at its prompt,
// working in a turn, needs-you at a permission prompt, idle again, gone once it is killed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, childEnv, collect, descendants, tempDir, testStore } from "../harness/run";
import { CLAUDE, claudeEnv, setup, skipped } from "./fixtures/claude";
import { newText, standIn, toolResults } from "./fixtures/messages-api";
import { shq, watchScreen } from "./fixtures/pty";
import { endTree } from "./fixtures/opencode";

setDefaultTimeout(180_000);

// The Claude Code process under `pid` (script runs it through a shell), or 0.
function claudeBelow(pid: number): number {
  const bin = realpathSync(CLAUDE);
  return descendants(pid).find((k) => {
    try {
      return readlinkSync(`/proc/${k}/exe`) === bin;
    } catch {
      return false;
    }
  }) ?? 0;
}

describe("real Claude Code, interactive", () => {
  test("idle at its prompt, working in a turn, needs-you at a permission prompt, idle again, gone once killed", async () => {
    if (await skipped("the session state of an interactive session")) return;
    using d = tempDir();
    using store = testStore();
    const home = join(d.path, "home");
    const proj = join(d.path, "proj");
    mkdirSync(home);
    mkdirSync(proj);
    const o = { home, store: store.path };
    expect((await collect(setup(o))).code).toBe(0);
    // What an interactive start would ask first, answered: onboarding, the folder's trust, the key.
    const cfgFile = join(home, ".claude.json");
    const cfg = JSON.parse(readFileSync(cfgFile, "utf8"));
    writeFileSync(cfgFile, JSON.stringify({ ...cfg, hasCompletedOnboarding: true, theme: "dark", customApiKeyResponses: { approved: ["test-key-offline"], rejected: [] }, projects: { [proj]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }));
    const peerState = async () => {
      const l = JSON.parse((await a2a(["peers", "--json"], { dir: store.path })).stdout);
      return l.peers.find((p: any) => p.name === "proj")?.state ?? "gone";
    };
    // The turn's model requests; what a2a peers says of the session while the model is asked.
    const seen: string[] = [];
    const api = standIn(async (r) => {
      if (!(r.body.tools ?? []).some((t: any) => t.name === "Bash")) return [{ text: "ok" }]; // a side request
      seen.push(await peerState());
      if (/make the file/.test(newText(r)) && !toolResults(r).length) return [{ tool: "Bash", input: { command: "touch made-by-claude", description: "make the file" } }];
      return [{ text: "done" }];
    });
    const env = childEnv({ dir: store.path, env: { ...claudeEnv({ ...o, apiUrl: api.url }), TERM: "xterm", SHELL: "/bin/sh" } });
    // Manual permission mode: a tool that changes something asks the user first.
    const tty = Bun.spawn({ cmd: ["script", "-q", "-e", "-c", `${shq(CLAUDE)} --permission-mode default`, "/dev/null"], cwd: proj, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const screen = watchScreen(tty.stdout);
    const type = (keys: string) => {
      tty.stdin.write(keys);
      tty.stdin.flush();
    };
    const waitState = async (state: string) => {
      const r = await a2a(["wait-state", "proj", state, "--timeout", "60", "--json"], { dir: store.path });
      if (r.code !== 0) throw new Error(`wait-state ${state}: ${r.stderr}\nscreen: ${screen.text().slice(-2000)}`);
      return JSON.parse(r.stdout);
    };
    try {
      expect(await waitState("idle")).toMatchObject({ state: "idle" }); // started: not on the bus before
      await screen.waitFor(/for shortcuts/); // its prompt is there to type into
      type("say hello\r");
      expect(await waitState("working")).toMatchObject({ state: "working" });
      expect(await waitState("idle")).toMatchObject({ state: "idle" });
      expect(seen).toEqual(["working"]);
      // A tool that needs the user's yes: the permission prompt's Notification hook.
      type("make the file\r");
      const asked = await waitState("needs-you");
      expect(asked.on).toMatch(/permission/i);
      await screen.waitFor(/Do you want to/);
      type("\r"); // yes
      expect(await waitState("idle")).toMatchObject({ state: "idle", on: null });
      expect(existsSync(join(proj, "made-by-claude"))).toBe(true);
      // Killed: its a2a mcp goes with it, and the session is gone at once.
      const pid = claudeBelow(tty.pid);
      expect(pid).toBeGreaterThan(0);
      process.kill(pid, "SIGKILL");
      expect(await waitState("gone")).toMatchObject({ state: "gone" });
      expect(await peerState()).toBe("gone");
    } finally {
      await endTree(tty.pid); // the terminal and Claude Code under it: none may write after the test
      api.close();
    }
  });
  test("a session idle at its prompt stays idle through Claude Code's idle_prompt notification (it asks nothing), so mail can still wake it", async () => {
    if (await skipped("the idle_prompt notification of an interactive session")) return;
    using d = tempDir();
    using store = testStore();
    const home = join(d.path, "home");
    const proj = join(d.path, "proj");
    mkdirSync(home);
    mkdirSync(proj);
    const o = { home, store: store.path };
    expect((await collect(setup(o))).code).toBe(0);
    const cfgFile = join(home, ".claude.json");
    const cfg = JSON.parse(readFileSync(cfgFile, "utf8"));
    // Its idle notification after 1 s at the prompt rather than a minute.
    writeFileSync(cfgFile, JSON.stringify({ ...cfg, hasCompletedOnboarding: true, theme: "dark", messageIdleNotifThresholdMs: 1000, customApiKeyResponses: { approved: ["test-key-offline"], rejected: [] }, projects: { [proj]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } } }));
    // A second Notification hook runs a2a's once more, then publishes the event: once the slot has
    // it, the state that notification leaves is written.
    const settingsFile = join(home, ".claude", "settings.json");
    const settings = JSON.parse(readFileSync(settingsFile, "utf8"));
    const ours: string = settings.hooks.Notification[0].hooks[0].command;
    const bin = ours.split(" hook ")[0];
    const observe = `f=$(mktemp) && cat > "$f" && ${ours} < "$f"; ${bin} publish notified "$(cat "$f")"`;
    settings.hooks.Notification.push({ hooks: [{ type: "command", command: observe, timeout: 30 }] });
    writeFileSync(settingsFile, JSON.stringify(settings));
    const api = standIn(async () => [{ text: "hello" }]);
    const env = childEnv({ dir: store.path, env: { ...claudeEnv({ ...o, apiUrl: api.url }), TERM: "xterm", SHELL: "/bin/sh" } });
    const tty = Bun.spawn({ cmd: ["script", "-q", "-e", "-c", `${shq(CLAUDE)} --permission-mode default`, "/dev/null"], cwd: proj, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const screen = watchScreen(tty.stdout);
    const waitState = async (state: string) => {
      const r = await a2a(["wait-state", "proj", state, "--timeout", "60", "--json"], { dir: store.path });
      if (r.code !== 0) throw new Error(`wait-state ${state}: ${r.stderr}\nscreen: ${screen.text().slice(-2000)}`);
      return JSON.parse(r.stdout);
    };
    try {
      expect(await waitState("idle")).toMatchObject({ state: "idle" });
      await screen.waitFor(/for shortcuts/);
      tty.stdin.write("say hello\r");
      tty.stdin.flush();
      expect(await waitState("working")).toMatchObject({ state: "working" });
      const idle = await waitState("idle");
      const seen = await a2a(["wait", "notified", "--timeout", "60"], { dir: store.path });
      expect(seen.code).toBe(0);
      expect(JSON.parse(seen.stdout)).toMatchObject({ notification_type: "idle_prompt" });
      expect(await waitState("idle")).toEqual(idle); // not needs-you, and since its stop
    } finally {
      await endTree(tty.pid); // the terminal and Claude Code under it: none may write after the test
      api.close();
    }
  });
});
