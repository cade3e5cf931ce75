// Where a PostgreSQL store is and how to reach it: the URL a user gave (A2A_DIR or --dir), read
// into what the runtime's client (Bun.SQL) needs, and its failures worded for a person.
//
// Invariants:
// - a password is never printed, logged or put into an error: errors name the server by host,
//   port and database (`where`), and the client's own errors are reworded, not passed through;
// - the password comes from the URL, else PGPASSWORD (the client reads it), else the password
//   file (PGPASSFILE, else ~/.pgpass), as libpq does; a2a keeps none of its own;
// - `?schema=NAME` (default a2a) picks the schema that holds the bus, so several buses share a
//   database; it is a2a's parameter, taken out of the URL before the client sees it (the
//   server would refuse it as an unknown setting). Other parameters (sslmode, ...) pass through;
// - the database is the URL's, passed explicitly: PGDATABASE must not redirect a store;
// - a connection lost in the middle of an operation is told apart by what is known of it:
//   lost before a transaction's COMMIT was sent (transaction() below), nothing was changed;
//   lost while a COMMIT or a lone statement was on its way, the change may or may not have
//   been made (data.outcome "unknown"), and the caller is told so, and how to find out.

import { readFileSync } from "node:fs";
import type { SQL } from "bun";
import type { Store } from "../core/config";
import { A2AError, arg, op, text } from "../core/errors";
import { cutHosts, envHosts, sessionAttrs, type HostPort } from "./hosts";

export interface Target {
  url: string; // for the client: the store's URL without a2a's own parameters
  schema: string;
  database: string;
  host: string;
  port: number;
  user: string;
  password: string | undefined; // from the password file, when the URL and PGPASSWORD give none
  where: string; // host:port/database, for messages
  connectTimeoutSec: number; // how long a connection may take to be made (0: no limit)
  // Several servers (lib/pg/hosts.ts): each one's own target, in the URL's order; this target
  // then names them all (`where` h1:5432,h2:5433/db) and lib/pg/primary.ts picks one.
  candidates?: Target[];
}

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;
const SSLMODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];
export const DEFAULT_SCHEMA = "a2a";
// A server that does not answer (a partition, a firewall that drops) is given up on after this
// long unless the URL's connect_timeout or PGCONNECT_TIMEOUT says otherwise, as libpq reads
// them: a command then ends with one line instead of Bun.SQL's 30 s, or the kernel's minutes.
export const CONNECT_TIMEOUT_SEC = 10;

// The store's target; EUSAGE (nothing connected) when the URL cannot name one.
export function targetOf(store: Store, env: Record<string, string | undefined> = process.env): Target {
  const cut = cutHosts(store.url!, store.root);
  const given = cut.url;
  let u: URL;
  try {
    u = new URL(given);
  } catch {
    throw new A2AError("EUSAGE", text`${store.root} is not a PostgreSQL URL a2a can read: write postgres://USER@HOST:PORT/DATABASE, with any password in PGPASSWORD or ~/.pgpass (a password in the URL must be percent-encoded)`);
  }
  // A password holding "/", "?", "#" or "@" unencoded makes a URL parser read part of it as the
  // host, path or query: connecting there would be wrong, and naming it would print the
  // password. The location without its password (cut on the text, redact) must name the same
  // server and database.
  const shown = new URL(cutHosts(store.root, store.root).url);
  if (u.host !== shown.host || u.pathname !== shown.pathname) {
    throw new A2AError("EUSAGE", text`the password in the store's URL holds a character a URL cannot carry as it is (/ ? # @): percent-encode it, or leave it out of the URL and put it in PGPASSWORD or ~/.pgpass`);
  }
  const schema = u.searchParams.get("schema") ?? DEFAULT_SCHEMA;
  if (!SCHEMA_RE.test(schema)) {
    throw new A2AError("EUSAGE", text`invalid schema ${JSON.stringify(schema)} in ${store.root}: use 1-63 lowercase letters, digits and _, not starting with a digit (e.g. ?schema=team_a), or leave it out for ${DEFAULT_SCHEMA}`);
  }
  u.searchParams.delete("schema");
  sessionAttrs(u, store.root);
  // libpq's modes. Another one reached the client, which threw a bare error taken for a bug.
  const sslmode = u.searchParams.get("sslmode");
  if (sslmode !== null && !SSLMODES.includes(sslmode)) {
    throw new A2AError("EUSAGE", `sslmode=${JSON.stringify(sslmode).slice(0, 40)} in ${store.root} is not an sslmode: use one of ${SSLMODES.join(", ")} (verify-full checks the server's certificate and name), or leave it out`, {
      data: { sslmode },
    });
  }
  const hosts = cut.hosts ?? (u.hostname ? undefined : envHosts(env));
  const one = targetAt(u, hosts?.[0], schema, store, env);
  if (!hosts) return one;
  const candidates = hosts.map((h) => targetAt(u, h, schema, store, env));
  return { ...one, where: `${hosts.map((h) => `${h.host}:${h.port}`).join(",")}/${one.database}`, candidates };
}

// The target of the URL `u0`, or of its server `at` of several (its host and port in the
// client's URL, its own password line); a URL of one server reaches the client as it was.
function targetAt(u0: URL, at: HostPort | undefined, schema: string, store: Store, env: Record<string, string | undefined>): Target {
  const u = new URL(u0);
  if (at) (u.hostname = at.host), (u.port = String(at.port));
  const host = at?.host ?? (u.hostname || "localhost");
  const port = at?.port ?? Number(u.port || 5432);
  const user = decodeURIComponent(u.username) || env.PGUSER || env.USER || "postgres";
  const database = decodeURIComponent(u.pathname.replace(/^\//, "")) || user;
  const hasPassword = u.password !== "" || !!env.PGPASSWORD;
  const timeout = u.searchParams.get("connect_timeout") ?? env.PGCONNECT_TIMEOUT;
  const connectTimeoutSec = timeout !== undefined && /^\s*-?\d+\s*$/.test(timeout) ? Math.max(0, Number(timeout)) : CONNECT_TIMEOUT_SEC;
  return {
    url: u.toString(),
    schema,
    database,
    host,
    port,
    user,
    password: hasPassword ? undefined : passwordFromFile(store.pgPassFile, host, port, database, user),
    where: `${host}:${port}/${database}`,
    connectTimeoutSec,
  };
}

// The password file's password for this server and user (libpq's rules: the first line whose
// five fields match, "*" matching anything; "\:" and "\\" escape), or undefined.
function passwordFromFile(file: string | undefined, host: string, port: number, database: string, user: string): string | undefined {
  if (!file) return undefined;
  let textOf: string;
  try {
    textOf = readFileSync(file, "utf8");
  } catch {
    return undefined; // none: the server will say a password is needed
  }
  for (const line of textOf.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const fields: string[] = [];
    let cur = "";
    for (let i = 0; i < line.length; i++) {
      if (line[i] === "\\" && i + 1 < line.length) cur += line[++i];
      else if (line[i] === ":" && fields.length < 4) (fields.push(cur), (cur = ""));
      else cur += line[i];
    }
    fields.push(cur);
    if (fields.length !== 5) continue;
    const [h, p, d, u, pw] = fields;
    const match = (f: string, v: string) => f === "*" || f === v;
    if (match(h, host) && match(p, String(port)) && match(d, database) && match(u, user)) return pw;
  }
  return undefined;
}

// sql.begin, remembering whether a failure came before the COMMIT was sent: the transaction
// rolled back then, and a connection lost on the way is told as "nothing was changed".
export async function transaction<T>(sql: SQL, fn: (tx: SQL) => Promise<T>): Promise<T> {
  let committing = false;
  try {
    return await sql.begin(async (tx) => {
      const v = await fn(tx);
      committing = true;
      return v;
    });
  } catch (err) {
    throw !committing && (lostConnection(err) || readOnly(err)) ? new RolledBack(err) : err;
  }
}

// A statement that changes nothing (the read before a compare-and-set): a connection lost under
// it is told as "nothing was changed", as one lost before a COMMIT.
export async function unchanged<T>(statement: Promise<T>): Promise<T> {
  try {
    return await statement;
  } catch (err) {
    throw lostConnection(err) || readOnly(err) ? new RolledBack(err) : err;
  }
}

// A write refused by a server that accepts none (a standby, promoted away from, or one made
// read-only): 25006 read_only_sql_transaction. The statement changed nothing.
export const readOnly = (err: unknown): boolean => (err as { errno?: string })?.errno === "25006";

// Thrown when nothing was changed: a failover may run the operation again on the new primary.
export const nothingChanged = (err: unknown): boolean => err instanceof RolledBack || readOnly(err);

class RolledBack {
  constructor(readonly cause: unknown) {}
}

// Errors of a connection that ended under a statement: the server's "terminating connection"
// (57P01 administrator, 57P02 crash, 25P03 idle in a transaction too long: IDLE_IN_CHANGE_MS of
// lib/pg/engine.ts), a connection failure (08006, 08003) or the socket closing.
const LOST_STATES = /^(57P0[12]|25P03|0800[36])$/;
export function lostConnection(err: unknown): boolean {
  const e = err as { code?: string; errno?: string };
  return /CONNECTION_CLOSED/.test(e?.code ?? "") || (typeof e?.errno === "string" && LOST_STATES.test(e.errno));
}

// What a pooler must pass through: the startup parameters a2a sets (lib/pg/engine.ts).
const TRACKED = "track_extra_parameters = search_path, idle_in_transaction_session_timeout, lock_timeout";

// A failure of the server or the connection, worded for what it is; `doing` says what a2a was
// doing ("reading slot x"). The client's message may name the server's words but never holds
// the password (it has none to give: Bun.SQL keeps it out of its errors). A failure that passes
// (the server unreachable, a connection lost) has data.transient: a wait under way looks again.
export function pgError(err: unknown, t: Pick<Target, "where" | "user"> & Partial<Pick<Target, "url">>, doing: string): A2AError {
  if (err instanceof A2AError) return err;
  const before = err instanceof RolledBack;
  if (err instanceof RolledBack) err = err.cause;
  const e = err as { code?: string; errno?: string; message?: string };
  const code = e?.code ?? "";
  const state = typeof e?.errno === "string" ? e.errno : "";
  const said = String(e?.message ?? err).split("\n")[0];
  const server = t.where.replace(/\/.*/, "");
  // Full: every connection the server (max_connections, less those kept for superusers) or the
  // role (CONNECTION LIMIT) may have is taken. Passing, for a wait under way (one closes soon).
  if (state === "53300") {
    const forRole = /for role/.test(said);
    return new A2AError("EIO", `PostgreSQL at ${t.where} is full${forRole ? ` for role ${t.user}` : ""} while ${doing} (${said}): every live a2a mcp session holds two connections (its statements and its LISTEN) and every command one while it runs; ${forRole ? `raise the role's limit (ALTER ROLE ${t.user} CONNECTION LIMIT n) or end sessions of it` : "raise max_connections on the server (postgresql.conf, then a restart) or end sessions"}; a pooler can carry commands in transaction mode, never a session's waits (LISTEN needs session mode); a2a doctor shows connections used and free`, {
      cause: err, data: { where: t.where, code, sqlstate: state, transient: true },
    });
  }
  if (/CONNECTION_(REFUSED|FAILED|TIMEOUT)|ECONNREFUSED|ETIMEDOUT|ENOTFOUND/.test(code) || state === "57P03") {
    return new A2AError("EIO", text`cannot reach PostgreSQL at ${t.where} while ${doing} (${said}): check that the server runs and that ${arg("dir")} or A2A_DIR names it`, {
      cause: err, data: { where: t.where, code, transient: true },
    });
  }
  // The server's certificate, checked (sslmode verify-ca or verify-full) against sslrootcert,
  // or the client's default roots when the URL names none: the client's codes are OpenSSL's
  // (UNABLE_TO_VERIFY_LEAF_SIGNATURE, ..._SELF_SIGNED_..., CERT_HAS_EXPIRED, ERR_TLS_CERT_ALTNAME_INVALID).
  if (/ALTNAME/.test(code)) {
    return new A2AError("EIO", `the certificate of PostgreSQL at ${t.where} is not for the host ${t.where.replace(/:\d+\/.*$/, "")} (${said}): connect by a name the certificate holds (its subjectAltName), or use sslmode=verify-ca, which checks the CA but not the name`, {
      cause: err, data: { where: t.where, code },
    });
  }
  if (/CERT|UNABLE_TO_(VERIFY|GET)|SELF_SIGNED/.test(code)) {
    const root = t.url ? new URL(t.url).searchParams.get("sslrootcert") : null;
    return new A2AError("EIO", `the certificate of PostgreSQL at ${t.where} did not verify (${said}) ${root ? `against the root certificate ${root} (sslrootcert)` : "against the system's root certificates (no sslrootcert in the URL)"}: set sslrootcert in the URL to the file of the CA that signed the server's certificate (ask the server's administrator for it)`, {
      cause: err, data: { where: t.where, code },
    });
  }
  // A root certificate file the client cannot read or load.
  if (/caFile|CA file/.test(said)) {
    const root = t.url ? new URL(t.url).searchParams.get("sslrootcert") : null;
    return new A2AError("EUSAGE", `cannot use the root certificate ${root ?? "(none named)"} that sslrootcert names for PostgreSQL at ${t.where} (${said}): give sslrootcert the path of a readable PEM file of the server's CA`, {
      cause: err, data: { where: t.where, code },
    });
  }
  if (/unsupported startup parameter: search_path/i.test(said)) {
    return new A2AError("EIO", `the server at ${server} refused the search_path with which a2a picks its schema (${said}): a pooler is in between (PgBouncer refuses it unless its track_extra_parameters, 1.20 or later, names search_path); connect a2a to PostgreSQL directly, or through PgBouncer 1.20 or later with ${TRACKED}, in session mode for waits`, {
      cause: err, data: { where: t.where, code },
    });
  }
  if (/unsupported startup parameter: (idle_in_transaction_session_timeout|lock_timeout)/i.test(said)) {
    return new A2AError("EIO", `the server at ${server} refused a setting a2a gives its connections to bound a change's turn (${said}): a pooler is in between; connect a2a to PostgreSQL directly, or through PgBouncer 1.20 or later with ${TRACKED} (or list these two in its ignore_startup_parameters), in session mode for waits`, {
      cause: err, data: { where: t.where, code },
    });
  }
  if (state === "42P05" || state === "26000") {
    return new A2AError("EIO", `PostgreSQL at ${t.where} does not keep the statements a2a prepares on its connection while ${doing} (${state}: ${said}): a pooler in transaction mode (PgBouncer's) is in between; connect a2a to PostgreSQL directly, or through the pooler in session mode`, {
      cause: err, data: { where: t.where, sqlstate: state },
    });
  }
  if (state === "55P03") {
    return new A2AError("EIO", `another writer held what a2a was changing at ${t.where} for 30 s while ${doing} (${said}): another a2a process is in the middle of changing it; try again (pg_stat_activity on the server shows who holds it)`, {
      cause: err, data: { where: t.where, sqlstate: state, transient: true },
    });
  }
  if (readOnly(err)) {
    return new A2AError("EIO", `PostgreSQL at ${t.where} accepts no writes (a standby, or read-only) while ${doing} (${said}): nothing was changed; name the primary in the store's URL, or list every server (postgres://USER@h1:5432,h2:5432/DB) and a2a writes to the one that accepts writes`, {
      cause: err, data: { where: t.where, sqlstate: state, transient: true, outcome: "none" },
    });
  }
  if (lostConnection(err)) {
    const lost = `the connection to PostgreSQL at ${server} was lost while ${doing}`;
    const data = { where: t.where, code, sqlstate: state || undefined, transient: true, lost: `${lost} (${said})` };
    return before
      ? new A2AError("EIO", `${lost}, before it took effect (${said}): nothing was changed; run it again`, { cause: err, data: { ...data, outcome: "none" } })
      : new A2AError("EIO", `${lost} (${said}): if that was a change, it may or may not have been made; look before doing it again`, { cause: err, data: { ...data, outcome: "unknown" } });
  }
  if (/TLS|SSL/.test(code)) {
    return new A2AError("EIO", `PostgreSQL at ${t.where} refused the encrypted connection asked for (${said}): enable TLS on the server, or change sslmode in the URL`, {
      cause: err, data: { where: t.where, code },
    });
  }
  if (state === "28P01" || state === "28000") {
    return new A2AError("EIO", `PostgreSQL at ${t.where} refused ${t.user} (${said}): put the password in PGPASSWORD or ~/.pgpass (never in a config file)`, {
      cause: err, data: { where: t.where, sqlstate: state },
    });
  }
  // Another role's inbox, refused by its trigger (lib/pg/mail-trust.ts owner_only) or by row-level
  // security (a2a init --print-sql --rls): no grant would help.
  if (state === "42501" && /row-level security|^the inbox of \S+ belongs to role/.test(said)) {
    return new A2AError("EDENIED", `PostgreSQL at ${t.where} keeps role ${t.user} from this while ${doing} (${said}): a role changes only the inboxes it owns and their mail; connect as the role that owns it`, {
      cause: err, data: { where: t.where, sqlstate: state },
    });
  }
  if (state === "42501") {
    return new A2AError("EDENIED", text`PostgreSQL at ${t.where} does not let role ${t.user} do this while ${doing} (${said}): ask the database's administrator to give ${t.user} the grants at the end of ${op("init", arg("printSql"))}`, {
      cause: err, data: { where: t.where, sqlstate: state },
    });
  }
  return new A2AError("EIO", text`PostgreSQL at ${t.where} failed while ${doing} (${state ? state + ": " : ""}${said}): retry; if it persists, run ${op("doctor")}`, {
    cause: err, data: { where: t.where, sqlstate: state || undefined, code: code || undefined },
  });
}
