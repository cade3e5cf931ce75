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
// - in a shared store, the root, the top-level directories of STICKY_NAMES, and what a caller
//   asks to be sticky (a topic, an agent's own inbox) are sticky: only an entry's owner (or the
//   directory's) may rename or remove it. A directory that should be sticky and is not (a store
//   made by an earlier release) gets the bit from the first a2a process of its owner; what a2a
//   cannot fix, `a2a doctor` reports (lib/maintenance/audit.ts).
// - a file that speaks for someone (an agent's policy, a session's state) is trusted only when
//   its owner is theirs (speaksFor): group members can create files wherever a name is free.
// - the root's checks (its marker, its owner) run once per Store (store.rootGuarded); every
//   directory below it is looked at again (lstat) each time it is about to be used, because a
//   process may live for hours (`a2a mcp`), and a directory that was real at its first write
//   can be a link by its hundredth. A command pays one lstat per path component per write.

import { chmodSync, lstatSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync, type Stats } from "node:fs";
import { dirname, relative, sep } from "node:path";
import type { Marker, Store } from "../core/config";
import { A2AError, arg, ioError, op, text } from "../core/errors";
import { lstatIf, readJsonLine, refuseDir, syncDir } from "./io";
import { groupName, userName } from "./owner";
import { blobsDir, STORE_NAMES, markerFile } from "./paths";
import { nowSec } from "../core/time";
import { closeToGroup, GROUP_WRITE, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, SHARED_DIR_MODE, SHARED_FILE_MODE, SHARED_ROOT_MODE, stick, stickyExpected, STICKY } from "./modes";

const uid = () => process.getuid?.() ?? -1;
export const myUid = uid;


// A directory of the store must be a real directory, and ours (or our group's, when shared).
function checkOwned(store: Store, path: string, st: Stats): void {
  if (st.isSymbolicLink()) refuseDir(path, "a symbolic link");
  if (!st.isDirectory()) refuseDir(path, "not a directory");
  if (store.shared ? st.gid !== store.gid : st.uid !== uid() && uid() !== 0) {
    refuseDir(path, store.shared ? `not group-owned by the store's group (gid ${store.gid})` : `owned by uid ${st.uid}, not by you`);
  }
}

// The uid owning the store's entry `path` (not followed), or undefined when there is none.
export function ownerOf(path: string): number | undefined {
  return lstatIf(path)?.uid;
}

// Whether a file owned by `fileUid` speaks for the OS user `ownerUid` (the owner of an agent's
// inbox, or this process): in a shared store only their own files (or root's) do, since any
// member can create a file wherever its name is free; in a private store everything is its
// owner's. The root is guarded first, so a reader knows from the marker whether it is shared.
export function speaksFor(store: Store, fileUid: number, ownerUid: number | undefined): boolean {
  checkStore(store);
  return !store.shared || fileUid === ownerUid || fileUid === 0;
}

// A new directory of the store; below the root, its name is synced into its parent (the first
// message to a new inbox must survive a power cut as any other does). The root's own parent is
// outside the store, and a2a does nothing there.
export function makeDir(store: Store, path: string, mode: number): void {
  try {
    mkdirSync(path, { mode });
    chmodSync(path, mode); // the umask must not decide who may read the store
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw ioError(err, `creating ${path}`);
    return;
  }
  if (path !== store.root) syncDir(store, dirname(path));
}

// A shared store (marker mode "shared"): every member works with the group's modes, whatever
// A2A_SHARED says; the root's group is the store's group, and this user must be in it.
function becomeShared(store: Store, st: Stats): void {
  store.shared = true;
  store.dirMode = SHARED_DIR_MODE;
  store.fileMode = SHARED_FILE_MODE;
  store.gid = st.gid;
  if (!inGroupOf(st)) throw notInGroup(store, st);
  stick(store.root, st);
}

const inGroupOf = (st: Stats) => uid() === 0 || process.getgid?.() === st.gid || (process.getgroups?.() ?? []).includes(st.gid);

const notInGroup = (store: Store, st: Stats) => {
  const group = groupName(st.gid);
  return new A2AError("EIO", `the shared store ${store.root} belongs to group ${group}, and you are not in it: ask its owner to add you (usermod -aG ${group} ${userName(store, uid())}), then log in again`, {
    data: { root: store.root, gid: st.gid, group },
  });
};

export const readMarker = (store: Store) =>
  readJsonLine(store, markerFile(store), (m) =>
    m.a2a === 1 && m.format === 1 && (m.mode === "private" || m.mode === "shared") ? (m as Marker) : undefined,
  );

// The root: created (with its marker) when missing; checked and, for a store of an earlier
// release, given its marker; refused otherwise. The marker is read first: it says whether the
// store is private (it must be ours) or shared (we must be in its group).
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
    makeDir(store, root, store.dirMode);
    st = statSync(root);
  }
  if (!st.isDirectory()) refuseDir(root, "not a directory");
  let marker;
  try {
    marker = readMarker(store);
  } catch (e) {
    // A shared store (group-owned, setgid) is closed to everyone outside its group: its
    // marker cannot even be read. Say so, rather than which mode to check.
    if (e instanceof A2AError && e.data.errno === "EACCES" && st.mode & 0o2000 && st.uid !== uid() && !inGroupOf(st)) throw notInGroup(store, st);
    throw e;
  }
  if (marker.kind === "invalid") {
    throw new A2AError("EIO", `${markerFile(store)} is not a valid a2a store marker: check it (a2a writes it once, with the store)`, { data: { root } });
  }
  const shared = marker.kind === "ok" ? marker.value.mode === "shared" : store.shared;
  if (shared) becomeShared(store, st);
  else {
    store.shared = false;
    store.dirMode = PRIVATE_DIR_MODE;
    store.fileMode = PRIVATE_FILE_MODE;
    if (st.uid !== uid() && uid() !== 0) {
      throw new A2AError("EIO", text`the store ${root} belongs to uid ${st.uid}, not to you: a private store must be yours; point ${arg("dir")} at your own, or ask its owner to make it shared (${op("init", arg("shared", "GROUP"))})`, {
        data: { root, owner: st.uid },
      });
    }
    if (st.mode & 0o002 && !(st.mode & 0o1000)) {
      throw new A2AError("EIO", `the store ${root} is writable by every user (mode ${(st.mode & 0o7777).toString(8)}): run chmod 700 ${root}, or make it a shared store`, {
        data: { root },
      });
    }
  }
  store.rootGuarded = true;
  // A shared store of an earlier release may lack blobs/sha256/: its owner's first command makes
  // it, since a member may not (lib/fs/blobs.ts: whoever owns it could remove any blob).
  if (marker.kind === "ok" && shared && (st.uid === uid() || uid() === 0) && !lstatIf(blobsDir(store))) ensureDir(store, blobsDir(store), "sticky");
  if (marker.kind === "ok") return;
  const foreign = foreignEntry(root);
  if (foreign) {
    throw new A2AError("EUSAGE", text`${root} is not an a2a store (it holds ${foreign}, which a2a never creates): use an empty or new directory with ${arg("dir")} or A2A_DIR`, {
      data: { root, foreign },
    });
  }
  if (store.shared) fixSharedRoot(store, root);
  // Written by lib/fs/atomic.ts with the next write (it is the only writer): a command that
  // only reads or deletes in a recognised store of an earlier release writes nothing.
  store.pendingMarker = { a2a: 1, format: 1, mode: store.shared ? "shared" : "private", created_by: userName(store, uid()), created_at: nowSec() };
}

// A store made shared on first use (A2A_SHARED=1): its root gets the group modes now.
function fixSharedRoot(store: Store, root: string): void {
  try {
    chmodSync(root, SHARED_ROOT_MODE);
    store.gid = statSync(root).gid;
  } catch (err) {
    throw ioError(err, `making ${root} a shared store`);
  }
  makeTopDirs(store);
}

// A shared store's top-level directories, made by whoever makes the store (its owner), so that
// no member owns one: the owner of a sticky directory may rename anything in it (or, for
// blobs/sha256/, close it to the others' puts).
function makeTopDirs(store: Store): void {
  for (const name of STORE_NAMES) if (name !== "store.json") ensureDir(store, `${store.root}${sep}${name}`);
  ensureDir(store, blobsDir(store), "sticky");
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
    const st = lstatIf(`${root}${sep}${name}`);
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
// `access`, in a shared store, for the last component: "group" (the store's mode: members write
// there), "sticky" (members add files but cannot rename or delete each other's: topics, a
// recipient's inbox and its new/, tmp/), or "owner" (only its owner writes; members may read:
// the directories an agent moves its own mail between). A directory of this user's that lacks
// the bit or still lets the group write is given its access now; another's is left for
// `a2a doctor` to report (lib/maintenance/audit.ts).
export type DirAccess = "group" | "sticky" | "owner";

export function ensureDir(store: Store, dir: string, access: DirAccess = "group"): void {
  const rel = relative(store.root, dir);
  if (rel.startsWith("..") || rel.startsWith(sep)) {
    throw new A2AError("EIO", `internal error: ${dir} is outside the store ${store.root}; please report this`);
  }
  if (!store.rootGuarded) guardRoot(store);
  let path = store.root;
  for (const part of rel ? rel.split(sep) : []) {
    path = `${path}${sep}${part}`;
    const stuck = stickyExpected(store, path, access === "sticky" && path === dir);
    const closed = store.shared && access === "owner" && path === dir;
    let st = lstatIf(path);
    if (!st) {
      makeDir(store, path, stuck ? store.dirMode | STICKY : closed ? store.dirMode & ~GROUP_WRITE : store.dirMode);
      st = lstatSync(path);
    }
    checkOwned(store, path, st);
    if (stuck) stick(path, st);
    if (closed) closeToGroup(path, st);
  }
}

// For commands that may delete without writing first (gc, clear --all): an existing root is
// checked now, so a directory that is no a2a store is refused before anything is removed.
// A missing root is left missing.
export function checkStore(store: Store): void {
  if (store.url !== undefined) return; // a database: no directory to check
  if (!store.rootGuarded && lstatIf(store.root)) ensureDir(store, store.root);
}

// Removes the regular file at `path` (in a guarded directory); false when it was not there,
// or is not a regular file (never ours to remove).
export function removeFile(store: Store, path: string): boolean {
  ensureDir(store, dirname(path));
  const st = lstatIf(path);
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
