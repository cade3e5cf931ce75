// Plumbing shared by the torture scenarios: running the compiled binary with a safety-net
// time limit, judging stderr, reading records the way a foreign reader would, snapshots of
// directory trees, the concurrent reader process, and the verdict of a scenario.
//
// No verdict here depends on timing: limits are safety nets that turn a hang into a reported
// failure ("did not finish within N s"), never a speed assertion.

import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { decodeRecord, type SlotRecord } from "../../lib/slots/record";
import { payloadTag } from "./payload";
import { spawnA2A as spawnBin, walkTree, type RunOptions } from "../../tests/harness/run";

export interface Ctx {
  bin: string; // the compiled a2a binary under test
  repo: string; // the repository root (fixtures run from its sources)
  short: boolean;
  seed: number;
  work: string; // scratch directory of this run; each scenario makes its own subdirectory
  isRoot: boolean;
  verbose: boolean; // print every command tried, not just the counts
  log: (line: string) => void;
}

export type Status = "PASS" | "FAIL" | "SKIP";

export interface Outcome {
  status: Status;
  summary: string; // one line of counts
  figures: [string, string][]; // label, value: printed under the verdict
  failures: string[]; // the first few, verbatim
}

// Collects failures; keeps every count but only the first samples of each kind.
export class Verdict {
  failures: string[] = [];
  private counts = new Map<string, number>();
  fail(kind: string, detail: string): void {
    const n = (this.counts.get(kind) ?? 0) + 1;
    this.counts.set(kind, n);
    if (n <= 3) this.failures.push(`${kind}: ${detail}`);
    else if (n === 4) this.failures.push(`${kind}: (more of these; counted below)`);
  }
  check(ok: boolean, kind: string, detail: () => string): boolean {
    if (!ok) this.fail(kind, detail());
    return ok;
  }
  get failed(): boolean {
    return this.counts.size > 0;
  }
  countsLine(): string {
    return [...this.counts].map(([k, n]) => `${k} x${n}`).join(", ");
  }
  outcome(summary: string, figures: [string, string][]): Outcome {
    const failures = this.failed ? [...this.failures, `failure counts: ${this.countsLine()}`] : [];
    return { status: this.failed ? "FAIL" : "PASS", summary, figures, failures };
  }
}

export const skip = (reason: string): Outcome => ({ status: "SKIP", summary: reason, figures: [], failures: [] });

export function scenarioDir(ctx: Ctx, name: string): string {
  const d = join(ctx.work, name);
  mkdirSync(d, { recursive: true });
  return d;
}

// ---- running the binary -------------------------------------------------------------------

export interface RunOpts extends Omit<RunOptions, "bin" | "pipeStdin"> {
  limitMs?: number; // safety net: kill and report as hung after this long
}

export interface RunResult {
  code: number | null; // null when killed by a signal
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
  hung: boolean; // the safety net fired
}

// Spawns `a2a ARGS...` through the shared harness (tests/harness/run.ts); stdin is a pipe fed
// o.stdin (or nothing) and closed at once, so a command that reads a piped stdin never waits
// for more.
export const spawnA2A = (ctx: Ctx, args: string[], o: RunOpts = {}) => spawnBin(args, { ...o, bin: ctx.bin, pipeStdin: true });

// Collects a spawned process's output and status; kills it (-9) if it outlives limitMs.
export async function finish(p: Subprocess<any, "pipe", "pipe">, started: number, limitMs = 60_000): Promise<RunResult> {
  let hung = false;
  const timer = setTimeout(() => {
    hung = true;
    p.kill(9);
  }, limitMs);
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  await p.exited;
  clearTimeout(timer);
  return { code: p.signalCode ? null : p.exitCode, signal: p.signalCode ? String(p.signalCode) : null, stdout, stderr, ms: performance.now() - started, hung };
}

export async function a2a(ctx: Ctx, args: string[], o: RunOpts = {}): Promise<RunResult> {
  const t0 = performance.now();
  return finish(spawnA2A(ctx, args, o), t0, o.limitMs);
}

const DOCUMENTED_EXITS = new Set([0, 1, 2, 3, 4, 124]);

// Judges stderr of a finished command: empty on success; on failure exactly one line
// "a2a: <what>: <fix>" (plus any "a2a: warning: ..." lines), a documented exit code, no trace.
// Under --json the error line is {"error": {"code", "message": "<what>: <fix>", "exit"}}, its
// exit the process's.
export function stderrProblem(r: RunResult, allowWarnings = true): string | undefined {
  if (r.hung) return `hung (killed by the safety net after ${Math.round(r.ms)} ms)`;
  if (r.code === null) return `died of ${r.signal}`;
  if (!DOCUMENTED_EXITS.has(r.code)) return `undocumented exit code ${r.code}`;
  const lines = r.stderr.split("\n").filter((l) => l !== "");
  const errors = lines.filter((l) => !(allowWarnings && l.startsWith("a2a: warning: ")));
  if (/\n\s+at |panic|Segmentation|Bun v\d|error: .*\n.*\^/i.test(r.stderr)) return `stack trace or crash text on stderr: ${short(r.stderr, 300)}`;
  if (r.code === 0) return errors.length ? `exit 0 with error text: ${short(r.stderr)}` : undefined;
  if (errors.length !== 1) return `exit ${r.code} with ${errors.length} error lines: ${short(r.stderr)}`;
  if (errors[0].startsWith("{")) {
    let e: { code?: unknown; message?: unknown; exit?: unknown } | undefined;
    try {
      e = JSON.parse(errors[0]).error;
    } catch {
      return `error line is neither "a2a: ..." nor JSON: ${short(errors[0])}`;
    }
    if (!e || typeof e.code !== "string" || typeof e.message !== "string" || !/^.+: .+/.test(e.message) || e.exit !== r.code) {
      return `JSON error line not {"error": {"code", "message": "<what>: <what to do>", "exit": ${r.code}}}: ${short(errors[0])}`;
    }
    return undefined;
  }
  if (!/^a2a: .+: .+/.test(errors[0])) return `error line not "a2a: <what>: <what to do>": ${short(errors[0])}`;
  return undefined;
}

export const short = (s: string, n = 160) => JSON.stringify(s.length > n ? s.slice(0, n) + "…" : s);

// ---- reading the store as a foreign reader ------------------------------------------------

export type RawRead =
  | { kind: "absent" }
  | { kind: "torn"; text: string }
  | { kind: "ok"; record: SlotRecord; text: string };

export function readRecordFile(path: string): RawRead {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return { kind: "absent" };
    throw err;
  }
  const record = decodeRecord(text);
  return record ? { kind: "ok", record, text } : { kind: "torn", text };
}

// Checks a record read from slots/NAME.json as a whole: the payload inside is whole too.
export function recordProblem(rec: SlotRecord, name: string): string | undefined {
  if (rec.name !== name) return `record names ${short(rec.name)} in ${name}.json`;
  if (rec.result !== null && payloadTag(rec.result) === undefined) return `result is not a whole payload: ${short(rec.result)}`;
  return undefined;
}

// ---- trees -----------------------------------------------------------------------------------

// path -> "type:size:content-hash" for every entry under `dir` (skipping `exclude` subtrees).
export function snapshot(dir: string, exclude: string[] = []): Map<string, string> {
  const out = new Map<string, string>();
  walkTree(dir, (p, _rel, st) => {
    if (exclude.includes(p)) return false;
    if (st.isDirectory()) out.set(p, `dir:${(st.mode & 0o7777).toString(8)}`);
    else if (st.isSymbolicLink()) out.set(p, `link:${readlinkSync(p)}`);
    else if (st.isFile()) out.set(p, `file:${st.size}:${Bun.hash(readFileSync(p)).toString(16)}:${(st.mode & 0o7777).toString(8)}`);
    else out.set(p, `other:${st.mode}`);
  });
  return out;
}

export function diffSnapshots(before: Map<string, string>, after: Map<string, string>): string[] {
  const diffs: string[] = [];
  for (const [p, sig] of after) if (before.get(p) !== sig) diffs.push(`${before.has(p) ? "changed" : "created"} ${p}`);
  for (const p of before.keys()) if (!after.has(p)) diffs.push(`removed ${p}`);
  return diffs;
}

export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

// ---- figures ---------------------------------------------------------------------------------

export function quantiles(xs: number[]): { p50: number; p90: number; p99: number; max: number; n: number } {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: s.length ? s[s.length - 1] : NaN, n: s.length };
}

export const ms = (x: number) => (Number.isNaN(x) ? "-" : x >= 100 ? `${Math.round(x)} ms` : `${x.toFixed(1)} ms`);

export function msLine(xs: number[]): string {
  const q = quantiles(xs);
  return `n=${q.n} p50 ${ms(q.p50)}, p90 ${ms(q.p90)}, p99 ${ms(q.p99)}, max ${ms(q.max)}`;
}

// ---- the concurrent reader -------------------------------------------------------------------

export interface ReaderStats {
  reads: number;
  ok: number;
  absent: number;
  torn: number; // failed a2a's record checks (a2a itself would skip/retry these)
  bad: number; // passed a2a's checks but the payload inside is not whole, or the name is wrong
  regress: number; // version went down between two reads (only counted with monotonic)
  chunkReads: number;
  chunkMissing: number; // a chunk the record counts was absent while the record stayed the same
  samples: string[];
}

export interface ReaderHandle {
  pid: number;
  stop(): Promise<ReaderStats>;
}

// Starts bench/torture/fixtures/reader.ts on `root`, reading `slots` in a loop until stopped.
export function startReader(ctx: Ctx, root: string, slots: string[], opts: { monotonic: boolean; tag: string }): ReaderHandle {
  const stopFile = join(ctx.work, `stop-reader-${opts.tag}`);
  const p = Bun.spawn({
    cmd: ["bun", join(ctx.repo, "bench/torture/fixtures/reader.ts"), root, stopFile, slots.join(","), opts.monotonic ? "monotonic" : "any"],
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  return {
    pid: p.pid,
    async stop() {
      writeFileSync(stopFile, "");
      const r = await finish(p, performance.now(), 60_000);
      const line = r.stdout.trim().split("\n").at(-1) ?? "";
      try {
        return JSON.parse(line) as ReaderStats;
      } catch {
        throw new Error(`the reader process failed (exit ${r.code ?? r.signal}): ${short(r.stderr, 400)}`);
      }
    },
  };
}

export function readerLine(s: ReaderStats): string {
  return `${s.reads} reads: ${s.ok} whole, ${s.absent} absent, ${s.torn} failing a2a's checks, ${s.bad} wrong inside, ${s.regress} version regressions; ${s.chunkReads} chunk reads, ${s.chunkMissing} counted chunks missing`;
}

// On PATH (and the sbin directories a root shell has), as the scenario will run it.
export function commandExists(cmd: string): boolean {
  return Bun.which(cmd, { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` }) !== null;
}
