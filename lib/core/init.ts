// `a2a init [DIR] [--shared GROUP]`: make a store on purpose, rather than by its first write.
// A private store is the user's own (0700); a shared one belongs to GROUP (root 3770, setgid
// and sticky, its top-level directories made now so no member owns one, files 0640, topics and
// recipients' own inboxes sticky), so several OS users can work in it
// and the owner of each message file is real evidence of its sender (docs/FILE-ENGINE.md §14).

import { writePendingMarker } from "./atomic";
import type { Marker, Store } from "./config";
import { A2AError, notOnDatabase } from "./errors";
import { prepareStore } from "./guard";
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
