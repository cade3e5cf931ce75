// The store's maintenance where a database server keeps it (issue 22): doctor's checks of the
// server, the schema made on purpose (`a2a init`) and the SQL a database's administrator runs
// instead (`a2a init --print-sql`). Each is the engine's own (Store.pg: lib/pg/engine.ts),
// reached here through the Store, so no code of the PostgreSQL engine loads for a directory.
//
// Invariant: what a directory store has no meaning for is refused (EUSAGE) or answered as
// absent before anything is touched; `--shared` on a database likewise.

import type { Marker, Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { initStore as initDirectory } from "../core/init";

type Server = NonNullable<Store["pg"]>;
export type ServerReport = Awaited<ReturnType<Server["checks"]>>;

export type InitResult =
  | { kind: "directory"; created: boolean; marker: Marker }
  | { kind: "database"; created: boolean; schema: string; found: number; version: number }; // found: the version it was at (0: none)

// On a database, members are roles, not the OS users of a group.
function noGroup(group: string | undefined): void {
  if (group === undefined) return;
  throw new A2AError("EUSAGE", text`${arg("shared")} is for a directory store: on PostgreSQL each member connects as a role of its own; leave ${arg("shared")} out, and give each role the grants that a2a init ${arg("printSql")} ends with`);
}

// Doctor's checks of the server (lib/pg/doctor.ts), or undefined: a directory has no server.
export async function serverChecks(store: Store): Promise<ServerReport | undefined> {
  return store.pg?.checks();
}

// `a2a init`: a directory made with its marker (lib/core/init.ts), or the database's schema
// made or migrated to this a2a's version.
export async function initStore(store: Store, group?: string): Promise<InitResult> {
  if (!store.pg) return { kind: "directory", ...initDirectory(store, group) };
  noGroup(group);
  // A role that may not make the schema is told who can (lib/pg/schema.ts migrate).
  const r = await store.pg.init();
  return { kind: "database", created: r.found === 0, ...r };
}

// The SQL that makes the schema, with the grants a member role needs; connects to nothing.
// `rls`: with the optional row-level security (each role reads only its own inboxes).
export function serverSql(store: Store, group?: string, rls = false): string {
  if (!store.pg) throw new A2AError("EUSAGE", text`${arg("printSql")} prints the SQL of a PostgreSQL store: name one with ${arg("dir")} postgres://USER@HOST:PORT/DATABASE, or leave ${arg("printSql")} out`);
  noGroup(group);
  return store.pg.script(rls);
}
