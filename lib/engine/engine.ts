// The Engine: what a store is kept in, chosen once when the store is opened (lib/engine/open.ts
// for a directory, lib/bus.ts for a database URL) and held by the Store (`store.engine`). Every
// room reaches its storage, its waking and its maintenance through it and never names an engine;
// each engine is a folder of its own (lib/fs, lib/pg) that implements this interface, as a
// Kysely dialect or a Keyv adapter does, so one could be read, or deleted, alone.
//
// Invariants:
// - this module holds types only: it loads no engine, and importing it costs nothing;
// - an engine's storages are built on first use (the file engine loads a room's storage code
//   only when that room asks: `a2a publish` loads no mail code, tests/e2e/startup.test.ts);
// - what an engine has no meaning for answers as absent (a directory has no server to check)
//   or is refused as bad usage, before anything is touched.

import type { BlobStorage } from "../blobs/storage";
import type { Channel } from "../core/channel";
import type { Marker } from "../core/config";
import type { Outcome } from "../core/outcome";
import type { BusEvent, BusOptions } from "../dashboard/feed";
import type { Part } from "../core/errors";
import type { Listener } from "../core/watch";
import type { LeaseStorage } from "../leases/storage";
import type { MailStorage } from "../mail/storage";
import type { GcReport } from "../maintenance/gc";
import type { PresenceStorage } from "../presence/storage";
import type { ReservationStorage } from "../reservations/storage";
import type { SearchStorage } from "../search/storage";
import type { SessionStorage } from "../sessions/storage";
import type { SlotStorage } from "../slots/storage";
import type { TaskStorage } from "../tasks/storage";
import type { TopicStorage } from "../topics/storage";

export type EngineName = "file" | "postgres";

// Doctor's checks of a server (lib/pg/doctor.ts), as it reports them.
export interface ServerCheck {
  check: string;
  level: "ok" | "note" | "problem";
  detail: Part[];
  fix?: Part[];
}

export interface ServerReport {
  checks: ServerCheck[];
  // Whether the bus can be used as it is (reachable, schema current, the role's rights whole),
  // so that checks which go through the rooms may run without making or migrating anything.
  usable: boolean;
}

// What `a2a init` made or found.
export type InitResult =
  | { kind: "directory"; created: boolean; marker: Marker }
  | { kind: "database"; created: boolean; schema: string; found: number; version: number }; // found: the version it was at (0: none)

// The engine's own sweeps for `a2a gc` (lib/maintenance/gc.ts adds the rooms' engine-neutral ones).
export type EngineSweeps = Omit<GcReport, "reservations_removed" | "blobs_removed">;

export interface Engine {
  readonly name: EngineName;
  // What vouches for a record's writer (lib/mail/policy.ts): the OS user owning a file, or the
  // database role that wrote a row.
  readonly writer: "OS user" | "role";
  // Each room's storage (lib/<room>/storage.ts is its interface).
  readonly slots: SlotStorage;
  readonly mail: MailStorage;
  readonly tasks: TaskStorage;
  readonly presence: PresenceStorage;
  readonly sessions: SessionStorage;
  readonly topics: TopicStorage;
  readonly leases: LeaseStorage;
  readonly reservations: ReservationStorage;
  readonly blobs: BlobStorage;
  readonly search: SearchStorage;
  // Loads the code of room `room`'s storage ahead of its first (synchronous) use, when an engine
  // loads it lazily (lib/fs/engine.ts); a room it has no storage for is nothing to do. Optional:
  // an engine that holds every storage from the start has nothing to prepare.
  prepare?(room: string): Promise<void>;
  // Waking: calls `listener` for every change on `channel` until the returned function is called.
  watch(channel: Channel, listener: Listener): () => void;
  // How often every watch is told "look at everything" (undefined) by the engine itself, as a
  // safety net for a lost event; undefined when it is not (the file engine: a local watch is
  // trusted, a polled directory ticks on its own interval). A room's periodic look that only
  // needs some tick rides on these instead of adding its own timer (lib/mail/receive.ts).
  readonly tickMs?: number;
  // The dashboard's feed (lib/dashboard/feed.ts watchBus): every change as one stream of events.
  feed(on: (e: BusEvent) => void, opts: BusOptions): Promise<Outcome<number>>;
  // `a2a gc`'s sweeps that are the engine's own: `tmpMaxAgeMs`, how old an abandoned temp file
  // must be to go (where an engine makes any; else the engine's own rule).
  gc(tmpMaxAgeMs?: number): Promise<EngineSweeps>;
  // Before a command that may remove without writing first (gc, clear --all): refuses a place
  // that holds no store of this engine, before anything is touched; nothing to do on a server.
  assertStore(): void;
  // Doctor's checks of a server, or undefined: the engine has none.
  checks(): Promise<ServerReport | undefined>;
  // `a2a init`: the store made (or migrated) on purpose; `group`: a shared directory's group.
  init(group?: string): Promise<InitResult>;
  // The SQL that makes the store, for an administrator (`rls`: with row-level security); refused
  // where the engine has none.
  script(group: string | undefined, rls: boolean): string; // rls: lib/pg/mail-trust.ts, lib/pg/blob-trust.ts
  // Lets go of what the engine holds in this process (watches, connections).
  close(): Promise<void>;
}
