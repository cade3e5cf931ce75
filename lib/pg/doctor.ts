// What `a2a doctor` checks of a PostgreSQL store: that the server answers and how fast, that a
// notification comes back (the wake path), whether the connection is encrypted, how far the
// server's clock is from this host's, the bus's schema version against this a2a's, and whether
// the role connected may use the bus. Each check is one line with its fix; the front end words
// the levels and prints them.
//
// Invariants:
// - reading only: nothing is created or changed (the schema is not made here, so a doctor run
//   never migrates); the one thing sent is a NOTIFY on a channel of this run's own;
// - every query reads catalogs or functions any role may use (pg_namespace, pg_class,
//   has_*_privilege), so a role without rights on the schema is told so, not refused;
// - a failure is worded by lib/pg/connect.ts (host:port/database, never a password).

import type { SQL } from "bun";
import { randomHex } from "../core/digest";
import { arg, op, text, type Part } from "../core/errors";
import { pgError, type Target } from "./connect";
import type { ServerCheck, ServerReport } from "../engine/engine";
import { SCHEMA_VERSION } from "./schema";

export type { ServerCheck, ServerReport }; // the Engine's (lib/engine/engine.ts)

const SAMPLES = 5;
const SKEW_LIMIT_SEC = 2;
const NOTIFY_WAIT_MS = 5_000;
const PRIVILEGES = ["SELECT", "INSERT", "UPDATE", "DELETE"];
const SHOWN = 4;

const GRANTS: Part[] = text`give this role the grants in the commented block at the end of ${op("init", arg("printSql"))} (run them as the schema's owner or a superuser)`;

// `p`'s value, or undefined when it has not settled within `ms`.
async function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(0)} ms`;
const isLocal = (host: string) => host.startsWith("/") || host === "localhost" || host === "::1" || host === "[::1]" || /^127\./.test(host);

export async function serverChecks(sql: SQL, target: Target, recheckMs: number): Promise<ServerReport> {
  const checks: ServerCheck[] = [];
  const { schema } = target;
  let who: { version: string; role: string; superuser: boolean };
  try {
    [who] = await sql`select current_setting('server_version') as version, current_user as role,
                             (select rolsuper from pg_roles where rolname = current_user) as superuser`;
  } catch (err) {
    const e = pgError(err, target, "connecting");
    checks.push({ check: "server", level: "problem", detail: e.parts, fix: text`as the line says; then run ${op("doctor")} again` });
    return { checks, usable: false };
  }
  checks.push({ check: "server", level: "ok", detail: [`PostgreSQL ${who.version} at ${target.where}`] });

  try {
    const samples: number[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      const t0 = performance.now();
      await sql`select 1`;
      samples.push(performance.now() - t0);
    }
    const sorted = [...samples].sort((a, b) => a - b);
    checks.push({ check: "round trip", level: "ok", detail: [`median ${ms(sorted[SAMPLES >> 1])} of ${SAMPLES} queries (${ms(sorted[0])} to ${ms(sorted[SAMPLES - 1])})`] });

    checks.push(await connectionsCheck(sql, who.superuser));
    checks.push(await notifyCheck(sql, target, recheckMs));
    const path = await searchPathCheck(sql, target);
    if (path) checks.push(path);
    checks.push(await encryptionCheck(sql, target));

    const before = Date.now();
    const [{ now }] = await sql`select extract(epoch from now())::float8 as now`;
    const skew = Math.round((now - (before + Date.now()) / 2000) * 100) / 100 || 0; // || 0: no "-0.00"
    checks.push(Math.abs(skew) <= SKEW_LIMIT_SEC
      ? { check: "clock skew", level: "ok", detail: [`${skew.toFixed(2)} s between this host and the server's now()`] }
      : { check: "clock skew", level: "problem", detail: [`the server's clock is ${Math.abs(skew).toFixed(1)} s ${skew > 0 ? "ahead of" : "behind"} this host's: TTLs, leases and presence expire early or late`], fix: ["synchronise the clocks of this host and the server (NTP: chrony or systemd-timesyncd)"] });

    const s = await schemaCheck(sql, schema);
    checks.push(s.check);
    checks.push(await roleCheck(sql, schema, who, s.exists));
  } catch (err) {
    checks.push({ check: "server", level: "problem", detail: pgError(err, target, "checking the server").parts, fix: text`as the line says; then run ${op("doctor")} again` });
  }
  const usable = checks.every((c) => c.level !== "problem") && checks.some((c) => c.check === "schema" && c.level === "ok");
  return { checks, usable };
}

// Connections used and free: each live a2a mcp session holds two (statements, LISTEN), each command one
// while it runs; a server that is full refuses the next session or command (lib/pg/connect.ts).
// Those kept for superusers (and, from PostgreSQL 16, reserved_connections) are not free to others.
async function connectionsCheck(sql: SQL, superuser: boolean): Promise<ServerCheck> {
  const [c] = await sql`select current_setting('max_connections')::int as max,
                               current_setting('superuser_reserved_connections')::int
                                 + coalesce(nullif(current_setting('reserved_connections', true), ''), '0')::int as kept,
                               (select count(*) from pg_stat_activity where backend_type = 'client backend')::int as used`;
  const open = superuser ? c.max : c.max - c.kept;
  const free = Math.max(0, open - c.used);
  const detail = [`${c.used} of ${c.max} in use (${c.kept} kept for superusers), ${free} free${superuser ? "" : " to this role"}: each live a2a mcp session holds two, each command one while it runs`];
  const fix = ["raise max_connections on the server (postgresql.conf, then a restart), or end sessions; README, PostgreSQL: sizing"];
  if (free === 0) return { check: "connections", level: "problem", detail: [...detail, ": the next session or command is refused"], fix };
  if (free < Math.max(5, open / 10)) return { check: "connections", level: "note", detail: [...detail, ": nearly full"], fix };
  return { check: "connections", level: "ok", detail };
}

// A NOTIFY from the operations' connection to a LISTEN on the listeners' own, as a wake goes.
async function notifyCheck(sql: SQL, target: Target, recheckMs: number): Promise<ServerCheck> {
  const channel = `a2a_doctor_${randomHex(16)}`;
  let heard!: () => void;
  const arrived = new Promise<true>((r) => (heard = () => r(true)));
  let sub;
  try {
    sub = await within(sql.listen(channel, () => heard()), NOTIFY_WAIT_MS);
  } catch (err) {
    return { check: "notify", level: "problem", detail: [`LISTEN failed, so waiters wake only when they look again, every ${recheckMs} ms: `, ...pgError(err, target, "listening").parts], fix: ["connect a2a to the server directly, or through a pooler in session mode"] };
  }
  if (!sub) return { check: "notify", level: "problem", detail: [`LISTEN was not acknowledged within ${NOTIFY_WAIT_MS / 1000} s: waiters wake only when they look again, every ${recheckMs} ms`], fix: ["connect a2a to the server directly, or through a pooler in session mode"] };
  try {
    const t0 = performance.now();
    await sql`select pg_notify(${channel}, 'doctor')`;
    const got = await within(arrived, NOTIFY_WAIT_MS);
    const took = performance.now() - t0;
    if (got) return { check: "notify", level: "ok", detail: [`a NOTIFY reached a LISTEN on another connection in ${ms(took)}: waiters wake by it, and look again every ${recheckMs} ms besides (A2A_POLL_MS)`] };
    return {
      check: "notify",
      level: "problem",
      detail: [`a NOTIFY did not reach a LISTEN on another connection within ${NOTIFY_WAIT_MS / 1000} s, while queries work: something between a2a and the server drops LISTEN (a pooler in transaction mode, such as PgBouncer's), so waiters wake only when they look again, every ${recheckMs} ms`],
      fix: ["connect a2a to the server directly, or through a pooler in session mode"],
    };
  } finally {
    await sub.unlisten().catch(() => {});
  }
}

// The schema a2a asked for as the connection's search_path (a startup parameter) must be the one
// the server uses: a pooler that ignores it (PgBouncer told to, ignore_startup_parameters, as
// it must be before 1.20 to let a2a in at all) leaves the connection in another schema, where a2a finds none of its tables.
// Nothing to say when it is there.
async function searchPathCheck(sql: SQL, target: Target): Promise<ServerCheck | undefined> {
  const [{ path }] = await sql`select current_setting('search_path') as path`;
  if (String(path).split(",").map((p) => p.trim().replace(/^"|"$/g, "")).includes(target.schema)) return undefined;
  return {
    check: "search path",
    level: "problem",
    detail: [`the connection's search_path is ${path}, not the schema a2a asked for (${target.schema}): something between a2a and the server drops it (a pooler: PgBouncer whose ignore_startup_parameters names it), so a2a finds none of its tables`],
    fix: ["connect a2a to the server directly, or through PgBouncer 1.20 or later with track_extra_parameters = search_path, idle_in_transaction_session_timeout, lock_timeout"],
  };
}

async function encryptionCheck(sql: SQL, target: Target): Promise<ServerCheck> {
  const mode = new URL(target.url).searchParams.get("sslmode");
  const asked = mode ? `sslmode=${mode}` : "no sslmode in the URL";
  const [row] = await sql`select ssl, version, cipher from pg_stat_ssl where pid = pg_backend_pid()`;
  if (row?.ssl) return { check: "encryption", level: "ok", detail: [`on (${row.version}, ${row.cipher}; ${asked})`] };
  if (isLocal(target.host)) return { check: "encryption", level: "ok", detail: [`off (${asked}): the server is on this machine`] };
  return { check: "encryption", level: "note", detail: [`off (${asked}): what a2a sends to ${target.host} crosses the network in the clear`], fix: ["enable TLS on the server and add sslmode=require (or verify-full, with the server's root certificate) to the URL"] };
}

// The bus's version in its meta table, against this a2a's.
async function schemaCheck(sql: SQL, schema: string): Promise<{ check: ServerCheck; exists: boolean }> {
  const [found] = await sql`select exists (select from pg_namespace where nspname = ${schema}) as schema,
                                   exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and c.relname = 'meta') as meta,
                                   has_schema_privilege(current_user, (select oid from pg_namespace where nspname = ${schema}), 'USAGE') as usage`;
  const check = (level: ServerCheck["level"], detail: Part[], fix?: Part[]) => ({ check: { check: "schema", level, detail, fix }, exists: found.schema as boolean });
  if (!found.schema) return check("note", text`schema ${schema} is not created yet; the first use creates it, or ${op("init")}`);
  if (!found.meta) return check("note", text`schema ${schema} exists but holds no a2a bus yet (no meta table): the first use makes the bus's tables in it, or ${op("init")}`, [`if the schema is another program's, give a2a one of its own: ?schema=NAME in the URL`]);
  if (!found.usage) return check("problem", [`the version of the bus in schema ${schema} cannot be read: this role may not use the schema`], GRANTS);
  let version: number;
  try {
    const rows = await sql.unsafe(`select value from ${schema}.meta where key = 'version'`);
    version = rows.length ? Number(rows[0].value) : 0;
  } catch (err) {
    if ((err as { errno?: string }).errno !== "42501") throw err;
    return check("problem", [`the version of the bus in schema ${schema} cannot be read: this role may not read ${schema}.meta`], GRANTS);
  }
  if (version > SCHEMA_VERSION) return check("problem", [`the bus in schema ${schema} is at version ${version}, newer than this a2a knows (${SCHEMA_VERSION}): this a2a refuses to use it`], ["upgrade a2a on this machine (as it was installed: install.sh or your package manager)"]);
  if (version < SCHEMA_VERSION) return check("note", text`the bus in schema ${schema} is at version ${version}; the first use brings it to ${SCHEMA_VERSION}, or ${op("init")}`);
  return check("ok", [`the bus in schema ${schema} is at version ${version}, as this a2a`]);
}

// Who a2a is on the server, and whether that role may use the bus (or make it).
async function roleCheck(sql: SQL, schema: string, who: { role: string; superuser: boolean }, exists: boolean): Promise<ServerCheck> {
  const role = `role ${who.role}`;
  if (who.superuser) return { check: "role", level: "ok", detail: text`${role} (a superuser: it may do anything; members are better given roles of their own, with the grants of ${op("init", arg("printSql"))})` };
  if (!exists) {
    const [{ create }] = await sql`select has_database_privilege(current_database(), 'CREATE') as create`;
    return create
      ? { check: "role", level: "ok", detail: [`${role} (not a superuser) may create schema ${schema}`] }
      : { check: "role", level: "problem", detail: [`${role} (not a superuser) may not create schema ${schema}, so the first use cannot make the bus`], fix: text`ask the database's administrator to run the SQL ${op("init", arg("printSql"))} prints, with its grants for this role` };
  }
  const missing = (await sql`
    select c.relname as name, p.priv as privilege from pg_class c join pg_namespace n on n.oid = c.relnamespace
      cross join unnest(${PRIVILEGES}::text[]) as p(priv)
      where n.nspname = ${schema} and c.relkind in ('r', 'p') and not has_table_privilege(c.oid, p.priv)
    union all -- the case keeps the planner from asking has_sequence_privilege of a table
    select c.relname, 'USAGE' from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and case when c.relkind = 'S' then not has_sequence_privilege(c.oid, 'USAGE') else false end
    union all
    select f.proname || '()', 'EXECUTE' from pg_proc f join pg_namespace n on n.oid = f.pronamespace
      where n.nspname = ${schema} and not has_function_privilege(f.oid, 'EXECUTE')
    order by 1, 2`) as { name: string; privilege: string }[];
  const [{ usage, tables }] = await sql`
    select has_schema_privilege(current_user, ${schema}, 'USAGE') as usage,
           (select count(*)::int from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = ${schema} and c.relkind in ('r', 'p')) as tables`;
  if (usage && !missing.length) return { check: "role", level: "ok", detail: [`${role} (not a superuser) may use schema ${schema}: usage, and select, insert, update and delete on its ${tables} tables`] };
  const lacks = [...(usage ? [] : [`usage on schema ${schema}`]), ...missing.slice(0, SHOWN).map((m) => `${m.privilege.toLowerCase()} on ${schema}.${m.name}`)];
  const more = missing.length > SHOWN ? ` and ${missing.length - SHOWN} more` : "";
  return { check: "role", level: "problem", detail: text`${role} (not a superuser) lacks ${lacks.join(", ")}${more}: a2a fails where it needs them`, fix: GRANTS };
}
