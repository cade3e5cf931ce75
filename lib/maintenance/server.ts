// The store's maintenance where the engine keeps it: doctor's checks of a server, the store made
// on purpose (`a2a init`) and the SQL a database's administrator runs instead (`a2a init
// --print-sql`). Each is the engine's own (lib/engine/engine.ts), reached through the Store, so
// no code of the PostgreSQL engine loads for a directory.
//
// Invariant: what an engine has no meaning for is refused (EUSAGE) or answered as absent before
// anything is touched; `--shared` on a database likewise.

import type { Store } from "../core/config";
import type { InitResult, ServerReport } from "../engine/engine";

export type { InitResult, ServerReport };

// Doctor's checks of the server (lib/pg/doctor.ts), or undefined: a directory has no server.
export async function serverChecks(store: Store): Promise<ServerReport | undefined> {
  return store.engine.checks();
}

// `a2a init`: a directory made with its marker (lib/fs/init.ts), or the database's schema
// made or migrated to this a2a's version.
export async function initStore(store: Store, group?: string): Promise<InitResult> {
  return store.engine.init(group);
}

// The SQL that makes the schema, with the grants a member role needs; connects to nothing.
// `rls`: with the optional row-level security (each role reads only its own inboxes).
export function serverSql(store: Store, group?: string, rls = false): string {
  return store.engine.script(group, rls);
}
