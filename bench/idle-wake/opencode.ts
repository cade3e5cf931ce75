// The idle wake figure for opencode (issue 35): from `a2a send NAME` to the model request that
// carries the wake, for a session of the real opencode (`opencode serve`, a2a's plugin) sitting
// idle at its prompt, offline against the Chat Completions stand-in. One driver of
// bench/idle-wake.ts; alone: `bun bench/idle-wake/opencode.ts [-n N]` prints the samples and p50.
//
// Each sample: the user prompts (so the loop guard never holds), the turn ends, the session is
// idle and its a2a waiter runs; the clock starts as `a2a send` is spawned (a new sender each
// time: the per-sender bound never holds) and stops when the stand-in receives the request whose
// last user message is the wake. At least the rule's per-session gap (2 s) lies between two
// wakes, so no sample waits on it. Nothing asserts on time.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { WAKE_LIMITS } from "../../lib/sessions/wake-rule";
import { a2a } from "../../tests/harness/run";
import { standIn, toolResults, type Request } from "../../tests/e2e/fixtures/openai-chat";
import { OPENCODE, serve, sessionSandbox } from "../../tests/e2e/fixtures/opencode";
import { arrivals, idle } from "./common";

export const agent = "opencode";

const userText = (r: Request): string => JSON.stringify(r.body.messages.filter((m: any) => m.role === "user").at(-1)?.content ?? "");

// `n` samples in ms; throws why it cannot run.
export async function measure(n: number): Promise<number[]> {
  if (!existsSync(OPENCODE)) throw new Error(`${OPENCODE} is missing (bun install installs opencode-ai)`);
  const dir = mkdtempSync(join(tmpdir(), "a2a-bench-wake-"));
  const store = join(dir, "store");
  const seen = arrivals<Request>();
  const api = standIn((r) => {
    if (!(r.body.tools ?? []).length) return [{ text: "a title" }];
    seen.add(r);
    if (toolResults(r).length) return [{ text: "read" }];
    if (userText(r).includes("[a2a wake]")) return [{ tool: "a2a_check_messages", input: {} }];
    return [{ text: "ok" }];
  });
  const s = await sessionSandbox(dir, store, api.url);
  const oc = await serve(s);
  const samples: number[] = [];
  try {
    const id = await oc.newSession();
    let lastWake = 0;
    for (let i = 0; i < n; i++) {
      const asked = seen.next((r) => userText(r).includes(`turn ${i}`));
      await oc.prompt(id, `turn ${i}`);
      await asked;
      await idle(store, "proj");
      const gap = lastWake + WAKE_LIMITS.gapSec * 1000 + 100 - performance.now();
      if (gap > 0) await Bun.sleep(gap); // pacing, not a wait for a condition: the rule's own gap
      const woken = seen.next((r) => userText(r).includes("[a2a wake]"));
      const t0 = performance.now();
      const sent = await a2a(["send", "proj", `ping ${i}`, "--as", `sender-${i}`], { dir: store });
      if (sent.code !== 0) throw new Error(`a2a send: ${sent.stderr}`);
      await woken;
      lastWake = performance.now();
      samples.push(lastWake - t0);
      await seen.next((r) => toolResults(r).some((t) => t.includes(`ping ${i}`)));
      await idle(store, "proj");
    }
  } finally {
    await oc.stop();
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
