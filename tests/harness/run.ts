// The one harness for driving a2a as a real process, shared by the tests (tests/e2e/) and the
// bench and torture programs (bench/): where the binary is, the environment a child gets,
// temporary stores, spawning and running the binary, and waiting on its output or on
// /proc. Nothing here sleeps to wait for a condition: waits are on output, exit, or files,
// each with a generous upper bound. (MCP clients: ./mcp.ts. Building: ../build.ts.)
import { chmodSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

export const ROOT = join(import.meta.dir, "..", "..");
// The binary under test: $A2A_BIN (lets parallel work use separate binaries), else dist/a2a.
export const BIN = process.env.A2A_BIN ? resolve(process.env.A2A_BIN) : join(ROOT, "dist", "a2a");

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

export interface EnvOptions {
  dir?: string; // the store: passed as A2A_DIR
  env?: Record<string, string | undefined>; // extra settings; undefined removes one
}

export interface RunOptions extends EnvOptions {
  stdin?: string | Uint8Array; // what the child reads (nothing: stdin is /dev/null)
  pipeStdin?: boolean; // stdin is a real pipe, fed `stdin` (or nothing) and closed at once
  cwd?: string;
  bin?: string; // another binary than BIN
  prefix?: string[]; // run through this, e.g. ["setpriv", "--reuid=65534", ...]
}

// This process's environment without any A2A_* setting, plus the store and `env`: what a
// child sees, so a developer's own A2A_DIR or A2A_AGENT never leaks into a test.
export function childEnv(o: EnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("A2A_")) env[k] = v;
  if (o.dir) env.A2A_DIR = o.dir;
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function tempDir(prefix = "a2a-test-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

// The engine the e2e suite runs against (docs/ENGINE.md): A2A_TEST_STORE, unset or "file" for
// the file engine (a fresh temporary directory per store). A test that drives only the binary,
// whatever keeps the store, takes its store from testStore(); one that looks at the files on
// disk uses tempDir() and runs only where ENGINE is "file" (describe.if(ON_FILES)). The
// PostgreSQL engine (issue 22) adds `A2A_TEST_STORE=postgres://USER@HOST/DB`: a fresh schema
// per store, dropped after.
export const ENGINE = engineUnderTest(process.env.A2A_TEST_STORE);
export const ON_FILES = ENGINE === "file";

function engineUnderTest(raw: string | undefined): "file" {
  if (raw === undefined || raw === "" || raw === "file") return "file";
  throw new Error(`A2A_TEST_STORE=${JSON.stringify(raw.replace(/:[^:@/]*@/, ":***@"))} is not an engine this suite can run on: unset it, or set it to file`);
}

// A fresh, empty store of the engine under test; `path` is its location, for --dir / A2A_DIR.
export function testStore(): { path: string; [Symbol.dispose](): void } {
  return tempDir("a2a-store-");
}

// Spawns `a2a ARGS...` with piped stdout/stderr.
export function spawnA2A(args: string[], o: RunOptions = {}): Subprocess<any, "pipe", "pipe"> {
  const cmd = [...(o.prefix ?? []), o.bin ?? BIN, ...args];
  const common = { cmd, env: childEnv(o), cwd: o.cwd, stdout: "pipe", stderr: "pipe" } as const;
  if (!o.pipeStdin) return Bun.spawn({ ...common, stdin: o.stdin === undefined ? "ignore" : new Blob([o.stdin]) });
  const p = Bun.spawn({ ...common, stdin: "pipe" });
  try {
    if (o.stdin !== undefined) p.stdin.write(o.stdin);
    p.stdin.end();
  } catch {
    // the process already exited: its status tells the story
  }
  return p;
}

// Collects a finished process's stdout, stderr and exit code.
export async function collect(p: Subprocess<any, "pipe", "pipe">): Promise<RunResult> {
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// Runs `a2a ARGS...` to completion.
export const a2a = (args: string[], o: RunOptions = {}): Promise<RunResult> => collect(spawnA2A(args, o));

// Tests run as root, which ignores permission bits: these run a command as another OS user
// (a `prefix` for spawnA2A/a2a). `initGroups`: with the user's groups (a shared store's
// members); `umask`: through sh, as a login shell would set it.
export const canRunAsOthers = process.getuid?.() === 0 && Bun.which("setpriv") !== null;
export function asUser(user: string, o: { group?: string; initGroups?: boolean; umask?: string } = {}): string[] {
  const drop = ["setpriv", `--reuid=${user}`, `--regid=${o.group ?? user}`, o.initGroups ? "--init-groups" : "--clear-groups"];
  return o.umask ? [...drop, "sh", "-c", `umask ${o.umask}; exec "$@"`, "sh"] : [...drop, "--"];
}
// What such a user sees: no home of its own, and the store.
export const otherUserEnv = { HOME: "/nonexistent" };

// The members of a shared store, for real: a group and one OS user per key in it, made now (as
// root: canMakeUsers) with random names, and a directory they can reach (`dir`, 0755: the store
// goes inside); remove() removes all three.
export const canMakeUsers = canRunAsOthers && !!Bun.which("useradd") && !!Bun.which("groupadd");
export function makeUsers<K extends string>(keys: readonly K[], prefix: string): { group: string; users: Record<K, string>; dir: string; remove(): void } {
  const tag = Math.random().toString(36).slice(2, 7);
  const group = `${prefix}g${tag}`;
  const users = Object.fromEntries(keys.map((k, i) => [k, `${prefix}${i}${tag}`])) as Record<K, string>;
  const sys = (cmd: string[]) => {
    const r = Bun.spawnSync(cmd, { stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${r.stderr.toString()}`);
  };
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  chmodSync(dir, 0o755);
  const remove = () => {
    for (const u of Object.values<string>(users)) Bun.spawnSync(["userdel", u], { stderr: "ignore" });
    Bun.spawnSync(["groupdel", group], { stderr: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    sys(["groupadd", group]);
    for (const u of Object.values<string>(users)) sys(["useradd", "--no-create-home", "--shell", "/bin/sh", "-G", group, u]);
  } catch (err) {
    remove();
    throw err;
  }
  return { group, users, dir, remove };
}

// A shell command as `user` with its groups and umask 022: what a member can do by hand. Its exit status.
export function shellAs(user: string, script: string): number {
  return Bun.spawnSync(["setpriv", `--reuid=${user}`, `--regid=${user}`, "--init-groups", "sh", "-c", `umask 022; ${script}`], { stderr: "ignore", stdout: "ignore" }).exitCode;
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

// Polls `cond` (cheap filesystem checks only) every `everyMs` until true; throws after
// `limitMs`. For conditions with no event to wait on, such as "the waiter holds its watch".
export async function until(cond: () => boolean, limitMs = 20_000, what = "condition", everyMs = 5): Promise<void> {
  const end = Date.now() + limitMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(everyMs);
  }
}

// Resolves with the exit code, or rejects if the process is still running after `limitMs`.
export function exitWithin(p: { exited: Promise<number> }, limitMs = 10_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`process still running after ${limitMs} ms`)), limitMs);
    p.exited.then((code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

// Calls `visit` for every entry below `dir`, depth first in name order, with its path, its
// path relative to `dir` and its lstat; a directory is entered unless `visit` returns false.
// An unreadable or vanished directory is skipped. (Snapshots of stores are built on this.)
export function walkTree(dir: string, visit: (path: string, rel: string, st: Stats) => boolean | void): void {
  const walk = (d: string, rel: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(path);
      if (visit(path, r, st) !== false && st.isDirectory()) walk(path, r);
    }
  };
  walk(dir, "");
}

// ---- what /proc shows of a process ----------------------------------------------------------

export const openFds = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;

// The inotify instances process `pid` holds (0 when it is gone).
export function inotifyFds(pid: number): number {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return 0;
  }
  return fds.filter((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify";
    } catch {
      return false;
    }
  }).length;
}

// The inotify fds of process `pid`, each with the inode numbers it watches (from
// /proc/PID/fdinfo). Bun reads an instance through a duplicate of its fd, so one instance
// shows as two fds with the same watches.
export function inotifyWatches(pid: number): { fd: number; inodes: number[] }[] {
  const found: { fd: number; inodes: number[] }[] = [];
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fdinfo`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    let info: string;
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== "anon_inode:inotify") continue;
      info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
    } catch {
      continue; // closed meanwhile (the listing's own fd among them)
    }
    found.push({ fd: Number(fd), inodes: [...info.matchAll(/^inotify wd:\S+ ino:([0-9a-f]+) /gm)].map((m) => parseInt(m[1], 16)) });
  }
  return found;
}

// True once process `pid` holds an inotify instance: the waiter has registered its watch, so
// a publish from now on exercises the wake path rather than the initial check.
export const hasWatch = (pid: number): boolean => inotifyFds(pid) > 0;

// True while the main thread of `pid` sleeps in epoll, that is, idle in its event loop: it has
// finished whatever synchronous work it was doing. Read from /proc: wchan (do_epoll_wait, or
// ep_poll on kernels that do not inline it), or, where the kernel hides wchan, the syscall
// number (x86_64: epoll_wait 232, epoll_pwait 281; arm64: epoll_pwait 22; both: epoll_pwait2 441).
const EPOLL_SYSCALLS: Record<string, number[]> = { x64: [232, 281, 441], arm64: [22, 441] };
export function idleInEventLoop(pid: number): boolean {
  try {
    const wchan = readFileSync(`/proc/${pid}/task/${pid}/wchan`, "utf8");
    if (/epoll|ep_poll/.test(wchan)) return true;
    if (wchan !== "0") return false;
    const nr = Number(readFileSync(`/proc/${pid}/task/${pid}/syscall`, "utf8").split(" ")[0]);
    return (EPOLL_SYSCALLS[process.arch] ?? []).includes(nr);
  } catch {
    return false; // gone, or not ours to read
  }
}

// Every process under `pid`, nearest first. Shells differ in whether they exec the last
// command of `sh -c` (bash does, dash does not), so tests look for a2a anywhere below.
export function descendants(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length) {
    let kids: number[] = [];
    try {
      const p = queue.shift()!;
      kids = readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      // gone already
    }
    found.push(...kids);
    queue.push(...kids);
  }
  return found;
}

// The first process under `pid` running the a2a binary (0 when there is none yet); with
// `arg`, one whose command line holds that argument.
export function a2aBelow(pid: number, arg?: string): number {
  const bin = realpathSync(BIN);
  for (const k of descendants(pid)) {
    try {
      if (readlinkSync(`/proc/${k}/exe`) !== bin) continue;
      if (arg === undefined || readFileSync(`/proc/${k}/cmdline`, "utf8").split("\0").includes(arg)) return k;
    } catch {
      // gone, or not ours to read
    }
  }
  return 0;
}

// True once `pid` or a process under it holds a directory watch.
export const treeHasWatch = (pid: number): boolean => hasWatch(pid) || descendants(pid).some(hasWatch);
