// The file engine (docs/FILE-ENGINE.md): a directory kept by atomic renames, links and locks,
// woken by inotify (fs.watch or polling elsewhere). It builds the Engine of lib/engine/engine.ts
// for a directory store.
//
// Invariants:
// - this module loads no room's storage code when it is loaded: each storage, gc and init is
//   required on first use (a synchronous require, so a room asks `store.engine.mail` as it
//   would read a field), which keeps `a2a publish` free of mail code (tests/e2e/startup.test.ts);
// - each access builds the storage afresh over the store, as the rooms' accessors always did:
//   its state lives in the Store, never in the engine.

import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { closeWatches, watchDirChannel } from "./watch";
import type { Engine } from "../engine/engine";

export function fileEngine(store: Store): Engine {
  return {
    name: "file",
    writer: "OS user",
    get slots() {
      return (require("./slots") as typeof import("./slots")).fileSlots(store);
    },
    get mail() {
      return (require("./mail") as typeof import("./mail")).fileMail(store);
    },
    get tasks() {
      return (require("./tasks") as typeof import("./tasks")).fileTasks(store);
    },
    get presence() {
      return (require("./presence") as typeof import("./presence")).filePresence(store);
    },
    get sessions() {
      return (require("./sessions") as typeof import("./sessions")).fileSessions(store);
    },
    get topics() {
      return (require("./topics") as typeof import("./topics")).fileTopics(store);
    },
    get leases() {
      return (require("./leases") as typeof import("./leases")).fileLeases(store);
    },
    get reservations() {
      return (require("./reservations") as typeof import("./reservations")).fileReservations(store);
    },
    get blobs() {
      return (require("./blobs") as typeof import("./blobs")).fileBlobs(store);
    },
    get search() {
      return (require("./search") as typeof import("./search")).fileSearch(store);
    },
    watch: (channel, listener) => watchDirChannel(store, channel, listener),
    feed: (on, opts) => (require("./feed") as typeof import("./feed")).watchDirFeed(store, on, opts),
    gc: async (tmpMaxAgeMs) => (require("./gc") as typeof import("./gc")).gcDirectory(store, tmpMaxAgeMs),
    assertStore: () => (require("./guard") as typeof import("./guard")).checkStore(store),
    checks: async () => undefined, // a directory has no server
    init: async (group) => ({ kind: "directory", ...(require("./init") as typeof import("./init")).initStore(store, group) }),
    script() {
      throw new A2AError("EUSAGE", text`${arg("printSql")} prints the SQL of a PostgreSQL store: name one with ${arg("dir")} postgres://USER@HOST:PORT/DATABASE, or leave ${arg("printSql")} out`);
    },
    close: async () => closeWatches(store),
  };
}
