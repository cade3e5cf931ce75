// The bus's tables in its schema, created on first use and migrated by version. Every
// statement of a step runs in one transaction under an advisory lock on the schema's name, so
// agents starting at once against a fresh database make it once: the others wait for the lock,
// then find the version current and change nothing.
//
// Invariants:
// - steps are only ever appended: a database at version N runs steps N+1.. in order, and the
//   version row moves with them, in the same transaction;
// - a schema newer than this a2a knows is refused (EUSAGE): an old binary must not write
//   tables whose rules it does not know;
// - the writer of every row is the role the server says made the change (`writer`, set by a
//   trigger from current_user, whatever the client sent): the client cannot choose it;
// - every change of a row that a waiter may wait on notifies its channel from a trigger, so no
//   write path can forget to wake (lib/pg/wake.ts names the channels the same way).

import type { SQL } from "bun";
import { A2AError, arg, op, text } from "../core/errors";
import type { Target } from "./connect";
import { BLOB_TABLES } from "./blobs";
import { LEASE_TABLES } from "./leases";
import { RESERVATION_TABLES } from "./reservations";
import { MAIL_TABLES } from "./mail-tables";
import { MAIL_ROW_SECURITY } from "./mail-trust";
import { BLOB_ROW_SECURITY } from "./blob-trust";
import { PRESENCE_TABLES } from "./presence";
import { SESSION_TABLES } from "./sessions";
import { SLOT_TABLES, SLOT_TABLES_2 } from "./slots";
import { TASK_TABLES } from "./task-tables";
import { TOPIC_TABLES } from "./topics";
import { SEARCH_TABLES } from "./search";

// $S is the schema's name (validated by lib/pg/connect.ts: lowercase letters, digits, _).
// What every room's tables share: the trigger function that stamps a row's writer (its
// search_path pinned, so a caller's own now() cannot stand in for pg_catalog's), and the
// LISTEN channel of a channel's name, as lib/pg/wake.ts pgChannel names it ("SCHEMA.NAME", or
// "#" and the md5 of that when it is over the 63 bytes a channel may have): a trigger wakes
// with pg_notify($S.channel(NAME), KEY).
const COMMON = [
  `create function $S.stamp() returns trigger language plpgsql set search_path = pg_catalog, pg_temp as $$
   begin new.writer := current_user; new.changed_at := now(); return new; end $$`,
  `create function $S.channel(name text) returns text language sql immutable as $$
   select case when octet_length('$S.' || name) <= 63 then '$S.' || name else '#' || md5('$S.' || name) end $$`,
];

// Each step is what that version adds, in order; each room module owns its statements. A step is
// never changed once written: a database made by an older a2a runs only the steps after its own.
const STEPS: string[][] = [
  [...COMMON, ...SLOT_TABLES, ...MAIL_TABLES, ...TASK_TABLES, ...PRESENCE_TABLES, ...SESSION_TABLES, ...TOPIC_TABLES, ...LEASE_TABLES, ...RESERVATION_TABLES, ...BLOB_TABLES, ...SEARCH_TABLES],
  SLOT_TABLES_2, // a channel per slot (issue 38)
];

export const SCHEMA_VERSION = STEPS.length;

// The lock that makes one migration at a time per schema, and the table that holds its version.
const LOCK = `select pg_advisory_xact_lock(hashtextextended('a2a schema $S', 0))`;
const META = `create table if not exists $S.meta (key text primary key, value text not null)`;
const fill = (statement: string, schema: string) => statement.replaceAll("$S", schema);

// Brings the target's schema to SCHEMA_VERSION; returns the version it found. A role that may
// not make or change it (SQLSTATE 42501) is told who can (EDENIED), in one line.
export async function migrate(sql: SQL, target: Pick<Target, "schema" | "where" | "user">): Promise<number> {
  try {
    return await sql.begin((tx) => migrateIn(tx, target.schema));
  } catch (err) {
    throw await denied(sql, target, err);
  }
}

// A failure to migrate as the role may understand it: a refusal (42501) says who can make or
// use the schema; anything else is returned as it was.
export async function denied(sql: SQL, target: Pick<Target, "schema" | "where" | "user">, err: unknown): Promise<unknown> {
  if ((err as { errno?: string })?.errno !== "42501") return err;
  const { schema, where, user } = target;
  const said = String((err as Error).message).split("\n")[0];
  // A schema the role has no usage on is skipped by search_path: its tables look missing.
  const there = (await sql`select 1 from pg_namespace where nspname = ${schema}`).length > 0;
  return there
    ? new A2AError("EDENIED", text`role ${user} may not use the bus in schema ${schema} at ${where} (${said}): ask the database's administrator to give ${user} the grants at the end of ${op("init", arg("printSql"))}`, { cause: err, data: { where, schema, sqlstate: "42501" } })
    : new A2AError("EDENIED", text`the bus's schema ${schema} is not made yet at ${where}, and role ${user} may not create it (${said}): run ${op("init")} as the database's owner (or a role with CREATE on it), or have its administrator run the SQL that ${op("init", arg("printSql"))} prints`, { cause: err, data: { where, schema, sqlstate: "42501" } });
}

// A schema that holds tables and no bus is someone else's (an application's `public`, say): the
// bus is not made among them (EUSAGE), so nothing of theirs meets a2a's tables or triggers.
async function refuseForeign(tx: SQL, schema: string): Promise<void> {
  const [r] = await tx`select
      (select array_agg(relname order by relname) from (select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v', 'm', 'f') order by c.relname limit 3) t) as theirs,
      exists (select 1 from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relname = 'meta' and a.attname = 'value') as ours`;
  if (r.ours || !r.theirs) return;
  throw new A2AError("EUSAGE", `schema ${schema} holds tables that are not a2a's (${(r.theirs as string[]).join(", ")}): give the bus a schema of its own with ?schema=NAME in the URL (default a2a)`, {
    data: { schema, tables: r.theirs },
  });
}

// The same inside a transaction the caller holds (and may roll back: lib/pg/engine.ts `read`).
export async function migrateIn(tx: SQL, schema: string): Promise<number> {
  await tx.unsafe(fill(LOCK, schema));
  await refuseForeign(tx, schema);
  await tx.unsafe(`create schema if not exists ${schema}`);
  await tx.unsafe(fill(META, schema));
  const rows = await tx.unsafe(`select value from ${schema}.meta where key = 'version'`);
  const found = rows.length ? Number(rows[0].value) : 0;
  if (found > SCHEMA_VERSION) {
    throw new A2AError("EUSAGE", `the bus in schema ${schema} is at version ${found}, newer than this a2a knows (${SCHEMA_VERSION}): upgrade a2a on this machine`, {
      data: { schema, version: found, known: SCHEMA_VERSION },
    });
  }
  for (let v = found; v < SCHEMA_VERSION; v++) for (const step of STEPS[v]) await tx.unsafe(fill(step, schema));
  if (found < SCHEMA_VERSION) {
    await tx.unsafe(`insert into ${schema}.meta (key, value) values ('version', '${SCHEMA_VERSION}') on conflict (key) do update set value = excluded.value`);
  }
  return found;
}

// Whether the bus wakes each slot's own channel (version 2), for a waiter about to LISTEN on one
// (lib/pg/wake.ts). Operations assume the schema current and migrate only when they find
// something missing, which a replaced trigger function is not: so a waiter looks, once per
// connection, and brings a version-1 bus up to date itself. One it may not migrate (a role
// without the rights) is false: the waiter listens on `slots`, as every waiter once did.
export async function slotChannels(sql: SQL, target: Pick<Target, "schema" | "where" | "user">): Promise<boolean> {
  try {
    const rows = await sql.unsafe(`select value from ${target.schema}.meta where key = 'version'`);
    if (rows.length && Number(rows[0].value) < 2) await migrate(sql, target);
    return true;
  } catch (err) {
    // No bus yet: the first write makes it at this version, which wakes slot channels.
    return (err as { errno?: string })?.errno === "42P01";
  }
}

// What `migrate` runs on an empty database, as one script a database's administrator can read
// and run instead (`a2a init --print-sql`), in one transaction under the same lock; then, as
// comments, the grants a role needs to use the bus (ROLE to be filled in, once per role).
// With `rls`, row-level security (MAIL_ROW_SECURITY, BLOB_ROW_SECURITY) is part of the script, run with it.
export function schemaScript(schema: string, rls = false): string {
  const statements = [fill(LOCK, schema), `create schema if not exists ${schema}`, fill(META, schema), ...STEPS.flat().map((s) => fill(s, schema)), `insert into ${schema}.meta (key, value) values ('version', '${SCHEMA_VERSION}')`];
  const security = rls
    ? [
      `-- Row-level security (--rls): each role reads, moves and removes only the mail of the inboxes it`,
      `-- owns (the first role to read an inbox as its own owns it), and reads the mail it wrote; anyone`,
      `-- may send. A role reads an attachment (a blob) only when it may read a record naming it, or`,
      `-- it stored it; its own send keys only. The schema's owner and the roles that are members of it,`,
      `-- superusers and roles with BYPASSRLS see everything: make an administrator with  grant OWNER to ADMIN;`,
      ...[...MAIL_ROW_SECURITY, ...BLOB_ROW_SECURITY].map((s) => `${fill(s, schema)};`),
    ]
    : [];
  return [
    `-- The a2a bus in schema ${schema}, version ${SCHEMA_VERSION}: what a2a init (or a2a's first use) would run.`,
    `-- Run it as the role that is to own the schema (it needs CREATE on the database), e.g.`,
    `--   psql -v ON_ERROR_STOP=1 -d postgres://OWNER@HOST:PORT/DATABASE -f a2a.sql`,
    "begin;",
    ...statements.map((s) => `${s};`),
    ...security,
    "commit;",
    "",
    `-- Each role that uses the bus (a person or an agent may have one of its own) needs these`,
    `-- grants: replace ROLE and run them as the schema's owner, once per role.`,
    `-- grant usage on schema ${schema} to ROLE;`,
    `-- grant select, insert, update, delete on all tables in schema ${schema} to ROLE;`,
    `-- grant usage on all sequences in schema ${schema} to ROLE;`,
    `-- grant execute on all functions in schema ${schema} to ROLE;`,
    ...(rls ? [] : [`-- (a2a init --print-sql --rls adds row-level security: each role reads only the inboxes it owns.)`]),
    "",
  ].join("\n");
}
