// The file engine's session storage (lib/sessions/storage.ts): sessions/NAME.json, replaced by an
// atomic rename, not synced. docs/FILE-ENGINE.md §9 is the layout.
//
// Invariants:
// - who wrote a record is the owner of its file (the OS vouches for it: a member cannot make a
//   file another user's);
// - sessions/ is sticky in a shared store (lib/fs/paths.ts STICKY_NAMES, made so by ensureDir
//   on the first write), so a record another member planted cannot be replaced by ours: the
//   rename fails, and the write reports it instead of failing the hook.

import { writeAtomic } from "./atomic";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { readJsonLine } from "./io";
import { myUid, ownerOf, speaksFor } from "./guard";
import { userName } from "./owner";
import { sessionFile } from "./paths";
import { sessionRecordOf, type SessionRead, type SessionRecord, type SessionStorage, type Writer } from "../sessions/storage";

function read(store: Store, name: string): SessionRead {
  const file = sessionFile(store, name);
  let r: ReturnType<typeof readJsonLine<SessionRecord>>;
  try {
    r = readJsonLine(store, file, (v) => sessionRecordOf(v, name));
  } catch (err) {
    // One this user cannot even open (a member's, mode 000): judged by its owner, as damage is.
    if (!(err instanceof A2AError && (err.data.errno === "EACCES" || err.data.errno === "EPERM"))) throw err;
    r = { kind: "invalid", why: "not readable" };
  }
  if (r.kind === "ok") return { kind: "ok", record: r.value, writer: writer(store, r.uid) };
  if (r.kind === "absent") return { kind: "absent" };
  const owner = ownerOf(file);
  return owner === undefined ? { kind: "damaged" } : { kind: "damaged", writer: writer(store, owner) };
}

const writer = (store: Store, uid: number): Writer => ({ user: userName(store, uid), ours: speaksFor(store, uid, myUid()) });

// Not synced: a record lost in a power cut costs one announcement or stop block again. A record
// another member planted after it was read (sessions/ is sticky: ours cannot replace theirs) is
// met as at a read: nothing is written, and the hook does not fail.
function write(store: Store, rec: SessionRecord): boolean {
  try {
    writeAtomic(store, sessionFile(store, rec.name), JSON.stringify(rec) + "\n", { durable: false });
    return true;
  } catch (err) {
    const errno = err instanceof A2AError ? err.data.errno : undefined;
    if (!(store.shared && (errno === "EPERM" || errno === "EACCES"))) throw err;
    return false;
  }
}

export function fileSessions(store: Store): SessionStorage {
  return {
    read: async (name) => read(store, name),
    write: async (rec) => write(store, rec),
    locate: (name) => sessionFile(store, name),
  };
}
