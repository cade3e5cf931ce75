// The file engine (docs/FILE-ENGINE.md): a directory kept by atomic renames, links and locks,
// woken by inotify (fs.watch or polling elsewhere). It builds the Engine of lib/engine/engine.ts
// for a directory store.
//
// Invariants:
// - this module loads no room's storage code when it is loaded: each storage, gc and init is
//   required on first use (a synchronous require, so a room asks `store.engine.mail` as it
//   would read a field), which keeps `a2a publish` free of mail code (tests/e2e/startup.test.ts);
// - each access builds the storage afresh over the store, as the rooms' accessors always did:
//   its state lives in the Store, never in the engine;
// - a room about to be used has its storage imported ahead (prepare, from lib/bus.ts, alongside
//   the room's own code): Bun's first require() in a process costs ~0.4 ms, a tenth of a
//   command's own start-up; the require stays for a storage used without it (one room's code
//   reaching another's storage).

import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { closeWatches, watchDirChannel } from "./watch";
import type { Engine } from "../engine/engine";

// The storage modules, by room: imported ahead by prepare, else required on first use. Loaded
// once per process (a module is), whichever store asks.
const IMPORT = {
  slots: () => import("./slots"),
  mail: () => import("./mail"),
  tasks: () => import("./tasks"),
  presence: () => import("./presence"),
  sessions: () => import("./sessions"),
  topics: () => import("./topics"),
  leases: () => import("./leases"),
  reservations: () => import("./reservations"),
  blobs: () => import("./blobs"),
  search: () => import("./search"),
};
type Storages = { [R in keyof typeof IMPORT]: Awaited<ReturnType<(typeof IMPORT)[R]>> };
const loaded: Partial<Storages> = {};

async function prepare(room: string): Promise<void> {
  if (!Object.hasOwn(IMPORT, room)) return; // a room with no storage of its own (dashboard, admin)
  const r = room as keyof Storages;
  (loaded as Record<string, unknown>)[r] ??= await IMPORT[r]();
}

export function fileEngine(store: Store): Engine {
  return {
    name: "file",
    writer: "OS user",
    prepare,
    get slots() {
      return (loaded.slots ??= require("./slots") as Storages["slots"]).fileSlots(store);
    },
    get mail() {
      return (loaded.mail ??= require("./mail") as Storages["mail"]).fileMail(store);
    },
    get tasks() {
      return (loaded.tasks ??= require("./tasks") as Storages["tasks"]).fileTasks(store);
    },
    get presence() {
      return (loaded.presence ??= require("./presence") as Storages["presence"]).filePresence(store);
    },
    get sessions() {
      return (loaded.sessions ??= require("./sessions") as Storages["sessions"]).fileSessions(store);
    },
    get topics() {
      return (loaded.topics ??= require("./topics") as Storages["topics"]).fileTopics(store);
    },
    get leases() {
      return (loaded.leases ??= require("./leases") as Storages["leases"]).fileLeases(store);
    },
    get reservations() {
      return (loaded.reservations ??= require("./reservations") as Storages["reservations"]).fileReservations(store);
    },
    get blobs() {
      return (loaded.blobs ??= require("./blobs") as Storages["blobs"]).fileBlobs(store);
    },
    get search() {
      return (loaded.search ??= require("./search") as Storages["search"]).fileSearch(store);
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
