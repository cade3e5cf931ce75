// Shared test plumbing: every test runs the compiled binary (dist/a2a) as a real process on a
// real temporary store. Nothing here sleeps to wait for a condition: waits are on output,
// exit, or files, each with a generous upper bound.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dir, "..", "..");
export const BIN = process.env.A2A_BIN || join(ROOT, "dist", "a2a");

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface RunOptions {
  dir?: string; // the store: passed as A2A_DIR
  env?: Record<string, string | undefined>;
  stdin?: string | Uint8Array;
  cwd?: string;
}

export function tempDir(prefix = "a2a-test-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

function envFor(o: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("A2A_")) env[k] = v;
  if (o.dir) env.A2A_DIR = o.dir;
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

// Spawns `a2a ARGS...` with piped stdout/stderr; stdin is the given text or empty.
export function spawnA2A(args: string[], o: RunOptions = {}) {
  return Bun.spawn({
    cmd: [BIN, ...args],
    env: envFor(o),
    cwd: o.cwd,
    stdin: o.stdin === undefined ? "ignore" : new Blob([o.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
}

// Runs `a2a ARGS...` to completion.
export async function a2a(args: string[], o: RunOptions = {}): Promise<RunResult> {
  const p = spawnA2A(args, o);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// Resolves once `text` satisfies `pred`, reading the stream incrementally; returns all text read.
export async function readUntil(stream: ReadableStream<Uint8Array>, pred: (text: string) => boolean, limitMs = 20_000): Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = setTimeout(() => reader.cancel().catch(() => {}), limitMs);
  try {
    while (!pred(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
  return text;
}

// Polls `cond` (cheap filesystem checks only) until true; throws after `limitMs`.
// For conditions with no event to wait on, such as "the waiter has registered its watch".
export async function until(cond: () => boolean, limitMs = 20_000, what = "condition"): Promise<void> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

// True once process `pid` holds an inotify instance: the waiter has registered its watch, so
// a publish from now on exercises the wake path rather than the initial check.
export function hasWatch(pid: number): boolean {
  try {
    const { readdirSync, readlinkSync } = require("node:fs");
    return readdirSync(`/proc/${pid}/fd`).some((fd: string) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}
