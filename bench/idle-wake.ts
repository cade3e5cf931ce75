// `bun bench/idle-wake.ts [-n 5] [--only claude,...]`: issue 35's wake figure. For an idle
// interactive session of each agent (its real CLI against its stand-in model, on a pty), the time
// from `a2a send NAME` (just before the CLI is spawned) to the stand-in receiving the model
// request that carries the wake; p50 per agent, goal <= 2 s. One driver per agent in
// bench/idle-wake/<file>.ts (its `measure(n)` resolves with n figures in ms, or throws why it
// cannot run); add a line to AGENTS below for another. Keep n small (5) on a shared machine:
// each trial is a real model turn, and the wake rule allows one wake per 2 s per session (a
// driver waits that out between trials, and prompts as the user every 5 wakes: the loop guard).
import { loadavg } from "node:os";
import { parseArgs } from "node:util";

interface Driver {
  measure(n: number): Promise<number[]>;
}

const AGENTS: { file: string; agent: string; load: () => Promise<Driver> }[] = [
  { file: "claude", agent: "Claude Code", load: () => import("./idle-wake/claude") },
  { file: "codex", agent: "Codex CLI", load: () => import("./idle-wake/codex") },
  { file: "opencode", agent: "opencode", load: () => import("./idle-wake/opencode") },
  { file: "gemini", agent: "Gemini CLI", load: () => import("./idle-wake/gemini") },
];

const GOAL_MS = 2000;
const { values } = parseArgs({ options: { n: { type: "string", short: "n", default: "5" }, only: { type: "string" } } });
const n = Math.max(1, Number(values.n) || 5);
const only = values.only ? new Set(values.only.split(",")) : undefined;
const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

console.log(`idle wake: a2a send NAME -> the stand-in model receives the request carrying the wake (n=${n}, load ${loadavg()[0].toFixed(2)})`);
console.log("| agent | p50 | min | max | goal | samples (ms) |\n|---|---|---|---|---|---|");
let failed = false;
for (const a of AGENTS) {
  if (only && !only.has(a.file)) continue;
  try {
    const xs = await (await a.load()).measure(n);
    const m = p50(xs);
    console.log(`| ${a.agent} | ${m.toFixed(0)} ms | ${Math.min(...xs).toFixed(0)} ms | ${Math.max(...xs).toFixed(0)} ms | <= ${GOAL_MS} ms ${m <= GOAL_MS ? "met" : "MISSED"} | ${xs.map((x) => x.toFixed(0)).join(" ")} |`);
  } catch (e) {
    failed = true;
    console.log(`| ${a.agent} | not measured: ${(e as Error).message.split("\n")[0]} | | | <= ${GOAL_MS} ms | |`);
  }
}
process.exit(failed ? 1 : 0);
