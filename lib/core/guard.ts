// The store's boundary. Every directory a2a creates, writes into, renames in or deletes from
// passes ensureDir first, and every file it removes or moves goes through removeFile/moveFile,
// so no command can be turned against files outside the store.
//
// Invariants:
// - every component from the root down to a directory a2a touches is a real directory (lstat:
//   never a symbolic link, which would lead outside), owned by this user (in a shared store:
//   group-owned by the store's group); anything else is refused with one line naming the path;
// - the root is a2a's: it has the marker ROOT/store.json (created with the store), or it is a
//   store made by an earlier release (only a2a's names in it), which gets the marker now; a
//   non-empty directory that is neither is refused (exit 2) before anything is written;
// - directories are created with their mode set explicitly (chmod after mkdir), whatever the
//   umask;
// - removeFile removes only regular files; a link, FIFO or directory under a record's name is
//   left alone.
// The checks run once per directory per Store (store.guarded): a command pays a few lstat calls.

import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, type Stats } from "node:fs";
import { dirname, relative, sep } from "node:path";
import type { Marker, Store } from "./config";
import { A2AError, arg, ioError, text } from "./errors";
import { readJsonLine } from "./fs";
import { userName } from "./owner";
import { STORE_NAMES, markerFile } from "./paths";
import { nowSec } from "./time";

const uid = () => process.getuid?.() ?? -1;

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw ioError(err, `checking ${path}`);
  }
}

function refuse(path: string, what: string): never {
  throw new A2AError("EIO", `${path} is ${what}, not a directory a2a made: a2a never follows it out of the store; remove or fix it, then retry`, {
    data: { path },
  });
}

// A directory of the store must be a real directory, and ours (or our group's, when shared).
function checkOwned(store: Store, path: string, st: Stats): void {
  if (st.isSymbolicLink()) refuse(path, "a symbolic link");
  if (!st.isDirectory()) refuse(path, "not a directory");
  if (store.shared ? st.gid !== store.gid : st.uid !== uid() && uid() !== 0) {
    refuse(path, store.shared ? `not group-owned by the store's group (gid ${store.gid})` : `owned by uid ${st.uid}, not by you`);
  }
}

function makeDir(store: Store, path: string): void {
  try {
    mkdirSync(path, { mode: store.dirMode });
    chmodSync(path, store.dirMode); // the umask must not decide who may read the store
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw ioError(err, `creating ${path}`);
  }
}

// The root: created (with its marker) when missing or empty; checked and, for a store of an
// earlier release, given its marker; refused otherwise.
function guardRoot(store: Store): void {
  const root = store.root;
  let st: Stats | undefined;
  try {
    st = statSync(root); // the root itself may be a symlink the user made (~/.a2a -> /data/a2a)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw ioError(err, `opening the store ${root}`);
  }
  if (!st) {
    try {
      mkdirSync(dirname(root), { recursive: true }); // the path the user asked for
    } catch (err) {
      throw ioError(err, `creating the store ${root}`);
    }
    makeDir(store, root);
    st = statSync(root);
  }
  if (!st.isDirectory()) refuse(root, "not a directory");
  if (!store.shared && st.uid !== uid() && uid() !== 0) {
    throw new A2AError("EIO", text`the store ${root} belongs to uid ${st.uid}, not to you: a private store must be yours; point ${arg("dir")} at your own, or use a shared store (A2A_SHARED=1)`, {
      data: { root, owner: st.uid },
    });
  }
  if (!store.shared && st.mode & 0o002 && !(st.mode & 0o1000)) {
    throw new A2AError("EIO", `the store ${root} is writable by every user (mode ${(st.mode & 0o7777).toString(8)}): run chmod 700 ${root}, or make it a shared store`, {
      data: { root },
    });
  }
  if (store.shared) store.gid = st.gid;
  store.guarded.add(root);
  const marker = readJsonLine(store, markerFile(store), (m) => (m.a2a === 1 && m.format === 1 ? (m as Marker) : undefined));
  if (marker.kind === "ok") return;
  if (marker.kind === "invalid") {
    throw new A2AError("EIO", `${markerFile(store)} is not a valid a2a store marker: check it (a2a writes it once, with the store)`, { data: { root } });
  }
  const foreign = foreignEntry(root);
  if (foreign) {
    throw new A2AError("EUSAGE", text`${root} is not an a2a store (it holds ${foreign}, which a2a never creates): use an empty or new directory with ${arg("dir")} or A2A_DIR`, {
      data: { root, foreign },
    });
  }
  // Written by lib/core/atomic.ts with the next write (it is the only writer): a command that
  // only reads or deletes in a recognised store of an earlier release writes nothing.
  store.pendingMarker = { a2a: 1, format: 1, mode: store.shared ? "shared" : "private", created_by: userName(store, uid()), created_at: nowSec() };
}

// The first entry of `root` that an a2a store of an earlier release could not hold, or
// undefined: only a2a's own names at the top, only records in slots/, only temp files in tmp/.
function foreignEntry(root: string): string | undefined {
  const list = (dir: string) => {
    try {
      return readdirSync(dir).filter((f) => !f.startsWith("."));
    } catch {
      return [];
    }
  };
  for (const name of list(root)) {
    const st = lstatOrUndefined(`${root}${sep}${name}`);
    if (!STORE_NAMES.includes(name) || !(name === "store.json" ? st?.isFile() : st?.isDirectory())) return name;
  }
  const slots = list(`${root}${sep}slots`).find((f) => !f.endsWith(".json"));
  if (slots) return `slots/${slots}`;
  const tmp = list(`${root}${sep}tmp`).find((f) => !/^(\d+\.[0-9a-f]+\.tmp|swept\..*\.json)$/.test(f));
  if (tmp) return `tmp/${tmp}`;
  return undefined;
}

// Makes sure `dir` (the root or below it) exists as a directory of this store, creating what
// is missing; throws, changing nothing, when a component is a link, a file or someone else's.
export function ensureDir(store: Store, dir: string): void {
  if (store.guarded.has(dir)) return;
  const rel = relative(store.root, dir);
  if (rel.startsWith("..") || rel.startsWith(sep)) {
    throw new A2AError("EIO", `internal error: ${dir} is outside the store ${store.root}; please report this`);
  }
  if (!store.guarded.has(store.root)) guardRoot(store);
  let path = store.root;
  for (const part of rel ? rel.split(sep) : []) {
    path = `${path}${sep}${part}`;
    if (store.guarded.has(path)) continue;
    let st = lstatOrUndefined(path);
    if (!st) {
      makeDir(store, path);
      st = lstatSync(path);
    }
    checkOwned(store, path, st);
    store.guarded.add(path);
  }
}

// Drops `dir` from the directories this process knows to exist: it was removed (gc), so the
// next ensureDir checks and creates it again.
export function forgetDir(store: Store, dir: string): void {
  store.guarded.delete(dir);
}

// For commands that may delete without writing first (gc, clear --all): an existing root is
// checked now, so a directory that is no a2a store is refused before anything is removed.
// A missing root is left missing.
export function checkStore(store: Store): void {
  if (!store.guarded.has(store.root) && lstatOrUndefined(store.root)) ensureDir(store, store.root);
}

// Removes the regular file at `path` (in a guarded directory); false when it was not there,
// or is not a regular file (never ours to remove).
export function removeFile(store: Store, path: string): boolean {
  ensureDir(store, dirname(path));
  const st = lstatOrUndefined(path);
  if (!st || !st.isFile()) return false;
  try {
    unlinkSync(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw ioError(err, `removing ${path}`);
  }
}

// Renames `from` to `to`, both in guarded directories. False when `from` is gone (another
// process moved it first); ESTALE counts as gone (a network filesystem's handle of a file
// that was replaced meanwhile).
export function moveFile(store: Store, from: string, to: string, what: string): boolean {
  ensureDir(store, dirname(from));
  ensureDir(store, dirname(to));
  try {
    renameSync(from, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESTALE") return false;
    throw ioError(err, what);
  }
}
