// Issue 35: mail wakes an idle opencode session. The real opencode (opencode serve, driven over
// its HTTP API as its TUI drives it; the TUI itself on a pseudo-terminal) with a2a's plugin,
// offline against the Chat Completions stand-in: a session that sits idle at its prompt gets
// mail from `a2a send` and its next model request carries the wake (a reason to look: the mail
// stays unread until the model reads it), with no keystroke; its state goes idle -> working ->
// idle; two idle sessions mailing each other stop at the loop guard; a user's half-typed line is
// left as it was.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { a2a, childEnv, tempDir, testStore } from "../harness/run";
import { standIn, toolNames, toolResults, type Request } from "./fixtures/openai-chat";
import { env, OPENCODE, serve, sessionSandbox, skipped, type Sandbox } from "./fixtures/opencode";

setDefaultTimeout(180_000);

const byTools = (r: Request) => toolNames(r).includes("a2a_whoami"); // a session's request (not the title's)
const userTexts = (r: Request): string[] => r.body.messages.filter((m: any) => m.role === "user").map((m: any) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));

// `p`, or a failure saying what did not happen once `ms` have passed (a generous bound, not a timing).
function within<T>(p: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(what())), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

// The session's model requests as they come, and a wait for one that `pred` picks (the stand-in's
// call for it is the event).
function requests() {
  const all: Request[] = [];
  const waiters = new Set<() => void>();
  return {
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

const shq = (a: string) => "'" + a.replace(/'/g, "'\\''") + "'";

// What a terminal program has shown so far, escape sequences taken out, and a wait for a pattern
// in it (read as it comes: the screen's own output is the event).
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
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error(`the screen never showed ${re}: ${text.slice(-1500)}`))), limitMs);
        waiters.add(check);
        check();
      }),
  };
}

async function waitState(s: Sandbox, name: string, state: string) {
  const r = await a2a(["wait-state", name, state, "--timeout", "60", "--json"], { dir: s.store });
  if (r.code !== 0) throw new Error(`wait-state ${name} ${state}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function peerState(s: Sandbox, name: string): Promise<string> {
  const l = JSON.parse((await a2a(["peers", "--json"], { dir: s.store })).stdout);
  return l.peers.find((p: any) => p.name === name)?.state ?? "gone";
}

describe("opencode: mail wakes an idle session", () => {
  test("opencode serve: a session idle at its prompt gets mail; its next model request is the wake, with no prompt from anyone; idle -> working -> idle; the mail stays unread until the model reads it", async () => {
    if (skipped("the idle wake")) return;
    using d = tempDir();
    using store = testStore();
    let s!: Sandbox;
    const seen: { wake: string; state: string; unread: number }[] = [];
    let read!: (r: Request) => void;
    const mailRead = new Promise<Request>((res) => (read = res));
    const api = standIn(async (r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      const wake = userTexts(r).find((t) => t.includes("unread a2a message"));
      if (toolResults(r).length) {
        read(r);
        return [{ text: "read it" }];
      }
      if (!wake) return [{ text: "nothing to do" }];
      const inbox = await a2a(["inbox", "--json"], { dir: s.store, env: { A2A_AGENT: "proj" } });
      seen.push({ wake, state: await peerState(s, "proj"), unread: JSON.parse(inbox.stdout).unread.length });
      return [{ tool: "a2a_check_messages", input: {} }];
    });
    s = await sessionSandbox(d.path, store.path, api.url);
    const oc = await serve(s);
    try {
      const id = await oc.newSession();
      await oc.prompt(id, "look around");
      await waitState(s, "proj", "working");
      expect(await waitState(s, "proj", "idle")).toMatchObject({ state: "idle" });
      const before = api.requests.filter(byTools).length;
      expect(before).toBe(1);
      const sent = await a2a(["send", "proj", "the build is broken", "--as", "alice"], { dir: s.store });
      expect(sent.code).toBe(0);
      const r = await within(mailRead, 60_000, () => `no model request carried a wake: ${api.requests.length} requests`);
      expect(seen).toHaveLength(1);
      expect(seen[0].wake).toContain(`1 unread a2a message for "proj" from alice: call check_messages`);
      expect(seen[0].wake).not.toContain("the build is broken"); // a reason to look, not the mail
      expect(seen[0].state).toBe("working");
      expect(seen[0].unread).toBe(1); // the wake delivered nothing: still unread when the model is asked
      expect(toolResults(r)[0]).toContain("the build is broken");
      expect(await waitState(s, "proj", "idle")).toMatchObject({ state: "idle" });
    } finally {
      await oc.stop();
      api.close();
    }
  });

  test("the TUI on a pseudo-terminal: a wake comes while the user has half a line typed; the line is left as it was, and sent whole when the user ends it", async () => {
    if (skipped("the idle wake in the TUI")) return;
    using d = tempDir();
    using store = testStore();
    let s!: Sandbox;
    const models = requests();
    const api = standIn(async (r) => {
      if (!byTools(r)) return [{ text: "a title" }];
      models.seen(r);
      if (toolResults(r).length) return [{ text: "read it" }];
      if (userTexts(r).at(-1)?.includes("unread a2a message")) return [{ tool: "a2a_check_messages", input: {} }];
      return [{ text: "ok" }];
    });
    s = await sessionSandbox(d.path, store.path, api.url);
    const tty = Bun.spawn({ cmd: ["script", "-q", "-e", "-c", shq(OPENCODE), "/dev/null"], cwd: s.proj, env: childEnv({ dir: s.store, env: { ...env(s, s.proj), TERM: "xterm-256color", SHELL: "/bin/sh" } }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const screen = watchScreen(tty.stdout);
    const type = (keys: string) => {
      tty.stdin.write(keys);
      tty.stdin.flush();
    };
    const asked = (pred: (r: Request) => boolean) => within(models.asked(pred), 60_000, () => `no such model request; the screen: ${screen.text().slice(-1500)}`);
    try {
      await screen.waitFor(/ask anything|tab agents|ctrl\+p/i);
      type("say hello\r");
      await asked((r) => userTexts(r).some((t) => t.includes("say hello")));
      await waitState(s, "proj", "working");
      await waitState(s, "proj", "idle");
      type("half a li");
      await screen.waitFor(/half a li/);
      expect((await a2a(["send", "proj", "the build is broken", "--as", "alice"], { dir: s.store })).code).toBe(0);
      const wake = await asked((r) => userTexts(r).at(-1)?.includes("unread a2a message") ?? false);
      expect(userTexts(wake).some((t) => t.includes("half a li"))).toBe(false); // not taken from the user
      await asked((r) => toolResults(r).some((t) => t.includes("the build is broken")));
      await waitState(s, "proj", "idle");
      type("ne\r");
      const mine = await asked((r) => userTexts(r).some((t) => t.includes("half a line")));
      expect(userTexts(mine).at(-1)).toContain("half a line");
    } finally {
      tty.kill("SIGKILL");
      await tty.exited;
      api.close();
    }
  });
});
