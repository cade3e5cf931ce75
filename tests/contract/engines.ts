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
// A2A_TEST_PG: the PostgreSQL engine (issue 22) joins the list when this variable names a
// server (a postgres:// URL, its password in PGPASSWORD or ~/.pgpass, never in the URL): each
// `open` then makes a fresh database (or schema) on it, opens the bus with that URL through
// openBus, and drops it in `dispose`. Unset, the suite runs on the file engine alone, and
// nothing is skipped: the entry is simply not there.

import { rmSync } from "node:fs";
import { openBus, type Bus } from "../../lib/bus";
import { tempDir } from "../harness/run";

export type Settings = Record<string, string>; // A2A_* variables, as an environment holds them

export interface OpenedStore {
  bus: Bus;
  reopen(env?: Settings): Bus; // a second process's view of the same store
  dispose(): Promise<void>;
}

export interface Engine {
  name: string;
  open(env?: Settings): Promise<OpenedStore>;
}

const fileEngine: Engine = {
  name: "file",
  async open(env = {}) {
    const dir = tempDir("a2a-contract-").path;
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
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export const ENGINES: Engine[] = [
  fileEngine,
  // The PostgreSQL engine goes here (issue 22), when process.env.A2A_TEST_PG is set (see the header).
];
