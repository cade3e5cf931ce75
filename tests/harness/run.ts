// The one harness for driving a2a as a real process, shared by the tests (tests/e2e/) and the
// bench and torture programs (bench/): where the binary is, the environment a child gets,
// temporary stores, spawning and running the binary, and waiting on its output or on
// /proc. Nothing here sleeps to wait for a condition: waits are on output, exit, or files,
// each with a generous upper bound. (MCP clients: ./mcp.ts. Building: ../build.ts.)
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, type Stats } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { psqlPath } from "./pg";
import { noteDisposed } from "./outside";

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

// Settings that take away what tells a CLI it runs under CI (CI, CONTINUOUS_INTEGRATION, CI_*:
// the is-in-ci rule): Gemini CLI will not start its interactive prompt under them, and the
// tests that need an idle prompt run its TUI on a pty. CI itself runs with CI=true.
export function notCI(): Record<string, undefined> {
  const out: Record<string, undefined> = { CI: undefined, CONTINUOUS_INTEGRATION: undefined };
  for (const k of Object.keys(process.env)) if (k.startsWith("CI_")) out[k] = undefined;
  return out;
}

// The settings of a child that may start a coding agent's CLI (a2a doctor runs their
// `mcp list`, which writes to ~/.config, ~/.local and /tmp): a HOME of its own under `dir`,
// none of the developer's XDG_* directories, its own TMPDIR.
export function ownHome(dir: string): Record<string, string | undefined> {
  mkdirSync(join(dir, "tmp"), { recursive: true });
  return { HOME: dir, TMPDIR: join(dir, "tmp"), XDG_CONFIG_HOME: undefined, XDG_DATA_HOME: undefined, XDG_STATE_HOME: undefined, XDG_CACHE_HOME: undefined };
}

// The backups `a2a setup` kept for a HOME (under ~/.local/state/a2a/setup: cli/agents/backups.ts).
export function setupBackups(home: string): string[] {
  const root = join(home, ".local", "state", "a2a", "setup");
  return existsSync(root) ? (readdirSync(root, { recursive: true }) as string[]).filter((f) => /(^|\/)backup-[^/]*$/.test(f)).map((f) => join(root, f)) : [];
}

export function tempDir(prefix = "a2a-test-"): { path: string; [Symbol.dispose](): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    [Symbol.dispose]: () => {
      rmSync(path, { recursive: true, force: true });
      noteDisposed(path); // must stay gone (tests/harness/outside.ts)
    },
  };
}

// The engine the e2e suite runs against (docs/ENGINE.md, "The contract suite"), from
// A2A_TEST_STORE:
// - unset, "" or "file": the file engine, a fresh temporary directory per store;
// - postgres://USER@HOST:PORT/DB (or postgresql://, other parameters such as sslmode kept): a
//   server and database the tests may create schemas in. Each store is a fresh schema,
//   `?schema=t_<random hex>`, which a2a makes itself on first use; disposing of the store drops
//   it (drop schema ... cascade, through psql, synchronously so `using` works). A password
//   goes in PGPASSWORD, which the children and psql inherit, never in the URL: the URL is a
//   store's location, and locations end up in test output.
// A test that drives only the binary, whatever keeps the store, takes its store from
// testStore(); one that looks at the files on disk (modes, owners, inotify, fsync, network
// filesystems) or at what the database engine does not have yet (doctor, gc, init, ui) uses
// tempDir() and runs only where ENGINE is "file" (describe.if(ON_FILES) / test.if(ON_FILES)).
export type Engine = "file" | "postgres";
const TEST_STORE = process.env.A2A_TEST_STORE;
export const ENGINE: Engine = engineUnderTest(TEST_STORE);
export const ON_FILES = ENGINE === "file";

function engineUnderTest(raw: string | undefined): Engine {
  if (raw === undefined || raw === "" || raw === "file") return "file";
  const redacted = JSON.stringify(raw.replace(/:[^:@/]*@/, ":***@"));
  if (/^postgres(ql)?:\/\//i.test(raw)) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`A2A_TEST_STORE=${redacted} is not a URL: write postgres://USER@HOST:PORT/DATABASE`);
    }
    if (u.password) throw new Error(`A2A_TEST_STORE=${redacted} holds a password: take it out of the URL and put it in PGPASSWORD`);
    if (u.searchParams.has("schema")) throw new Error(`A2A_TEST_STORE=${redacted} names a schema: leave ?schema= out, the suite makes one per store`);
    return "postgres";
  }
  throw new Error(`A2A_TEST_STORE=${redacted} is not an engine this suite can run on: unset it, or set it to file or to postgres://USER@HOST:PORT/DATABASE`);
}

// A fresh, empty store of the engine under test; `path` is its location, for --dir / A2A_DIR.
export function testStore(): { path: string; [Symbol.dispose](): void } {
  if (ENGINE === "file") return tempDir("a2a-store-");
  const schema = `t_${randomBytes(8).toString("hex")}`;
  const u = new URL(TEST_STORE!);
  u.searchParams.set("schema", schema);
  return { path: u.toString(), [Symbol.dispose]: () => dropSchema(schema) };
}

// Drops a test store's schema and everything in it. The lock timeout bounds the wait for a
// process a test left running in a transaction.
const dropSchema = (schema: string): void => void testSql(`drop schema if exists ${schema} cascade`);

// Runs `sql` through psql on A2A_TEST_STORE's database, in `schema` when given (search_path):
// its unaligned, header-less output. Throws on failure with psql's words, which never hold the
// password (it comes from PGPASSWORD). Synchronous: a dispose or a poll cannot await.
function testSql(sql: string, schema?: string): string {
  const psql = psqlPath();
  if (!psql) throw new Error("A2A_TEST_STORE names a PostgreSQL server, but there is no psql to administer it (install postgresql-client)");
  const options = `-c lock_timeout=30s -c client_min_messages=warning${schema ? ` -c search_path=${schema}` : ""}`;
  const r = Bun.spawnSync([psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", TEST_STORE!, "-c", sql], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "30", PGOPTIONS: options },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`psql on A2A_TEST_STORE (${sql.slice(0, 60)}): ${r.stderr.toString().trim() || `exit ${r.exitCode}`}`);
  return r.stdout.toString();
}

// What a test may look at inside a store of the engine under test, where a file test would
// read files: whether it exists (its directory; its schema), and on PostgreSQL its rows.
export const isDatabaseStore = (store: string): boolean => /^postgres(ql)?:\/\//i.test(store);
const schemaOf = (store: string): string | undefined => (isDatabaseStore(store) ? (new URL(store).searchParams.get("schema") ?? undefined) : undefined);

export function storeExists(store: string): boolean {
  const schema = schemaOf(store);
  if (schema === undefined) return existsSync(store);
  return testSql(`select 1 from pg_namespace where nspname = '${schema}'`).trim() !== "";
}

// `sql` run in the schema of a database store (a testStore() path): its output, one line a row.
export function storeSql(store: string, sql: string): string {
  const schema = schemaOf(store);
  if (schema === undefined) throw new Error(`storeSql: ${store} is not a database store`);
  return testSql(sql, schema);
}

// Every row of every table of a database store's schema, by table, each table's rows in a fixed
// order: compare two to prove a failed command changed nothing (fixtures/core.ts snapshot()).
// Sequences are left out: a number drawn by a transaction that rolled back is not given back,
// and no reader sees it.
export function storeRows(store: string): Record<string, unknown[]> {
  const schema = schemaOf(store)!;
  const tables = storeSql(store, `select tablename from pg_tables where schemaname = '${schema}' order by 1`).split("\n").filter(Boolean);
  const out: Record<string, unknown[]> = {};
  for (const t of tables) out[t] = JSON.parse(storeSql(store, `select coalesce(jsonb_agg(to_jsonb(r) order by r::text), '[]') from ${t} r`));
  return out;
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

// ---- waiting on the store, whatever keeps it ------------------------------------------------

// True once process `pid` has asked the store to wake it, so a change from now on exercises
// the wake path rather than the first look: a directory watch on files (hasWatch); on
// PostgreSQL, a connection of its own (matched by its TCP port, from /proc) whose last
// statement, a LISTEN, has completed (pg_stat_activity: idle): a change committed from then
// on notifies it. Costs a psql per call there, so poll it with until(), not in a tight loop.
export function listens(pid: number): boolean {
  if (ON_FILES) return hasWatch(pid);
  const ports = tcpPorts(pid);
  if (ports.length === 0) return false;
  return testSql(`select 1 from pg_stat_activity where state = 'idle' and query ilike 'listen %' and client_port in (${ports.join(",")})`).trim() !== "";
}

// The same for `pid` or a process under it (a2a run by a shell, an MCP server under a client).
export const treeListens = (pid: number): boolean => listens(pid) || descendants(pid).some(listens);

// The local ports of the TCP sockets process `pid` holds (from its fds and /proc/PID/net/tcp*).
function tcpPorts(pid: number): number[] {
  const inodes = new Set<string>();
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m) inodes.add(m[1]);
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    return []; // gone
  }
  const ports: number[] = [];
  for (const table of ["tcp", "tcp6"]) {
    let rows: string[];
    try {
      rows = readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1);
    } catch {
      continue;
    }
    for (const row of rows) {
      const f = row.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9])) ports.push(parseInt(f[1].split(":")[1], 16));
    }
  }
  return ports;
}
