// What `a2a doctor` says of the store itself: where it is and whether it exists yet, its owner,
// mode and marker, and how a waiter wakes there and why. This is the file engine's description
// (a directory, a filesystem, inotify or polling); the front end only words it. Reading only:
// a store that does not exist yet stays so.

import { notOnDatabase } from "../core/errors";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import type { Marker, Store } from "../core/config";
import { readJsonLine } from "../fs/io";
import { checkStore } from "../fs/guard";
import { userName } from "../fs/owner";
import { markerFile, slotFile } from "../fs/paths";
import type { Filesystem } from "../core/platform";
import { wakeMode } from "../fs/watch";

export interface StoreDescription {
  exists: boolean;
  owner?: string; // the root's owner, when it exists
  mode?: string; // its permission bits, octal ("700", "3770")
  marker: "ok" | "absent" | "damaged";
  markerMode?: Marker["mode"];
  createdBy?: string;
  markerFile: string;
  // How waiters wake: judged where the store is, or would be (its nearest existing parent).
  wake: { mode: "watch" | "poll" | "both"; at: string; filesystem: Filesystem };
}

// How far the store's clock is ahead of this host's, in seconds: the filesystem stamps a slot's
// record when it is written; `writtenAt` is this host's time of that write (published_at).
export function clockSkew(store: Store, name: string, writtenAt: number): number {
  if (store.url !== undefined) throw notOnDatabase("the clock check");
  return statSync(slotFile(store, name)).mtimeMs / 1000 - writtenAt;
}

function nearestExisting(path: string): string {
  for (let p = path; ; p = dirname(p)) {
    try {
      statSync(p);
      return p;
    } catch {
      if (dirname(p) === p) return p;
    }
  }
}

// Throws the store's own refusal (A2AError) when the root is no store a2a may use.
export function describeStore(store: Store): StoreDescription {
  if (store.url !== undefined) throw notOnDatabase("a2a doctor");
  checkStore(store); // its marker, not A2A_SHARED, says whether it is shared
  let st;
  try {
    st = statSync(store.root);
  } catch {
    // not created yet
  }
  const at = nearestExisting(store.root);
  const wake = { mode: wakeMode(store, at), at, filesystem: store.platform.filesystem(at) };
  const file = markerFile(store);
  if (!st) return { exists: false, marker: "absent", markerFile: file, wake };
  const m = readJsonLine(store, file, (v) => (v.a2a === 1 && v.format === 1 ? (v as Marker) : undefined));
  return {
    exists: true,
    owner: userName(store, st.uid),
    mode: (st.mode & 0o7777).toString(8),
    marker: m.kind === "ok" ? "ok" : m.kind === "absent" ? "absent" : "damaged",
    ...(m.kind === "ok" ? { markerMode: m.value.mode, createdBy: m.value.created_by } : {}),
    markerFile: file,
    wake,
  };
}
