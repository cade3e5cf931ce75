// Running one worker process: started in a process group of its own (detached), so that a time
// limit or a stop ends everything it started (kill -TERM the group, then -KILL after a bounded
// grace), and, if asked (a long session, which never ends by itself), ended with us; its stdout
// kept up to a bound (the result of an exec), the tail of its output kept for a reason, and every
// line handed to `onOutput` (the worker's log on the bus).

import { readFileSync } from "node:fs";
import { A2AError } from "../core/errors";
import type { LaunchSpec } from "./worker";

export const GRACE_MS = 3000; // between TERM and KILL of a stopped process group
export const TAIL_BYTES = 2000; // of output, in a failed attempt's reason

export interface RunEnd {
  code: number | null; // exit status; null: ended by a signal
  signal: string | null;
  stdout: string; // up to `keep` bytes
  overflow: boolean; // stdout went over `keep`
  tail: string; // the last TAIL_BYTES of stderr and stdout, as they came
  errTail: string; // the last TAIL_BYTES of stderr alone
  stopped: "time" | "stop" | null; // why we ended it, if we did
}

export interface RunOptions {
  keep: number; // bytes of stdout to keep
  timeLimitMs: number | null;
  stop: AbortSignal; // a stop of the worker or the crew
  onOutput: (text: string) => void;
  onStdout?: (text: string) => void; // stdout alone, as it comes (an agent's JSON events)
  onStart?: (pid: number) => void;
  // The process is ended (KILL) by the kernel the moment this one dies, even by kill -9: Linux's
  // parent-death signal, set by util-linux's setpriv, which then runs the command in its own
  // place (same pid). Where setpriv is missing the process outlives us, as without this.
  endsWithUs?: boolean;
}

// The environment a worker gets: the supervisor's, with the launch's on top (undefined removes).
function envOf(spec: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...spec.env })) if (v !== undefined) env[k] = v;
  return env;
}

// When process `pid` started, as the kernel counts it (Linux: /proc/PID/stat's starttime), or
// null where that cannot be read: with the pid, it names one process, never a later one that
// was given the same pid.
export function procStart(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

export function killGroup(pid: number, signal: "SIGTERM" | "SIGKILL"): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone already
  }
}

export async function runProcess(spec: LaunchSpec, o: RunOptions): Promise<RunEnd> {
  let p: ReturnType<typeof Bun.spawn>;
  try {
    const setpriv = o.endsWithUs ? Bun.which("setpriv") : null;
    const cmd = setpriv ? [setpriv, "--pdeathsig", "KILL", "--", ...spec.cmd] : spec.cmd;
    p = Bun.spawn({ cmd, cwd: spec.cwd, env: envOf(spec), stdin: spec.stdin === undefined ? "ignore" : "pipe", stdout: "pipe", stderr: "pipe", detached: true });
  } catch (e) {
    throw new A2AError("EFAILED", `cannot start ${spec.cmd[0]}: ${(e as Error).message}`, { data: { cmd: spec.cmd[0] } });
  }
  o.onStart?.(p.pid);
  let stopped: RunEnd["stopped"] = null;
  let killer: ReturnType<typeof setTimeout> | undefined;
  const end = (why: "time" | "stop") => {
    if (stopped) return;
    stopped = why;
    killGroup(p.pid, "SIGTERM");
    killer = setTimeout(() => killGroup(p.pid, "SIGKILL"), GRACE_MS);
  };
  const limit = o.timeLimitMs === null ? undefined : setTimeout(() => end("time"), o.timeLimitMs);
  const onStop = () => end("stop");
  if (o.stop.aborted) onStop();
  else o.stop.addEventListener("abort", onStop, { once: true });
  let tail = "";
  let errTail = "";
  const out: Uint8Array[] = [];
  let kept = 0;
  let overflow = false;
  const readers: { cancel(): Promise<void> }[] = [];
  const pump = async (stream: ReadableStream<Uint8Array>, isOut: boolean) => {
    const dec = new TextDecoder();
    const reader = stream.getReader();
    readers.push(reader);
    for (;;) {
      const { done, value: chunk } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || !chunk) break;
      if (isOut) {
        if (kept + chunk.length > o.keep) overflow = true;
        if (kept < o.keep) out.push(chunk.subarray(0, o.keep - kept));
        kept += chunk.length;
      }
      const s = dec.decode(chunk, { stream: true });
      tail = (tail + s).slice(-TAIL_BYTES);
      if (!isOut) errTail = (errTail + s).slice(-TAIL_BYTES);
      else o.onStdout?.(s);
      o.onOutput(s);
    }
  };
  // stdin is fed while the output is read: a process that writes before it has read all of its
  // input must not wait on a full pipe that nobody empties.
  const feed = async () => {
    if (spec.stdin === undefined) return;
    const sink = p.stdin as import("bun").FileSink;
    try {
      sink.write(spec.stdin);
      await sink.end();
    } catch {
      // it did not read its stdin: its exit tells the story
    }
  };
  void feed(); // not awaited: a process that exits without reading its input ends the run all the same
  const pumps = Promise.all([pump(p.stdout as ReadableStream<Uint8Array>, true), pump(p.stderr as ReadableStream<Uint8Array>, false)]);
  await p.exited;
  // The process is gone; anything it left behind in its group goes with it (and lets go of the
  // pipes, so its output ends).
  killGroup(p.pid, "SIGKILL");
  // A process it started in a session of its own (setsid, a daemon) is out of the group and may
  // hold the pipes open for ever: its output is read no further than GRACE_MS, so the attempt
  // still ends (and a stop still returns).
  if (!(await settles(pumps, GRACE_MS))) {
    o.onOutput(`\n[a2a crew] a process the run left outside its process group still holds its output: not read further\n`);
    await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
    await pumps;
  }
  clearTimeout(limit);
  clearTimeout(killer);
  o.stop.removeEventListener("abort", onStop);
  const stdout = new TextDecoder().decode(Buffer.concat(out));
  return { code: p.signalCode ? null : p.exitCode, signal: p.signalCode ? String(p.signalCode) : null, stdout, overflow, tail, errTail, stopped };
}

// Whether `p` settles within `ms`.
function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([p.then(() => true, () => true), late]).finally(() => clearTimeout(timer));
}
