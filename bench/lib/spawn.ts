// Whole-process measurements, timed from the bench process with CLOCK_MONOTONIC: spawn a
// command and wait for it to exit (start-up), and the shell round trip of `a2a publish`
// spawned while `a2a wait` blocks. The harness cost (Bun.spawn + reaping) is in every
// figure; the /bin/true row measures it alone.

import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { mono } from "./clock";
import { hasWatch, until } from "../../tests/harness/run";

// Wall time from spawn to reaped, and the CPU time (user + system, all threads) the child
// used: CPU time is what the process itself costs, and moves far less than wall time when
// other jobs compete for the cores.
export async function timeSpawn(cmd: string[], env: Record<string, string>, stdin?: string, cwd?: string): Promise<{ wall: number; cpu: number }> {
  const t0 = mono();
  const p = Bun.spawn({ cmd, env, cwd, stdin: stdin === undefined ? "ignore" : new Blob([stdin]), stdout: "ignore", stderr: "pipe" });
  const code = await p.exited;
  const wall = mono() - t0;
  if (code !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} exited ${code}: ${(await new Response(p.stderr).text()).trim()}`);
  const ru = p.resourceUsage();
  return { wall, cpu: ru ? Number(ru.cpuTime.total) / 1000 : NaN };
}

export interface RoundTrip {
  eof: number; // publish spawned -> wait's stdout complete (EOF), what $(a2a wait x) sees
  exit: number; // publish spawned -> wait reaped, what `a2a wait x; next` sees
  publish: number; // publish spawned -> publish reaped
}

// `a2a wait NAME` is started and given time to register its watch (its inotify fd shows in
// /proc, then 2 ms more); then the clock starts and `a2a publish NAME PAYLOAD` is spawned.
export async function roundTrip(bin: string, env: Record<string, string>, name: string, payload: string): Promise<RoundTrip> {
  const wait = Bun.spawn({ cmd: [bin, "wait", name, "--timeout", "60"], env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  try {
    // Without /proc (not Linux) there is no way to see the watch: give it 100 ms instead.
    if (existsSync("/proc/self/fd")) await until(() => hasWatch(wait.pid) || wait.exitCode !== null, 20_000, "a2a wait to register its watch", 1);
    else await Bun.sleep(100);
    if (wait.exitCode !== null) throw new Error(`a2a wait exited early (${wait.exitCode}): ${(await new Response(wait.stderr).text()).trim()}`);
    await Bun.sleep(2);
    let tExit = NaN;
    let tPub = NaN;
    const t0 = mono();
    const pub = Bun.spawn({ cmd: [bin, "publish", name, payload], env, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
    const exited = wait.exited.then((c) => ((tExit = mono()), c));
    const pubExited = pub.exited.then((c) => ((tPub = mono()), c));
    let text = "";
    const dec = new TextDecoder();
    for await (const chunk of wait.stdout) text += dec.decode(chunk, { stream: true });
    const tEof = mono();
    const [wc, pc] = await Promise.all([exited, pubExited]);
    if (wc !== 0 || pc !== 0 || text !== payload) {
      throw new Error(`round trip: wait exited ${wc} with ${JSON.stringify(text.slice(0, 80))}, publish exited ${pc}: ${(await new Response(pub.stderr).text()).trim()}`);
    }
    return { eof: tEof - t0, exit: tExit - t0, publish: tPub - t0 };
  } finally {
    if (wait.exitCode === null) wait.kill("SIGKILL");
  }
}

// Start-up measured by hyperfine (`-N`: no shell, its own low-cost fork/exec), when installed:
// the figures a user reproduces with hyperfine itself. Timing from this Bun process adds
// Bun.spawn's own cost and the reaping of a piped stderr to every row, which flattens the
// ratios to the bare-Bun baseline (a 1.56x was shown as 1.06x): so these rows come from
// hyperfine, and timeSpawn is the fallback without it. `prepare` runs before each timed run
// (e.g. a send before each recv), untimed.
export const hyperfinePath = (): string | null => Bun.which("hyperfine");

export function hyperfineTimes(cmd: string[], env: Record<string, string>, runs: number, prepare?: string[]): { wall: number[]; cpu: number } {
  const hf = hyperfinePath();
  if (!hf) throw new Error("hyperfine is not installed");
  const out = `/tmp/a2a-bench-hf-${process.pid}-${Math.random().toString(36).slice(2)}.json`;
  const quote = (a: string) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`);
  const args = [hf, "-N", "--warmup", "10", "--runs", String(runs), "--style", "none", "--export-json", out];
  if (prepare) args.push("--prepare", prepare.map(quote).join(" "));
  args.push(cmd.map(quote).join(" "));
  const r = Bun.spawnSync({ cmd: args, env, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`hyperfine ${cmd.join(" ")}: ${r.stderr.toString().trim()}`);
  const res = JSON.parse(readFileSync(out, "utf8")).results[0];
  unlinkSync(out);
  return { wall: (res.times as number[]).map((s) => s * 1000), cpu: (res.user + res.system) * 1000 };
}
