// A real PostgreSQL for the tests and bench: one throwaway cluster per test process, a fresh
// database per test, and the faults a test needs (a fast restart, killed backends, a role that
// must give a password).
//
// Invariants:
// - At most one cluster per process, started on first use: bun test runs every file in one
//   process, and initdb plus a start costs about a second. `started` below is the one piece of
//   state, explicit on purpose (lib/ keeps none; a harness may memoise); tlsPgServer() has a
//   second cluster, with ssl on, memoised the same way (`startedTls`).
// - No server outlives the process that started it, however that process ends. `bun test` runs
//   no process.on("exit") listener (Bun 1.4.5, oven-sh/bun#8434) and a killed runner runs
//   nothing, so cleanup is a lifeline: a root shell reading a pipe this process holds the write
//   end of. When this process ends, the kernel closes the pipe, and the shell stops the server
//   (pg_ctl -m immediate) and removes its directory. The shell ignores SIGINT/HUP/TERM so a
//   Ctrl-C to the runner's process group cleans up rather than orphaning the server (pg_ctl
//   puts the postmaster in its own session, so the Ctrl-C does not reach it either).
// - The cluster lives in its own mktemp directory (0755, owned by postgres: initdb refuses
//   root, and cannot reach a 0700 root directory), listens on 127.0.0.1 only, on a port that
//   was free when asked for, with fsync on. Authentication (pg_hba.conf, fixed at init so no
//   reload has to be waited for): the superuser `postgres` by trust; every other role by
//   scram-sha-256 over TCP, so a role made by createRole() must give its password.
// - A2A_TEST_PG=postgres://USER[:PASSWORD]@HOST:PORT/DB uses that server instead and starts
//   nothing: USER must be able to create databases and roles, on PostgreSQL 14 or later;
//   restart() needs a cluster of our own and throws there.
//
// Admin statements go through psql, not Bun.SQL: Bun.SQL is what the tests examine (its
// reconnects, pool and errors), so the harness must not depend on it; a psql per statement
// holds no connection that restart() or terminateBackends() would cut or count; and psql
// ships with the server. A password of A2A_TEST_PG reaches psql as PGPASSWORD, never argv.
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";

export interface PgServer {
  url: string; // the superuser's URL, database `postgres` (no password unless A2A_TEST_PG has one)
  admin(sql: string, database?: string): Promise<string>; // psql as the superuser: its output
  cluster?: Cluster; // ours to restart and stop; absent for A2A_TEST_PG
  stop(): Promise<void>; // stops our cluster now and removes it (nothing for A2A_TEST_PG)
}

export interface Cluster {
  bin: string; // /usr/lib/postgresql/N/bin
  prefix?: string[]; // how its pg_ctl runs when it is in a network namespace (ip netns exec NS)
  dir: string; // the temp directory: data/, log, the Unix socket
  data: string;
  log: string;
  port: number;
}

const PG_LIB = "/usr/lib/postgresql";

// The newest installed server's bin directory with what a cluster needs, or undefined.
export function serverBin(): string | undefined {
  let versions: string[];
  try {
    versions = readdirSync(PG_LIB);
  } catch {
    return undefined;
  }
  const usable = versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(PG_LIB, v, "bin"))
    .filter((bin) => ["initdb", "pg_ctl", "postgres", "psql"].every((t) => existsSync(join(bin, t))));
  return usable[0];
}

// Why no server can be had here, or undefined when pgServer() will give one. Synchronous, so a
// test file can decide at load time: describe.skipIf(pgSkipReason() !== undefined).
export function pgSkipReason(): string | undefined {
  if (process.env.A2A_TEST_PG) return psqlPath() ? undefined : "A2A_TEST_PG is set but there is no psql to administer it (install postgresql-client)";
  if (process.getuid?.() !== 0) return "starting a PostgreSQL cluster needs root (to run initdb as the postgres user); or set A2A_TEST_PG=postgres://USER@HOST:PORT/DB";
  if (!serverBin()) return `no PostgreSQL server binaries under ${PG_LIB}/*/bin (install Debian's postgresql package); or set A2A_TEST_PG`;
  if (!Bun.which("runuser")) return "runuser is missing (util-linux): initdb must run as the postgres user";
  return undefined;
}

// psql: the newest installed server's, else the one on PATH.
export function psqlPath(): string | undefined {
  const bin = serverBin();
  return bin ? join(bin, "psql") : (Bun.which("psql") ?? undefined);
}

// The one server of this process (see the header), or undefined with pgSkipReason() saying why.
const started: { server?: Promise<PgServer> } = {};
export function pgServer(): Promise<PgServer | undefined> {
  if (pgSkipReason() !== undefined) return Promise.resolve(undefined);
  if (started.server) return started.server;
  const forget = () => {
    if (started.server === server) delete started.server;
  };
  const server = process.env.A2A_TEST_PG ? Promise.resolve(external(process.env.A2A_TEST_PG)) : startCluster(forget);
  started.server = server;
  server.catch(forget); // a failed start is not memoised: the next caller tries again
  return server;
}

function external(raw: string): PgServer {
  const url = new URL(raw);
  return { url: url.toString(), admin: (sql, db) => psql(url, sql, db), stop: async () => {} };
}

// ---- our own cluster ------------------------------------------------------------------------

// Where a cluster of serverIn() lives: a network namespace (`prefix` runs a command in it) and
// the address it listens on there; `clients` is the CIDR allowed in by trust.
interface Place {
  prefix: string[];
  address: string;
  clients: string;
}

// `prepare` may write files into the cluster's directory and returns extra postgresql.conf
// lines (tlsPgServer); `at` puts the cluster in a network namespace (serverIn).
async function startCluster(forget: () => void, prepare?: (cluster: { dir: string; data: string }) => string, at?: Place): Promise<PgServer> {
  const bin = serverBin()!;
  const dir = mkdtempSync("/tmp/a2a-pg-"); // not $TMPDIR: one inside a 0700 home is out of postgres's reach
  chmodSync(dir, 0o755);
  run(["chown", "postgres:", dir]);
  const lifeline = holdLifeline(bin, dir);
  const data = join(dir, "data");
  const log = join(dir, "log");
  try {
    // --no-sync: only initdb's own flush of the new files; the server runs with fsync on.
    run(["runuser", "-u", "postgres", "--", join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]);
    writeFileSync(join(data, "pg_hba.conf"), at ? `${HBA}host all all ${at.clients} trust\n` : HBA);
    const port = at ? await startIn(at, bin, dir, data, log) : await startOnFreePort(bin, dir, data, log, prepare?.({ dir, data }) ?? "");
    const cluster: Cluster = { bin, dir, data, log, port, ...(at ? { prefix: at.prefix } : {}) };
    const url = new URL(`postgres://postgres@${at?.address ?? "127.0.0.1"}:${port}/postgres`);
    // A cluster in a namespace is administered through its Unix socket, which any namespace reaches.
    const adminUrl = at ? new URL(`postgres://postgres@localhost:${port}/postgres?host=${dir}`) : url;
    // `stop` holds the lifeline, and `started` holds `stop`: the pipe cannot be collected (and
    // closed) while the server is in use.
    const stop = async () => {
      forget();
      lifeline.stdin.end();
      await lifeline.exited;
    };
    return { url: url.toString(), admin: (sql, db) => psql(adminUrl, sql, db), cluster, stop };
  } catch (err) {
    lifeline.stdin.end();
    await lifeline.exited;
    throw err;
  }
}

// ---- a second cluster, with TLS --------------------------------------------------------------

export interface TlsPgServer extends PgServer {
  rootCert: string; // the CA that signed the server's certificate (for 127.0.0.1 and localhost)
  otherRootCert: string; // a CA that signed nothing of the server's: verify-full with it must fail
}

// Why no TLS cluster can be had here (pgSkipReason's, or no openssl, or A2A_TEST_PG: its server's
// certificates are not ours to know), or undefined.
export function tlsSkipReason(): string | undefined {
  if (process.env.A2A_TEST_PG) return "A2A_TEST_PG names a server whose TLS set-up the tests cannot know; a TLS cluster of our own is started only without it";
  return pgSkipReason() ?? (Bun.which("openssl") ? undefined : "openssl is missing: the TLS cluster's certificates are made with it");
}

// A cluster of its own (besides pgServer()'s, which stays plain: tests of other files expect it
// unencrypted), with ssl on: a throwaway CA, a server certificate it signed, and a second CA for
// the wrong root. Plain connections are accepted too (pg_hba's host lines match both). Memoised
// per process like pgServer(), with the same lifeline.
const startedTls: { server?: Promise<TlsPgServer> } = {};
export function tlsPgServer(): Promise<TlsPgServer | undefined> {
  if (tlsSkipReason() !== undefined) return Promise.resolve(undefined);
  if (startedTls.server) return startedTls.server;
  const certs: { rootCert?: string; otherRootCert?: string } = {};
  const forget = () => {
    if (startedTls.server === server) delete startedTls.server;
  };
  const server = startCluster(forget, ({ dir }) => {
    makeCerts(dir);
    certs.rootCert = join(dir, "ca.crt");
    certs.otherRootCert = join(dir, "other-ca.crt");
    return `ssl = on\nssl_cert_file = '${join(dir, "server.crt")}'\nssl_key_file = '${join(dir, "server.key")}'\n`;
  }).then((s) => ({ ...s, rootCert: certs.rootCert!, otherRootCert: certs.otherRootCert! }));
  startedTls.server = server;
  server.catch(forget);
  return server;
}

// EC keys (fast to make), valid for two days: the CA, the server's certificate for 127.0.0.1
// and localhost signed by it, and an unrelated CA. The server's key is postgres's, mode 0600
// (the server refuses a key others can read).
function makeCerts(dir: string): void {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  const f = (name: string) => join(dir, name);
  for (const ca of ["ca", "other-ca"]) run(["openssl", "req", "-x509", ...ec, "-keyout", f(`${ca}.key`), "-out", f(`${ca}.crt`), "-days", "2", "-subj", `/CN=a2a test ${ca}`]);
  run(["openssl", "req", ...ec, "-keyout", f("server.key"), "-out", f("server.csr"), "-subj", "/CN=localhost"]);
  writeFileSync(f("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  run(["openssl", "x509", "-req", "-in", f("server.csr"), "-CA", f("ca.crt"), "-CAkey", f("ca.key"), "-CAcreateserial", "-out", f("server.crt"), "-days", "2", "-extfile", f("server.ext")]);
  run(["chown", "postgres:", f("server.key"), f("server.crt")]);
  chmodSync(f("server.key"), 0o600);
}

const HBA = `# a2a test cluster (tests/harness/pg.ts): the superuser by trust, every other role by password
local all all trust
host all postgres 127.0.0.1/32 trust
host all all 127.0.0.1/32 scram-sha-256
`;

// The cleanup that runs however this process ends (see the header). Started before initdb, so
// a failed init is cleaned up too. Unref'd: it must not keep this process alive.
function holdLifeline(bin: string, dir: string): Subprocess<"pipe", "ignore", "ignore"> {
  const script = `trap '' INT HUP TERM; cat >/dev/null
runuser -u postgres -- "$1/pg_ctl" -D "$2/data" -m immediate -w stop >/dev/null 2>&1
rm -rf "$2"`;
  const p = Bun.spawn(["sh", "-c", script, "sh", bin, dir], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  p.unref();
  return p;
}

// A port the kernel says is free now; another process may take it before the postmaster binds
// it, so a failed start is retried on a new port.
async function startOnFreePort(bin: string, dir: string, data: string, log: string, extraConf = ""): Promise<number> {
  let last = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = probe.port;
    probe.stop(true);
    // In postgresql.auto.conf rather than on pg_ctl's command line, so a test that stops the
    // server and starts it again (`pg_ctl start`, no options) gets the same one back.
    writeFileSync(join(data, "postgresql.auto.conf"), `port = ${port}\nunix_socket_directories = '${dir}'\nlisten_addresses = '127.0.0.1'\nfsync = on\n${extraConf}`);
    const code = await pgCtl(bin, ["-D", data, "-l", log, "-w", "-t", "60", "start"]);
    if (code === 0) return port;
    last = tail(log);
    if (!/could not bind|Address already in use/i.test(last)) break;
  }
  throw new Error(`PostgreSQL did not start; the end of its log:\n${last}`);
}

// A cluster of its own in network namespace `at.prefix`, listening on `at.address`:5432, the
// addresses of `at.clients` let in by trust: a server on another "machine" (tests/harness/netns.ts).
// Not the process's one server: the caller stops it (stop()); a lifeline stops it otherwise.
export function serverIn(at: Place): Promise<PgServer> {
  if (pgSkipReason() !== undefined || process.env.A2A_TEST_PG) return Promise.reject(new Error("serverIn() needs a cluster this harness starts (root, PostgreSQL installed, no A2A_TEST_PG)"));
  return startCluster(() => {}, undefined, at);
}

async function startIn(at: Place, bin: string, dir: string, data: string, log: string): Promise<number> {
  writeFileSync(join(data, "postgresql.auto.conf"), `port = 5432\nunix_socket_directories = '${dir}'\nlisten_addresses = '${at.address}'\nfsync = on\n`);
  const code = await pgCtl(bin, ["-D", data, "-l", log, "-w", "-t", "60", "start"], at.prefix);
  if (code !== 0) throw new Error(`PostgreSQL did not start in its namespace; the end of its log:\n${tail(log)}`);
  return 5432;
}

// Restarts our cluster as `pg_ctl -m fast restart` does: every session is cut, the server is
// back (accepting connections) when this resolves. "immediate": as a crash leaves it, no
// checkpoint and nothing flushed at the stop; the start replays the WAL on disk.
export async function restart(server: PgServer, mode: "fast" | "immediate" = "fast"): Promise<void> {
  const c = own(server, "restart()");
  const code = await pgCtl(c.bin, ["-D", c.data, "-l", c.log, "-w", "-t", "60", "-m", mode, "restart"], c.prefix);
  if (code !== 0) throw new Error(`pg_ctl restart failed (exit ${code}); the end of its log:\n${tail(c.log)}`);
}

function own(server: PgServer, what: string): Cluster {
  if (!server.cluster) throw new Error(`${what} needs a cluster this harness started, not the server of A2A_TEST_PG`);
  return server.cluster;
}

async function pgCtl(bin: string, args: string[], prefix: string[] = []): Promise<number> {
  const p = Bun.spawn([...prefix, "runuser", "-u", "postgres", "--", join(bin, "pg_ctl"), ...args], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  return await p.exited;
}

// ---- databases, roles, backends -------------------------------------------------------------

export interface Database {
  name: string;
  url: string; // the superuser's URL for this database
  drop(): Promise<void>; // removes it, cutting whoever is still connected
}

// A new, empty database with a unique name, so tests never see each other's rows.
export async function freshDatabase(server: PgServer): Promise<Database> {
  const name = `a2a_t_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  await server.admin(`create database ${name}`);
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: async () => void (await server.admin(`drop database if exists ${name} with (force)`)),
  };
}

// A login role that must authenticate with `password` (scram-sha-256; see HBA), allowed to
// connect to every database. The password reaches psql on its stdin, never its argv.
export async function createRole(server: PgServer, name: string, password: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`role name ${JSON.stringify(name)}: use lower-case letters, digits and _`);
  await server.admin(`create role ${name} login password ${literal(password)}`);
}

// Terminates every client backend connected to `database` but psql's own, waiting (up to 10 s
// each, PostgreSQL 14+) until each is gone. Returns how many were terminated.
export async function terminateBackends(server: PgServer, database: string): Promise<number> {
  const out = await server.admin(
    `select count(*) filter (where pg_terminate_backend(pid, 10000)) from pg_stat_activity
     where datname = ${literal(database)} and pid <> pg_backend_pid() and backend_type = 'client backend'`,
  );
  return Number(out.trim());
}

// `url` with `user` (and `password`, percent-encoded) in place of the superuser.
export function urlAs(url: string, user: string, password?: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password === undefined ? "" : encodeURIComponent(password);
  return u.toString();
}

// psql as whoever `url` names (its password, if any, reaching psql as PGPASSWORD): `sql`'s
// output, or a rejection with psql's error. For what a client may do by hand, bypassing a2a.
export const psqlAs = (url: string, sql: string): Promise<string> => psql(new URL(url), sql);

// A string as an SQL literal (standard_conforming_strings, on by default since 9.1: a quote is
// the only character to double).
export const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`;

// Runs `sql` through psql (on its stdin), stopping at the first error; resolves with the
// unaligned, header-less output.
async function psql(url: URL, sql: string, database?: string): Promise<string> {
  const target = new URL(url);
  const password = decodeURIComponent(target.password);
  target.password = "";
  if (database) target.pathname = `/${database}`;
  const args = [psqlPath()!, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", target.toString()];
  const env: Record<string, string | undefined> = { ...process.env, PGCONNECT_TIMEOUT: "30" };
  if (password) env.PGPASSWORD = password;
  const p = Bun.spawn(args, { env, stdin: new Blob([sql]), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`psql (${target.host}${target.pathname}): ${err.trim() || `exit ${code}`}`);
  return out;
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
}

function tail(path: string): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

// ---- what a test waits on, and faults it arranges (tests/e2e/pg-faults.test.ts) ----------------

// Polls `cond` (a psql or two) until it holds; throws after `limitMs`. For conditions only the
// server can tell (a LISTEN in place, a backend waiting on a lock), which no event announces.
export async function untilServer(cond: () => Promise<boolean>, what: string, limitMs = 30_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

// How many connections to `database` (of `o.role`, when given) have a LISTEN in place (on a
// channel whose name holds `o.channel`, when given): their last statement a LISTEN, and idle
// after it. A change committed from then on notifies them.
export async function listeners(server: PgServer, database: string, o: { role?: string; channel?: string } = {}): Promise<number> {
  const out = await server.admin(
    `select count(*) from pg_stat_activity where datname = ${literal(database)} and state = 'idle' and query ilike 'listen %'` +
      (o.role ? ` and usename = ${literal(o.role)}` : "") + (o.channel ? ` and strpos(query, ${literal(o.channel)}) > 0` : ""),
  );
  return Number(out.trim());
}

// The pids of the backends of `database` waiting for a lock (a statement the test holds up).
export async function lockedBackends(server: PgServer, database: string): Promise<number[]> {
  const out = await server.admin(`select pid from pg_stat_activity where datname = ${literal(database)} and wait_event_type = 'Lock' order by pid`);
  return out.split("\n").filter(Boolean).map(Number);
}

// The pids of the backends of `database` waiting in COMMIT for a standby (see holdCommits).
export async function committingBackends(server: PgServer, database: string): Promise<number[]> {
  const out = await server.admin(`select pid from pg_stat_activity where datname = ${literal(database)} and wait_event = 'SyncRep' order by pid`);
  return out.split("\n").filter(Boolean).map(Number);
}

// Terminates backend `pid`, waiting (up to 10 s) until it is gone.
export async function terminate(server: PgServer, pid: number): Promise<void> {
  await server.admin(`select pg_terminate_backend(${Number(pid)}, 10000)`);
}

// A psql session of its own holding `sql` (say, `lock table t in exclusive mode`) in an open
// transaction, until release() rolls it back. Resolves once the statement has run.
export async function holdInTransaction(server: PgServer, database: string, sql: string): Promise<{ release(): Promise<void> }> {
  const target = new URL(server.url);
  target.password = "";
  target.pathname = `/${database}`;
  const env: Record<string, string | undefined> = { ...process.env, PGCONNECT_TIMEOUT: "30" };
  const password = decodeURIComponent(new URL(server.url).password);
  if (password) env.PGPASSWORD = password;
  const p = Bun.spawn([psqlPath()!, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", target.toString()], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  p.stdin.write(`begin;\n${sql};\nselect 'held';\n`);
  p.stdin.flush();
  const reader = p.stdout.getReader();
  let seen = "";
  while (!seen.includes("held")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`psql could not hold ${sql}: ${await new Response(p.stderr).text()}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    release: async () => {
      p.stdin.write("rollback;\n");
      p.stdin.end();
      await p.exited;
    },
  };
}

// Makes every COMMIT that wrote something wait, after it has committed locally, for a
// synchronous standby that does not exist (synchronous_standby_names), or (on: false) stops
// that. A backend terminated while it waits has committed, but its client is never told: the
// one way to cut a connection while its COMMIT is on its way, deterministically. Resolves once
// a new session sees the setting. Needs a cluster of our own (it changes the server's settings).
export async function holdCommits(server: PgServer, on: boolean): Promise<void> {
  own(server, "holdCommits()");
  await server.admin(on ? "alter system set synchronous_standby_names = 'a2a_test_nobody'" : "alter system reset synchronous_standby_names");
  await server.admin("select pg_reload_conf()");
  const want = on ? "a2a_test_nobody" : "";
  await untilServer(async () => (await server.admin("show synchronous_standby_names")).trim() === want, "the server to reload its settings");
}

// ---- a pooler in between ---------------------------------------------------------------------

const PGBOUNCER = "/usr/sbin/pgbouncer";

// Why no PgBouncer can be started here, or undefined.
export function pgbouncerSkipReason(): string | undefined {
  if (!existsSync(PGBOUNCER)) return `no ${PGBOUNCER} (install Debian's pgbouncer package)`;
  return pgSkipReason();
}

export interface Pooler {
  url: string; // the pooler's URL for `database`, as the superuser
  stop(): Promise<void>;
}

// A throwaway PgBouncer in front of `server`'s `database` (on a free port of 127.0.0.1, its own
// config in a temp directory, run as the postgres user: it refuses root), in `mode`, with one
// server connection (so what one client leaves on it, the next one meets). `ignoreSearchPath`:
// let clients in that set search_path at startup, which PgBouncer before 1.20 refuses (it
// ignores it then). A lifeline stops it however this process ends, as the cluster's does.
export async function pgbouncer(server: PgServer, database: string, o: { mode: "session" | "transaction"; ignoreSearchPath?: boolean }): Promise<Pooler> {
  const dir = mkdtempSync("/tmp/a2a-pgbouncer-");
  chmodSync(dir, 0o755);
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  const backend = new URL(server.url);
  writeFileSync(join(dir, "pgbouncer.ini"), `[databases]
${database} = host=${backend.hostname} port=${backend.port} dbname=${database}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/users.txt
pool_mode = ${o.mode}
default_pool_size = 1
logfile = ${dir}/log
ignore_startup_parameters = extra_float_digits${o.ignoreSearchPath ? ", search_path, idle_in_transaction_session_timeout, lock_timeout" : ""}
`);
  writeFileSync(join(dir, "users.txt"), `"postgres" ""\n`);
  run(["chown", "-R", "postgres:", dir]);
  const script = `trap '' INT HUP TERM
runuser -u postgres -- "$1" "$2/pgbouncer.ini" & pid=$!
cat >/dev/null
kill "$pid"; wait "$pid"; rm -rf "$2"`;
  const lifeline = Bun.spawn(["sh", "-c", script, "sh", PGBOUNCER, dir], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  lifeline.unref();
  const stop = async () => {
    lifeline.stdin.end();
    await lifeline.exited;
  };
  const log = join(dir, "log");
  const end = Date.now() + 30_000;
  while (!(existsSync(log) && readFileSync(log, "utf8").includes("process up"))) {
    if (Date.now() > end || lifeline.exitCode !== null) {
      const said = existsSync(log) ? tail(log) : "(no log)";
      await stop();
      throw new Error(`pgbouncer did not start; its log:\n${said}`);
    }
    await Bun.sleep(10);
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/${database}`, stop };
}
