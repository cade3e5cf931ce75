// The engines the contract suite runs on. tests/contract/ is the definition of an engine
// (docs/ENGINE.md, "The contract suite"): every rule of docs/PROTOCOL.md that is not about a
// layout, driven through the Bus (lib/bus.ts) only. Each *.contract.test.ts runs its tests once
// per entry of ENGINES: `for (const engine of ENGINES) describe(engine.name, ...)`.
//
// Adding an engine: append an entry whose `open` gives a fresh, empty store per call (a test
// never sees another's records) and a `bus` opened on it with `env` as its settings (A2A_*
// variables: A2A_MAX_UNREAD, A2A_AGENT, ...; nothing is taken from this process's
// environment); `reopen(env)` opens a second Bus on the same store, as a second process would
// see it (its own watches, connections and caches: a wait on one handle must wake on a write
// through the other); `dispose` closes every bus it opened and removes the store. The engine
// is done when `bun test tests/contract` passes on it. Tests that look at files on disk do not
// belong here: they are the file engine's own (tests/unit, tests/e2e).
//
// The PostgreSQL engine joins the list wherever a server can be had (tests/harness/pg.ts: a
// throwaway cluster when the tests run as root on a machine with Debian's postgresql package,
// as CI does, or the server A2A_TEST_PG names): each `open` makes a fresh database on it, opens
// the bus with its URL through openBus, and drops it in `dispose`. Until the engine keeps every
// room (issue 22), its entry lists the rooms it keeps, and each contract file runs on the
// engines that keep its room (enginesFor). Without a server the file engine runs alone, and
// the reason is printed once.

import { rmSync } from "node:fs";
import { openBus, type Bus } from "../../lib/bus";
import { freshDatabase, pgServer, pgSkipReason } from "../harness/pg";
import { tempDir } from "../harness/run";

export type Settings = Record<string, string>; // A2A_* variables, as an environment holds them

export interface OpenedStore {
  bus: Bus;
  reopen(env?: Settings): Bus; // a second process's view of the same store
  dispose(): Promise<void>;
}

export type RoomName = "slots" | "mail" | "topics" | "tasks" | "leases" | "reservations" | "presence" | "sessions" | "blobs";

export interface Engine {
  name: string;
  rooms?: RoomName[]; // the rooms it keeps, while it does not keep them all
  open(env?: Settings): Promise<OpenedStore>;
}

// The store at `dir` as the suite opens it: a bus per handle, each closed before `drop` removes it.
function handles(dir: string, env: Settings, drop: () => Promise<void>): OpenedStore {
  const buses: Bus[] = [];
  const at = (e: Settings) => {
    const bus = openBus({ dir, env: { ...e } });
    buses.push(bus);
    return bus;
  };
  return {
    bus: at(env),
    reopen: (e = env) => at(e),
    async dispose() {
      for (const b of buses.splice(0)) await b.close();
      await drop();
    },
  };
}

const fileEngine: Engine = {
  name: "file",
  async open(env = {}) {
    const dir = tempDir("a2a-contract-").path;
    return handles(dir, env, async () => rmSync(dir, { recursive: true, force: true }));
  },
};

const postgresEngine: Engine = {
  name: "postgres",
  async open(env = {}) {
    const server = await pgServer();
    if (!server) throw new Error(`no PostgreSQL server: ${pgSkipReason()}`);
    const db = await freshDatabase(server);
    return handles(db.url, env, () => db.drop());
  },
};

const noServer = pgSkipReason();
if (noServer) console.error(`tests/contract: the PostgreSQL engine is not tested here: ${noServer}`);

export const ENGINES: Engine[] = [fileEngine, ...(noServer ? [] : [postgresEngine])];

// The engines that keep `room`.
export const enginesFor = (room: RoomName): Engine[] => ENGINES.filter((e) => !e.rooms || e.rooms.includes(room));
// Whether `engine` keeps every room of `rooms`: a test of one room that needs others too (a
// session hook reads mail) runs where they all are kept.
export const keeps = (engine: Engine, ...rooms: RoomName[]): boolean => rooms.every((r) => !engine.rooms || engine.rooms.includes(r));
