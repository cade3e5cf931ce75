// Issue 35: can mail wake an idle interactive Gemini CLI (0.61.0) session? Its ways in, each tried
// with the real CLI on a pseudo-terminal against the Gemini API stand-in (fixtures/gemini-api.ts).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { a2a, BIN, childEnv, ROOT, tempDir, testStore } from "../harness/run";
import { newText, standIn, toolNames, toolResults, type Request } from "./fixtures/gemini-api";

setDefaultTimeout(180_000);

const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");
const shq = (a: string) => "'" + a.replace(/'/g, "'\\''") + "'";

function watchScreen(stream: ReadableStream<Uint8Array>) {
  let text = "";
  const waiters = new Set<() => void>();
  void (async () => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      text += dec.decode(chunk, { stream: true }).replace(/\x1b\[[0-9;?>]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[78=>]/g, " ");
      for (const w of [...waiters]) w();
    }
  })();
  return {
    text: () => text,
    waitFor: (re: RegExp, limitMs = 60_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => re.test(text) && (waiters.delete(check), clearTimeout(timer), resolve());
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`the screen never showed ${re}: ${text.slice(-2500)}`))), limitMs);
        waiters.add(check);
        check();
      }),
  };
}

function requests() {
  const all: Request[] = [];
  const waiters = new Set<() => void>();
  return {
    all,
    seen(r: Request) {
      all.push(r);
      for (const w of [...waiters]) w();
    },
    asked: (pred: (r: Request) => boolean) =>
      new Promise<Request>((resolve) => {
        const check = () => {
          const r = all.find(pred);
          if (r) waiters.delete(check), resolve(r);
        };
        waiters.add(check);
        check();
      }),
  };
}

function within<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what())), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

describe("Gemini CLI idle wake", () => {
  test("experiment: background shell completion injected into an idle session", async () => {
    if (!existsSync(GEMINI)) return;
    using d = tempDir();
    using store = testStore();
    const proj = join(d.path, "proj");
    const home = join(d.path, "home");
    mkdirSync(proj);
    mkdirSync(join(home, ".gemini"), { recursive: true });
    writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [proj]: "TRUST_FOLDER" }));
    writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false }, experimental: { modelSteering: true }, tools: { shell: { backgroundCompletionBehavior: "inject" } }, ui: { hideTips: true } }));
    expect((await a2a(["setup", "gemini"], { dir: store.path, env: { HOME: home } })).code).toBe(0);
    const models = requests();
    const api = standIn(async (r) => {
      models.seen(r);
      const t = newText(r);
      if (t.includes("start waiting") && !toolResults(r).length) return [{ call: "run_shell_command", args: { command: `${BIN} --dir ${store.path} hook wake --agent gemini`, description: "wait for a2a mail", is_background: true } }];
      return [{ text: "ok" }];
    });
    const env = childEnv({ dir: store.path, env: { HOME: home, PATH: `${dirname(BIN)}:${process.env.PATH}`, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: api.url, GITHUB_SHA: undefined, SURFACE: undefined, TERM: "xterm-256color", SHELL: "/bin/sh" } });
    const tty = Bun.spawn({ cmd: ["script", "-q", "-e", "-c", `stty rows 40 cols 120; exec ${shq(GEMINI)} -m gemini-2.5-flash --approval-mode yolo`, "/dev/null"], cwd: proj, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const screen = watchScreen(tty.stdout);
    const type = (keys: string) => {
      tty.stdin.write(keys);
      tty.stdin.flush();
    };
    try {
      await screen.waitFor(/Type your message/i, 90_000);
      type("start waiting");
      await screen.waitFor(/start waiting/);
      type("\r");
      await within(models.asked((r) => toolResults(r).length > 0), 60_000, () => `no tool result: ${screen.text().slice(-2500)}`);
      const r0 = await a2a(["wait-state", "proj", "idle", "--timeout", "60"], { dir: store.path });
      console.log("idle:", r0.code, r0.stderr);
      const n = models.all.length;
      expect((await a2a(["send", "proj", "the build is broken", "--as", "alice"], { dir: store.path })).code).toBe(0);
      const w = await within(models.asked((r) => r.n > n && newText(r).includes("unread a2a message")), 60_000, () => `no wake: ${models.all.map((r) => newText(r)).join("\n").slice(-3000)}\nSCREEN ${screen.text().slice(-2500)}`);
      console.log("WAKE:", newText(w).slice(0, 1500));
    } finally {
      tty.kill("SIGKILL");
      await tty.exited;
      api.close();
    }
  });
});
