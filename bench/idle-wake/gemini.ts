// The idle wake figure for Gemini CLI (issue 35): from `a2a send NAME` to the model request that
// carries the wake, for an interactive session of the real Gemini CLI (on a pseudo-terminal, the
// user's experimental.modelSteering and tools.shell.backgroundCompletionBehavior "inject" set)
// sitting idle at its prompt with a2a's waiter running in the background, offline against the
// Gemini API stand-in. One driver of bench/idle-wake.ts; alone: `bun bench/idle-wake/gemini.ts
// [-n N]` prints the samples and p50.
//
// The user asks the model once to wait for mail; the model starts `a2a hook wake --agent gemini`
// in the background and ends its turn, and after each wake it reads its mail and starts the
// waiter again (so at most 5 samples: the loop guard holds the 6th wake with no user prompt).
// Each sample: once the session is idle the clock starts as `a2a send` is spawned (a new sender each time) and
// stops when the stand-in receives the request that carries the wake. At least the rule's
// per-session gap (2 s) lies between two wakes. Nothing asserts on time.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { WAKE_LIMITS } from "../../lib/sessions/wake-rule";
import { a2a, BIN, childEnv, notCI, ROOT } from "../../tests/harness/run";
import { standIn, toolResults, type Request } from "../../tests/e2e/fixtures/gemini-api";
import { endTree, watchText } from "../../tests/e2e/fixtures/opencode";
import { arrivals, idle } from "./common";

export const agent = "Gemini CLI";

const GEMINI = join(ROOT, "node_modules", ".bin", "gemini");
const shq = (a: string) => "'" + a.replace(/'/g, "'\\''") + "'";
const userText = (r: Request): string => JSON.stringify(r.body.contents.filter((c: any) => c.role === "user").at(-1) ?? {});

// `n` samples in ms (at most 5: the loop guard); throws why it cannot run.
export async function measure(n: number): Promise<number[]> {
  if (!existsSync(GEMINI)) throw new Error(`${GEMINI} is missing (bun install installs @google/gemini-cli)`);
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-wake-"));
  const store = join(dir, "store");
  const proj = join(dir, "proj");
  const home = join(dir, "home");
  mkdirSync(proj);
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(join(home, ".gemini", "trustedFolders.json"), JSON.stringify({ [proj]: "TRUST_FOLDER" }));
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } }, privacy: { usageStatisticsEnabled: false }, experimental: { modelSteering: true }, tools: { shell: { backgroundCompletionBehavior: "inject" } } }));
  const set = await a2a(["setup", "gemini"], { dir: store, env: { HOME: home } });
  if (set.code !== 0) throw new Error(`a2a setup gemini: ${set.stderr}`);
  const seen = arrivals<Request>();
  const api = standIn((r) => {
    seen.add(r);
    if (process.env.A2A_BENCH_DEBUG) console.error(`${(performance.now() / 1000).toFixed(1)} request ${r.n}: ${userText(r).slice(0, 160)}`);
    // Woken, the model reads its mail and starts the waiter again (no user prompt between, so
    // at most the loop guard's 5 wakes: n <= 5).
    const t = userText(r);
    const waiter = [{ call: "run_shell_command", args: { command: `${BIN} --dir ${store} hook wake --agent gemini`, description: "wait for a2a mail", is_background: true } }];
    if (t.includes("moved to background")) return [{ text: "ok" }];
    if (t.includes("[a2a wake]")) return [{ call: "mcp_a2a_check_messages", args: {} }];
    if (t.includes("mcp_a2a_check_messages") || t.includes("wait for mail")) return waiter;
    return [{ text: "ok" }];
  });
  const env = childEnv({ dir: store, env: { HOME: home, PATH: `${dirname(BIN)}:${process.env.PATH}`, GEMINI_API_KEY: "test-key-offline", GOOGLE_GEMINI_BASE_URL: api.url, ...notCI(), GITHUB_SHA: undefined, SURFACE: undefined, TERM: "xterm-256color", SHELL: "/bin/sh" } });
  const tty = Bun.spawn({ cmd: ["script", "-q", "-e", "-c", `stty rows 40 cols 120; exec ${shq(GEMINI)} -m gemini-2.5-flash --approval-mode yolo`, "/dev/null"], cwd: proj, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const screen = watchText(tty.stdout);
  const samples: number[] = [];
  const step = (what: string) => process.env.A2A_BENCH_DEBUG && console.error(`${(performance.now() / 1000).toFixed(1)} ${what}`);
  try {
    await screen.waitFor(/Type your message/i, 120_000);
    // Typed, then Enter on its own once shown: keys that come at once are read as a paste.
    tty.stdin.write("wait for mail");
    tty.stdin.flush();
    await screen.waitFor(/wait for mail/, 60_000);
    let started = seen.next((r) => userText(r).includes("moved to background"));
    tty.stdin.write("\r");
    tty.stdin.flush();
    let lastWake = 0;
    for (let i = 0; i < Math.min(n, WAKE_LIMITS.run); i++) {
      await started;
      step(`started ${i}`);
      await idle(store, "proj");
      const gap = lastWake + WAKE_LIMITS.gapSec * 1000 + 100 - performance.now();
      if (gap > 0) await Bun.sleep(gap); // pacing, not a wait for a condition: the rule's own gap
      const woken = seen.next((r) => userText(r).includes("[a2a wake]"));
      const t0 = performance.now();
      const sent = await a2a(["send", "proj", `ping ${i}`, "--as", `sender-${i}`], { dir: store });
      if (sent.code !== 0) throw new Error(`a2a send: ${sent.stderr}`);
      await woken;
      step(`woken ${i}`);
      lastWake = performance.now();
      samples.push(lastWake - t0);
      started = seen.next((r) => userText(r).includes("moved to background"));
      started.catch(() => {}); // the last one is not awaited
      await seen.next((r) => toolResults(r).some((t) => t.includes(`ping ${i}`)));
      step(`read ${i}`);
    }
  } finally {
    await endTree(tty.pid);
    await tty.exited;
    api.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return samples;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { n: { type: "string", short: "n", default: "5" } } });
  const xs = await measure(Number(values.n));
  console.log(`${agent}: ${xs.map((x) => x.toFixed(0)).join(" ")} ms; p50 ${[...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)].toFixed(0)} ms`);
}
