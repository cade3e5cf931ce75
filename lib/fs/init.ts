// `a2a init [DIR] [--shared GROUP]`: make a store on purpose, rather than by its first write.
// A private store is the user's own (0700); a shared one belongs to GROUP (root 3770, setgid
// and sticky, its top-level directories made now so no member owns one, files 0640, topics and
// recipients' own inboxes sticky), so several OS users can work in it
// and the owner of each message file is real evidence of its sender (docs/FILE-ENGINE.md §14).

import { chmodSync, chownSync, mkdirSync, readdirSync } from "node:fs";
import { dirname } from "node:path";
import { writePendingMarker } from "./atomic";
import type { Marker, Store } from "../core/config";
import { A2AError, arg, ioError, notOnDatabase, text } from "../core/errors";
import { lstatIf } from "./io";
import { ensureDir, makeDir, readMarker } from "./guard";
import { PRIVATE_DIR_MODE, SHARED_DIR_MODE, SHARED_ROOT_MODE } from "./modes";
import { groupId } from "./owner";

export function initStore(store: Store, groupName?: string): { created: boolean; marker: Marker } {
  if (store.url !== undefined) throw notOnDatabase("a2a init");
  let group: { name: string; gid: number } | undefined;
  if (groupName !== undefined) {
    const gid = groupId(groupName);
    if (gid === undefined) throw new A2AError("EUSAGE", `there is no group ${JSON.stringify(groupName)}: create it (groupadd ${groupName}) and add the members (usermod -aG ${groupName} USER)`);
    group = { name: groupName, gid };
  }
  const r = prepareStore(store, group);
  if (r.created) writePendingMarker(store);
  return r;
}

// For `a2a init [--shared GROUP]` (initStore above): makes the store at its root (missing or empty) with its
// marker; shared: the root group-owned by GROUP, mode 2770 (setgid: everything created in it
// stays in the group). An existing a2a store is left as it is (its marker says what it is).
export function prepareStore(store: Store, group?: { name: string; gid: number }): { created: boolean; marker: Marker } {
  if (lstatIf(store.root)) {
    const marker = readMarker(store);
    if (marker.kind === "ok") return { created: false, marker: marker.value };
    if (readdirSync(store.root).some((f) => !f.startsWith("."))) {
      throw new A2AError("EUSAGE", text`${store.root} is not empty and has no a2a marker: make a store in an empty or new directory (${arg("dir")})`, {
        data: { root: store.root },
      });
    }
  } else {
    try {
      mkdirSync(dirname(store.root), { recursive: true });
    } catch (err) {
      throw ioError(err, `creating the store ${store.root}`);
    }
    makeDir(store, store.root, group ? SHARED_DIR_MODE : PRIVATE_DIR_MODE);
  }
  if (group) {
    try {
      chownSync(store.root, -1, group.gid);
      chmodSync(store.root, SHARED_ROOT_MODE);
    } catch (err) {
      throw ioError(err, `giving ${store.root} to group ${group.name} (you must be a member of it)`);
    }
  }
  store.shared = !!group;
  store.rootGuarded = false;
  ensureDir(store, store.root); // shared: the root's mode and the top-level directories (fixSharedRoot)
  const marker = store.pendingMarker!;
  if (group) marker.group = group.name;
  return { created: true, marker };
}
