// The Store: a root directory, every setting a2a has, and the runtime state one process keeps
// for that root. Every `A2A_*` variable is read here and nowhere else, once, when the Store is
// opened; lib/ functions take the Store and never look at the environment.
//
// Invariants:
// - no module-level state: two Stores in one process (tests, the MCP server) share nothing;
// - runtime state (the directory watches, the last message id, the uid -> user cache) lives
//   in typed fields of the Store, never behind casts;
// - a bad setting or a store path that cannot be created fails openStore with one EUSAGE or
//   EIO error, so every command (and `a2a mcp`) refuses the same way before touching anything
//   (openStore itself creates nothing: the first write creates the tree);
// - the root and its subdirectories are created with mode 0700 (or 0770 + setgid when
//   A2A_SHARED=1, for a group-shared team directory); files are 0600 (0640 shared).

import { isAbsolute, join, resolve } from "node:path";
import { A2AError, arg, text } from "./errors";
import { MAX_MAX_BYTES } from "./record";
import { checkRoot, expandHome, homedir, redact, URL_SCHEME } from "./location";
import type { Inotify } from "../fs/inotify";
import type { Engine } from "../engine/engine";
import { platformFor, type Platform } from "./platform";
import { checkDuration, parseDuration } from "./time";
import type { DirWatch } from "../fs/watch";

export { expandHome, redact }; // for lib/bus.ts, whose only static imports are this module, the errors and the opening

export type WatchMode = "auto" | "watch" | "poll";
export type Env = Record<string, string | undefined>;

export interface Settings {
  maxBytes: number; // A2A_MAX_BYTES: largest result / chunk / message body accepted, in bytes
  pollMs: number; // A2A_POLL_MS: poll interval on network filesystems or when forced
  watchMode: WatchMode; // A2A_WATCH
  shared: boolean; // A2A_SHARED=1: a group-shared store
  maxUnread: number; // A2A_MAX_UNREAD: unread messages one inbox may hold
  claimLeaseMs: number; // A2A_CLAIM_LEASE_MS: a claim older than this, from another host, is taken back
  heartbeatMs: number; // A2A_HEARTBEAT_MS: presence heartbeat of `a2a mcp`
  agent: string | undefined; // A2A_AGENT: who this process is, unless --as says otherwise
  repoName: string | undefined; // A2A_REPO: the repository reservations belong to (lib/reservations/repo.ts)
  maxWaitSec: number; // A2A_MCP_MAX_WAIT: seconds one MCP call may block
  progressMs: number; // A2A_MCP_PROGRESS_MS: progress notification interval during an MCP wait
  durability: "fsync" | "none"; // A2A_DURABILITY: fsync every write (default), or not (tmpfs, scratch)
  log: boolean; // A2A_LOG: one log line per MCP call on stderr
  debug: boolean; // A2A_DEBUG: stack traces with errors
  platform: Platform; // the OS's answers (lib/core/platform.ts); A2A_PLATFORM=portable: as off Linux
  topicKeepSec: number | undefined; // A2A_TOPIC_KEEP: gc removes topic messages older than this; undefined: forever
}

// ROOT/store.json: what makes a directory an a2a store (lib/fs/guard.ts).
export interface Marker {
  a2a: 1;
  format: 1;
  mode: "private" | "shared";
  created_by: string;
  created_at: number;
  group?: string; // a shared store's group, as named at `a2a init --shared GROUP`
}

export interface Store extends Settings {
  // Where the store is, as it may be shown: a directory, or a database URL without its password
  // (lib/core/location.ts redact).
  root: string;
  // A database store's URL as given, for connecting only: it may hold a password, so it is
  // never printed, logged or written (root is what is shown). Undefined for a directory.
  url: string | undefined;
  pgPassFile: string | undefined; // PGPASSFILE, else ~/.pgpass: where a database password may be kept
  // What the store is kept in (lib/engine/engine.ts), chosen once when it is opened: the file
  // engine for a directory (lib/engine/open.ts), the PostgreSQL engine once lib/bus.ts has
  // loaded it for a database URL. Rooms ask it and never name an engine.
  engine: Engine;
  rootFrom: "dir" | "A2A_DIR" | "default"; // where the root came from (the dir option, the variable, neither), for messages and doctor
  // The store's modes: from A2A_SHARED at first, then from its marker once lib/fs/guard.ts
  // has read it (a shared store is shared for every member, whatever their environment).
  dirMode: number;
  fileMode: number;
  host: string;
  // Runtime state of this process for this root.
  watches: Map<string, DirWatch>; // one directory watch per directory (lib/fs/watch.ts)
  ticker: { timer: ReturnType<typeof setInterval>; ticks: Set<() => void> } | undefined; // the one timer of the polled watches (lib/fs/watch.ts)
  inotify: Inotify | null | undefined; // their inotify instance on Linux (null: none to be had), once asked
  lastIdUs: number; // the last message id's microseconds: ids grow strictly (lib/mail/message.ts)
  users: Map<number, string> | undefined; // uid -> user name, read from /etc/passwd once
  rootGuarded: boolean; // the root was checked (or made) by lib/fs/guard.ts in this process
  readChecked: Set<string> | undefined; // directories lib/fs/io.ts checked for readers in this synchronous step
  gid: number; // a shared store's group (its root's gid), once guarded
  pendingMarker: Marker | undefined; // the marker lib/fs/atomic.ts writes with the next write
  listingMayLag: boolean | undefined; // the root is on a network filesystem (lib/fs/chain.ts), once asked
  spare: { path: string; fd: number } | undefined; // a temp file made ahead of need (lib/fs/atomic.ts prepareSpare)
}

export interface StoreOptions {
  dir?: string;
  env?: Env;
}

export const DEFAULT_MAX_BYTES = 1024 * 1024;
// The most A2A_MAX_BYTES may be: lib/fs/io.ts, whose readers accept it whatever their own setting.
export { MAX_MAX_BYTES };
export const DEFAULT_POLL_MS = 100;
export const DEFAULT_MAX_UNREAD = 10_000;
export const DEFAULT_CLAIM_LEASE_MS = 30_000;
export const DEFAULT_HEARTBEAT_MS = 10_000;
export const DEFAULT_MAX_WAIT_SEC = 100; // Claude Code backgrounds a call after 120 s
export const DEFAULT_PROGRESS_MS = 10_000;

// A setting that must be a whole number of at least `min`; unset or empty means `dflt`.
function wholeNumber(env: Env, key: string, dflt: number, min = 1, unit = ""): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) {
    const what = min === 1 ? "a positive integer" : `a whole number of at least ${min}`;
    throw new A2AError("EUSAGE", `${key}=${JSON.stringify(raw)} is not ${what}${unit ? " of " + unit : ""}: set it to e.g. ${dflt} or unset it`);
  }
  return n;
}

// A setting that must be a positive number (fractions allowed); unset or empty means `dflt`.
function positiveNumber(env: Env, key: string, dflt: number, unit: string): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new A2AError("EUSAGE", `${key}=${JSON.stringify(raw)} is not a positive number of ${unit}: set it to e.g. ${dflt} or unset it`);
  }
  return n;
}

function maxBytes(env: Env): number {
  const n = wholeNumber(env, "A2A_MAX_BYTES", DEFAULT_MAX_BYTES);
  if (n > MAX_MAX_BYTES) {
    throw new A2AError("EUSAGE", `A2A_MAX_BYTES=${n} is over the ${MAX_MAX_BYTES}-byte maximum every a2a reader accepts: set it to at most ${MAX_MAX_BYTES}, and hand bigger things over as files`);
  }
  return n;
}

export const DEFAULT_TOPIC_KEEP_SEC = 30 * 86400;

function topicKeep(env: Env): number | undefined {
  const raw = env.A2A_TOPIC_KEEP || undefined;
  if (raw === undefined) return DEFAULT_TOPIC_KEEP_SEC;
  if (raw === "forever") return undefined;
  return checkDuration(parseDuration(raw, "A2A_TOPIC_KEEP"), "topic retention", "A2A_TOPIC_KEEP");
}

function durability(env: Env): Settings["durability"] {
  const raw = env.A2A_DURABILITY || "fsync";
  if (raw !== "fsync" && raw !== "none") {
    throw new A2AError("EUSAGE", `A2A_DURABILITY=${JSON.stringify(env.A2A_DURABILITY)} is not a durability: use fsync (every write survives a power cut) or none (faster; for a store in tmpfs or scratch work)`);
  }
  return raw;
}

function platform(env: Env): Platform {
  const raw = env.A2A_PLATFORM || undefined;
  if (raw !== undefined && raw !== "portable") {
    throw new A2AError("EUSAGE", `A2A_PLATFORM=${JSON.stringify(raw)} is not a platform setting: use portable (behave as off Linux: fs.watch, no /proc, filesystem type unknown) or unset it`);
  }
  return platformFor(process.platform, raw);
}

export function readSettings(env: Env): Settings {
  const watchMode = (env.A2A_WATCH || "auto") as WatchMode;
  if (!["auto", "watch", "poll"].includes(watchMode)) {
    throw new A2AError("EUSAGE", `A2A_WATCH=${JSON.stringify(env.A2A_WATCH)} is not a watch mode: use auto, watch or poll`);
  }
  return {
    maxBytes: maxBytes(env),
    pollMs: wholeNumber(env, "A2A_POLL_MS", DEFAULT_POLL_MS),
    watchMode,
    shared: env.A2A_SHARED === "1",
    maxUnread: wholeNumber(env, "A2A_MAX_UNREAD", DEFAULT_MAX_UNREAD),
    claimLeaseMs: wholeNumber(env, "A2A_CLAIM_LEASE_MS", DEFAULT_CLAIM_LEASE_MS),
    heartbeatMs: wholeNumber(env, "A2A_HEARTBEAT_MS", DEFAULT_HEARTBEAT_MS, 100, "milliseconds"),
    agent: env.A2A_AGENT || undefined,
    repoName: env.A2A_REPO?.trim() || undefined,
    maxWaitSec: positiveNumber(env, "A2A_MCP_MAX_WAIT", DEFAULT_MAX_WAIT_SEC, "seconds"),
    progressMs: positiveNumber(env, "A2A_MCP_PROGRESS_MS", DEFAULT_PROGRESS_MS, "milliseconds"),
    durability: durability(env),
    log: !!env.A2A_LOG,
    debug: !!env.A2A_DEBUG,
    platform: platform(env),
    topicKeepSec: topicKeep(env),
  };
}

// Anything that starts like a URL: a scheme, then "://".
const ANY_URL = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;
// postgres: or postgresql: with other than two slashes after it (`postgres:/alice@db/team`):
// a URL mistyped, not a directory name.
const PG_MISTYPED = /^(postgres(?:ql)?):(?!\/\/)/i;
// A path's `user:secret@` part hidden: a mistyped URL given as a path may carry a password.
const hideSecret = (s: string) => s.replace(/:[^:@/]*@/g, ":***@");

// The store named by the dir option, else $A2A_DIR, when that is a database URL rather than a
// path. A URL of any other scheme is refused: taken as a path, a misspelt `postgress://` or a
// `mysql://` would quietly become a directory under the cwd. Only its scheme is shown: the
// rest may hold a password.
export function storeUrl(dir: string | undefined, env: Env): string | undefined {
  const named = dir ?? env.A2A_DIR;
  if (named === undefined || URL_SCHEME.test(named)) return named;
  const mistyped = PG_MISTYPED.exec(named)?.[1];
  if (mistyped !== undefined) {
    const where = dir !== undefined ? text`${arg("dir")} names` : ["A2A_DIR names"];
    throw new A2AError("EUSAGE", [...where, ...text` a ${mistyped}: URL without its two slashes: write ${mistyped}://USER@HOST:PORT/DB`], { data: { scheme: mistyped, from: dir !== undefined ? "dir" : "A2A_DIR" } });
  }
  const scheme = ANY_URL.exec(named)?.[1];
  if (scheme !== undefined) {
    const where = dir !== undefined ? text`${arg("dir")} names` : ["A2A_DIR names"];
    throw new A2AError("EUSAGE", [...where, ...text` a ${scheme}:// URL, which a2a does not read: a store is a postgres:// (or postgresql://) URL or a directory path; correct the scheme (a directory of that name is ./${scheme}:/...)`], {
      data: { scheme, from: dir !== undefined ? "dir" : "A2A_DIR" },
    });
  }
  return undefined;
}

// Where the store is: --dir, else $A2A_DIR, else ~/.a2a; a leading "~" is expanded.
export function storeRoot(dir: string | undefined, env: Env): { root: string; from: Store["rootFrom"] } {
  // An explicitly empty path is a mistake, not a request for the default: falling back would
  // write into ~/.a2a (or $A2A_DIR) behind the user's back.
  if (dir === "") throw new A2AError("EUSAGE", text`the store directory given is empty: pass a path with ${arg("dir")}, or leave it out to use $A2A_DIR or ~/.a2a`);
  if (dir !== undefined) return { root: resolve(expandHome(dir)), from: "dir" };
  if (env.A2A_DIR === "") throw new A2AError("EUSAGE", "A2A_DIR is set but empty: set it to the store's path, or unset it to use ~/.a2a");
  // A relative A2A_DIR names a different store in every directory a command runs in: agents
  // started in two directories would never meet. Refused, where a relative dir option (one
  // command's own) is resolved against the cwd as any path argument is.
  if (env.A2A_DIR !== undefined && !isAbsolute(expandHome(env.A2A_DIR))) {
    const shown = hideSecret(env.A2A_DIR);
    throw new A2AError("EUSAGE", `A2A_DIR=${JSON.stringify(shown)} is a relative path, which names a different store in every directory: set it to an absolute path (${resolve(shown)} from here) or one starting with ~/`, {
      data: { A2A_DIR: shown },
    });
  }
  if (env.A2A_DIR !== undefined) return { root: resolve(expandHome(env.A2A_DIR)), from: "A2A_DIR" };
  return { root: resolve(homedir(), ".a2a"), from: "default" };
}

// Reads every setting and checks that the root is, or can become, a directory (a database URL
// is checked when the engine connects); or throws. The Store it gives has no engine yet:
// lib/engine/open.ts openStore gives it one.
export function readStore(opts: StoreOptions = {}): Store {
  const env = opts.env ?? process.env;
  const url = storeUrl(opts.dir, env);
  const { root, from } = url === undefined ? storeRoot(opts.dir, env) : { root: redact(url), from: opts.dir !== undefined ? ("dir" as const) : ("A2A_DIR" as const) };
  const settings = readSettings(env);
  let host: string | undefined;
  const store: Store = {
    ...settings,
    root,
    url,
    pgPassFile: url === undefined ? undefined : env.PGPASSFILE || join(homedir(), ".pgpass"),
    engine: unopened(),
    rootFrom: from,
    dirMode: settings.shared ? 0o2770 : 0o700,
    fileMode: settings.shared ? 0o640 : 0o600,
    get host() {
      return (host ??= settings.platform.hostname()); // only a command that writes a record asks
    },
    watches: new Map(),
    ticker: undefined,
    inotify: undefined,
    lastIdUs: 0,
    users: undefined,
    rootGuarded: false,
    readChecked: undefined,
    gid: -1,
    pendingMarker: undefined,
    listingMayLag: undefined,
    spare: undefined,
  };
  if (url === undefined) checkRoot(store);
  return store;
}

// The engine of a Store not opened yet: any use is a2a's own mistake, said as such.
function unopened(): Engine {
  return new Proxy({} as Engine, {
    get(_, key) {
      throw new A2AError("EIO", `the store's engine was used (${String(key)}) before it was opened: this is a bug in a2a, please report it`);
    },
  });
}
