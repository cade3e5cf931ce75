// A Store is a root directory plus the settings read once from the environment. It is the
// only thing lib/ functions take to find their files: there is no module-level state, so two
// stores in one process (tests, the MCP server) never see each other.
//
// Invariants: the root and its subdirectories are created on first use with mode 0700 (or
// 0770 + setgid when A2A_SHARED=1, for a group-shared team directory); every file a2a
// creates is 0600 (0660 shared). Only lib/paths.ts knows directory names.

import { mkdirSync } from "node:fs";
import { homedir, hostname } from "node:os";
import { resolve } from "node:path";
import { A2AError, ioError } from "./errors";

export type WatchMode = "auto" | "watch" | "poll";

export interface Store {
  root: string;
  maxBytes: number; // largest result / chunk / message body accepted, in bytes
  pollMs: number; // poll interval on network filesystems or when forced
  watchMode: WatchMode;
  dirMode: number;
  fileMode: number;
  host: string;
}

export interface StoreOptions {
  dir?: string;
  env?: Record<string, string | undefined>;
}

export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_POLL_MS = 100;

// An environment setting that must be a positive whole number; unset or empty means `dflt`.
export function positiveInt(env: Record<string, string | undefined>, key: string, dflt: number): number {
  const raw = env[key];
  if (raw === undefined || raw === "") return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    throw new A2AError("EUSAGE", `${key}=${JSON.stringify(raw)} is not a positive integer: set it to a whole number or unset it`);
  }
  return n;
}

// Resolves the store's location and settings; creates nothing (see ensureDir in paths.ts).
export function openStore(opts: StoreOptions = {}): Store {
  const env = opts.env ?? process.env;
  // An explicitly empty directory is a mistake, not a request for the default: falling back
  // would write into ~/.a2a (or $A2A_DIR) behind the user's back.
  if (opts.dir === "") throw new A2AError("EUSAGE", "the store directory given is empty: pass a path with --dir, or leave --dir out to use $A2A_DIR or ~/.a2a");
  const root = resolve(opts.dir || env.A2A_DIR || resolve(homedir(), ".a2a"));
  const mode = (env.A2A_WATCH || "auto") as WatchMode;
  if (!["auto", "watch", "poll"].includes(mode)) {
    throw new A2AError("EUSAGE", `A2A_WATCH=${JSON.stringify(env.A2A_WATCH)} is not a watch mode: use auto, watch or poll`);
  }
  const shared = env.A2A_SHARED === "1";
  return {
    root,
    maxBytes: positiveInt(env, "A2A_MAX_BYTES", DEFAULT_MAX_BYTES),
    pollMs: positiveInt(env, "A2A_POLL_MS", DEFAULT_POLL_MS),
    watchMode: mode,
    dirMode: shared ? 0o2770 : 0o700,
    fileMode: shared ? 0o660 : 0o600,
    host: hostname(),
  };
}

// Creates `dir` (and parents) with the store's mode; a no-op when it exists.
export function ensureDir(store: Store, dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: store.dirMode });
  } catch (err) {
    throw ioError(err, `creating ${dir}`);
  }
}

// The UTF-8 size of `text`, or ETOOBIG when it is over the store's limit (nothing is written).
export function checkSize(store: Store, text: string, what: string): number {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > store.maxBytes) {
    throw new A2AError(
      "ETOOBIG",
      `${what} is ${bytes} bytes, over the ${store.maxBytes}-byte limit: send a path or a summary instead, or raise A2A_MAX_BYTES`,
    );
  }
  return bytes;
}
