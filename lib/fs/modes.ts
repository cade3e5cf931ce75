// The modes of the store's directories and files, and the two repairs a directory of this
// user's gets when it lacks its mode (a store made by an earlier release): the sticky bit, and
// closing it to the group's writes. Who must own what, and what a2a does about another's, is
// lib/fs/guard.ts (its checks) and lib/maintenance/audit.ts (doctor's report).

import { chmodSync, type Stats } from "node:fs";
import { basename, dirname } from "node:path";
import type { Store } from "../core/config";
import { ioError } from "../core/errors";
import { STICKY_NAMES } from "./paths";

const uid = () => process.getuid?.() ?? -1;

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
export const SHARED_DIR_MODE = 0o2770; // setgid: what is created inside stays in the group
export const SHARED_FILE_MODE = 0o640; // members read; only the writer can change a file in place
export const STICKY = 0o1000; // only a file's creator (or the directory's owner) may rename or delete it
export const GROUP_WRITE = 0o020;
export const SHARED_ROOT_MODE = SHARED_DIR_MODE | STICKY; // nobody renames another's top-level directory away

// Whether the store's directory `path` must be sticky: in a shared store, the root, the
// top-level directories of STICKY_NAMES, and `asked` (the caller's own: a topic, an inbox).
export function stickyExpected(store: Store, path: string, asked = false): boolean {
  if (!store.shared) return false;
  return asked || path === store.root || (dirname(path) === store.root && STICKY_NAMES.includes(basename(path)));
}

// Gives an existing directory of ours the sticky bit it should have (a store made by an
// earlier release): only its owner may, so another's is left for `a2a doctor` to report.
export function stick(path: string, st: Stats): void {
  if (st.mode & STICKY || st.uid !== uid()) return;
  try {
    chmodSync(path, (st.mode & 0o7777) | STICKY);
  } catch (err) {
    throw ioError(err, `making ${path} sticky`);
  }
}

// Takes the group's write permission from an existing directory of ours that should be the
// owner's alone (an inbox's claim/ made by an earlier release): only its owner may.
export function closeToGroup(path: string, st: Stats): void {
  if (!(st.mode & GROUP_WRITE) || st.uid !== uid()) return;
  try {
    chmodSync(path, (st.mode & 0o7777) & ~GROUP_WRITE);
  } catch (err) {
    throw ioError(err, `closing ${path} to the group`);
  }
}
