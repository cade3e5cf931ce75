// Two throwaway clusters with streaming replication, for the failover tests: a primary and a
// standby made from it by `pg_basebackup -R`, both on 127.0.0.1 at ports of their own, run as
// the postgres OS user like ./pg.ts's cluster. Then what a failover does: `pg_ctl promote` of
// the standby, and the old primary killed (`pg_ctl -m immediate stop`, as a crash leaves it).
//
// Invariants:
// - needs what ./pg.ts's own cluster needs (root, the server binaries, no A2A_TEST_PG);
// - trust for every role over 127.0.0.1 and for replication: nothing here is about passwords;
// - `sync`: the primary's commits wait until the standby has the WAL on disk
//   (synchronous_standby_names = '*', set once the standby streams, so the set-up never waits on
//   it); the standby keeps no such setting, so once promoted it commits alone;
// - a lifeline (a shell reading a pipe this process holds) stops both servers and removes their
//   directory however this process ends, as ./pg.ts's does.
import { chmodSync, mkdtempSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { join } from "node:path";
import { psqlPath, serverBin } from "./pg";

export interface Node {
  port: number;
  data: string;
  admin(sql: string, database?: string): Promise<string>; // psql as the superuser
}

export interface ReplicaPair {
  primary: Node;
  standby: Node;
  // The store URL naming `order` of the two servers (host:port each), for database `db`.
  url(db: string, order?: ("primary" | "standby" | number)[]): string;
  createDatabase(): Promise<string>; // on the primary, replayed on the standby before it resolves
  caughtUp(): Promise<void>; // the standby has replayed all the primary has written
  promote(): Promise<void>; // the standby becomes a primary (pg_ctl promote -w)
  killPrimary(): Promise<void>; // the old primary, stopped as a crash would
  stopStandby(): Promise<void>; // a fast stop: what the primary commits meanwhile, it never gets
  startStandby(): Promise<void>; // back, with what it had (it streams again if the primary runs)
  stop(): Promise<void>;
}

export function replicaSkipReason(): string | undefined {
  if (process.env.A2A_TEST_PG) return "A2A_TEST_PG names one server: the failover tests start two clusters of their own";
  if (process.getuid?.() !== 0) return "starting PostgreSQL clusters needs root (to run initdb as the postgres user)";
  const bin = serverBin();
  if (!bin) return "no PostgreSQL server binaries under /usr/lib/postgresql/*/bin";
  if (!Bun.which("runuser")) return "runuser is missing (util-linux)";
  return undefined;
}

const HBA = `local all all trust
host all all 127.0.0.1/32 trust
local replication all trust
host replication all 127.0.0.1/32 trust
`;

export async function replicaPair(o: { sync: boolean }): Promise<ReplicaPair> {
  const bin = serverBin()!;
  const dir = mkdtempSync("/tmp/a2a-pgrep-");
  chmodSync(dir, 0o755);
  run(["chown", "postgres:", dir]);
  const p = join(dir, "p");
  const s = join(dir, "s");
  const script = `trap '' INT HUP TERM; cat >/dev/null
for d in "$2/s" "$2/p"; do runuser -u postgres -- "$1/pg_ctl" -D "$d" -m immediate -w stop >/dev/null 2>&1; done
rm -rf "$2"`;
  const lifeline = Bun.spawn(["sh", "-c", script, "sh", bin, dir], { stdin: "pipe", stdout: "ignore", stderr: "ignore" });
  lifeline.unref();
  const stop = async () => {
    lifeline.stdin.end();
    await lifeline.exited;
  };
  try {
    run(["runuser", "-u", "postgres", "--", join(bin, "initdb"), "-D", p, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"]);
    writeFileSync(join(p, "pg_hba.conf"), HBA);
    const pPort = freePort();
    writeFileSync(join(p, "postgresql.auto.conf"), `port = ${pPort}\nunix_socket_directories = '${dir}'\nlisten_addresses = '127.0.0.1'\nfsync = on\nwal_level = replica\n`);
    await pgCtl(bin, ["-D", p, "-l", join(dir, "p.log"), "-w", "-t", "60", "start"], join(dir, "p.log"));
    run(["runuser", "-u", "postgres", "--", join(bin, "pg_basebackup"), "-D", s, "-R", "-X", "stream", "-h", "127.0.0.1", "-p", String(pPort), "-U", "postgres", "--no-sync"]);
    const sPort = freePort();
    appendFileSync(join(s, "postgresql.auto.conf"), `port = ${sPort}\n`);
    await pgCtl(bin, ["-D", s, "-l", join(dir, "s.log"), "-w", "-t", "60", "start"], join(dir, "s.log"));
    const primary: Node = { port: pPort, data: p, admin: (sql, db) => psql(pPort, sql, db) };
    const standby: Node = { port: sPort, data: s, admin: (sql, db) => psql(sPort, sql, db) };
    await until(async () => (await primary.admin("select count(*) from pg_stat_replication where state = 'streaming'")).trim() === "1", "the standby to stream");
    if (o.sync) {
      await primary.admin("alter system set synchronous_standby_names = '*'");
      await primary.admin("select pg_reload_conf()");
      await until(async () => (await primary.admin("select count(*) from pg_stat_replication where sync_state = 'sync'")).trim() === "1", "the standby to be synchronous");
    }
    const caughtUp = () =>
      until(async () => {
        const lsn = (await primary.admin("select pg_current_wal_lsn()")).trim();
        return (await standby.admin(`select pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn`)).trim() === "t";
      }, "the standby to catch up");
    return {
      primary,
      standby,
      url: (db, order = ["primary", "standby"]) =>
        `postgres://postgres@${order.map((n) => `127.0.0.1:${n === "primary" ? pPort : n === "standby" ? sPort : n}`).join(",")}/${db}`,
      async createDatabase() {
        const name = `a2a_f_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
        await primary.admin(`create database ${name}`);
        await caughtUp();
        return name;
      },
      caughtUp,
      async promote() {
        await pgCtl(bin, ["-D", s, "-w", "-t", "60", "promote"], join(dir, "s.log"));
      },
      async stopStandby() {
        await pgCtl(bin, ["-D", s, "-m", "fast", "-w", "stop"], join(dir, "s.log"));
      },
      async startStandby() {
        await pgCtl(bin, ["-D", s, "-l", join(dir, "s.log"), "-w", "-t", "60", "start"], join(dir, "s.log"));
      },
      async killPrimary() {
        await pgCtl(bin, ["-D", p, "-m", "immediate", "-w", "stop"], join(dir, "p.log"));
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

async function until(cond: () => Promise<boolean>, what: string, limitMs = 60_000): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

async function pgCtl(bin: string, args: string[], log: string): Promise<void> {
  const p = Bun.spawn(["runuser", "-u", "postgres", "--", join(bin, "pg_ctl"), ...args], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [err, code] = await Promise.all([new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`pg_ctl ${args.at(-1)} failed (exit ${code}): ${err.trim()}\n${tailOf(log)}`);
}

function tailOf(path: string): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "(no log)";
  }
}

async function psql(port: number, sql: string, database = "postgres"): Promise<string> {
  const p = Bun.spawn([psqlPath()!, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database], {
    env: { ...process.env, PGCONNECT_TIMEOUT: "30" }, stdin: new Blob([sql]), stdout: "pipe", stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`psql (127.0.0.1:${port}/${database}): ${err.trim() || `exit ${code}`}`);
  return out;
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (exit ${r.exitCode}): ${r.stderr.toString().trim()}`);
}
