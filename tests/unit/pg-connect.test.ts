// lib/pg/connect.ts: what a PostgreSQL URL names, where its password comes from, and how a
// failure is worded: never with the password, always with the server (host:port/database).
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../lib/engine/open";
import { A2AError } from "../../lib/core/errors";
import { pgError, targetOf } from "../../lib/pg/connect";
import { tempDir } from "../harness/run";

const storeOf = (url: string, env: Record<string, string> = {}) => openStore({ dir: url, env });

describe("targetOf", () => {
  test("host, port, database, user and the schema parameter, taken out of the client's URL", () => {
    const t = targetOf(storeOf("postgres://alice@db.example:6543/team?schema=crew_a&sslmode=require"), {});
    expect(t).toMatchObject({ host: "db.example", port: 6543, database: "team", user: "alice", schema: "crew_a", where: "db.example:6543/team" });
    expect(t.url).not.toContain("schema=");
    expect(t.url).toContain("sslmode=require");
    expect(targetOf(storeOf("postgresql://bob@h/x"), {})).toMatchObject({ port: 5432, schema: "a2a", database: "x" });
  });

  test("several hosts (URL or PGHOST/PGPORT lists): one target each, in order, with its own password line; one host is left as it was", () => {
    using d = tempDir();
    const file = join(d.path, "pgpass");
    writeFileSync(file, ["h2:5433:team:alice:second", "*:*:*:*:other", ""].join("\n"));
    const t = targetOf(openStore({ dir: "postgres://alice:pw@h1,h2:5433/team?target_session_attrs=read-write", env: {} }), {});
    expect(t.where).toBe("h1:5432,h2:5433/team");
    expect(t.candidates!.map((c) => c.where)).toEqual(["h1:5432/team", "h2:5433/team"]);
    expect(t.candidates!.map((c) => new URL(c.url).host)).toEqual(["h1:5432", "h2:5433"]);
    expect(t.url).not.toContain("target_session_attrs");
    const f = targetOf(openStore({ dir: "postgres://alice@h1,h2:5433/team", env: { PGPASSFILE: file } }), {});
    expect(f.candidates!.map((c) => c.password)).toEqual(["other", "second"]);
    const e = targetOf(storeOf("postgres:///team"), { PGHOST: "a,b", PGPORT: "1,2", PGUSER: "u" });
    expect(e.candidates!.map((c) => c.where)).toEqual(["a:1/team", "b:2/team"]);
    expect(targetOf(storeOf("postgres:///team"), { PGHOST: "a,b", PGPORT: "7" }).candidates!.map((c) => c.port)).toEqual([7, 7]);
    expect(() => targetOf(storeOf("postgres:///team"), { PGHOST: "a,b", PGPORT: "1,2,3" })).toThrow("PGPORT lists 3 ports for the 2 hosts of PGHOST");
    const one = targetOf(storeOf("postgres://alice@h1/team"), {});
    expect(one.candidates).toBeUndefined();
    expect(one.url).toBe("postgres://alice@h1/team");
  });

  test("a schema that is no plain identifier is refused with the fix, nothing connected", () => {
    for (const bad of ["Team", "a-b", "1x", "x".repeat(64), "a;drop"]) {
      let err: unknown;
      try {
        targetOf(storeOf(`postgres://u@h/d?schema=${encodeURIComponent(bad)}`), {});
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(A2AError);
      expect((err as A2AError).code).toBe("EUSAGE");
      expect((err as A2AError).message).toContain("lowercase letters, digits and _");
    }
  });

  test("the password file is read as libpq reads it, only when neither the URL nor PGPASSWORD gives one", () => {
    using d = tempDir();
    const file = join(d.path, "pgpass");
    writeFileSync(file, ["# comment", "other:5432:*:alice:nope", "db.example:6543:team:alice:s3cr\\:et", "*:*:*:*:fallback", ""].join("\n"));
    const store = openStore({ dir: "postgres://alice@db.example:6543/team", env: { PGPASSFILE: file } });
    expect(targetOf(store, {}).password).toBe("s3cr:et");
    expect(targetOf(store, { PGPASSWORD: "x" }).password).toBeUndefined(); // the client reads PGPASSWORD itself
    expect(targetOf(openStore({ dir: "postgres://alice:inurl@db.example:6543/team", env: { PGPASSFILE: file } }), {}).password).toBeUndefined();
    expect(targetOf(openStore({ dir: "postgres://carol@elsewhere/x", env: { PGPASSFILE: file } }), {}).password).toBe("fallback");
    expect(targetOf(openStore({ dir: "postgres://carol@elsewhere/x", env: { PGPASSFILE: join(d.path, "none") } }), {}).password).toBeUndefined();
  });

  test("the connect timeout: the URL's connect_timeout, else PGCONNECT_TIMEOUT, else 10 s; zero or less is none", () => {
    expect(targetOf(storeOf("postgres://u@h/d"), {}).connectTimeoutSec).toBe(10);
    expect(targetOf(storeOf("postgres://u@h/d"), { PGCONNECT_TIMEOUT: "3" }).connectTimeoutSec).toBe(3);
    expect(targetOf(storeOf("postgres://u@h/d?connect_timeout=7"), { PGCONNECT_TIMEOUT: "3" }).connectTimeoutSec).toBe(7);
    expect(targetOf(storeOf("postgres://u@h/d?connect_timeout=-1"), {}).connectTimeoutSec).toBe(0);
    expect(targetOf(storeOf("postgres://u@h/d"), { PGCONNECT_TIMEOUT: "soon" }).connectTimeoutSec).toBe(10);
  });

  test("the store's location as shown has no password", () => {
    const store = storeOf("postgres://alice:p%40ss%2Fw@db.example/team");
    expect(store.root).toBe("postgres://alice@db.example/team");
    expect(store.url).toContain("p%40ss");
  });
});

describe("pgError", () => {
  const t = { where: "db.example:5432/team", user: "alice" };
  test("a refused connection names the server and the fix; a bad password names where a password goes", () => {
    const refused = pgError(Object.assign(new Error("Failed to connect"), { code: "ERR_POSTGRES_CONNECTION_REFUSED" }), t, "reading slot x");
    expect(refused.code).toBe("EIO");
    expect(refused.message).toBe("cannot reach PostgreSQL at db.example:5432/team while reading slot x (Failed to connect): check that the server runs and that dir or A2A_DIR names it");
    const auth = pgError(Object.assign(new Error('password authentication failed for user "alice"'), { code: "ERR_POSTGRES_SERVER_ERROR", errno: "28P01" }), t, "reading slot x");
    expect(auth.message).toContain("put the password in PGPASSWORD or ~/.pgpass");
    const grant = pgError(Object.assign(new Error("permission denied for table slots"), { errno: "42501" }), t, "changing slot x");
    expect(grant.code).toBe("EDENIED");
  });

  test("a connection lost under a lone statement: may or may not have been made, and the wait under way goes on (transient)", () => {
    const lost = pgError(Object.assign(new Error("terminating connection due to administrator command"), { errno: "57P01" }), t, "claiming message m");
    expect(lost.message).toBe("the connection to PostgreSQL at db.example:5432 was lost while claiming message m (terminating connection due to administrator command): if that was a change, it may or may not have been made; look before doing it again");
    expect(lost.data).toMatchObject({ outcome: "unknown", transient: true });
    const protocol = pgError(Object.assign(new Error("unsupported startup parameter: search_path"), { errno: "08P01" }), t, "listing slots");
    expect(protocol.message).toContain("refused the search_path with which a2a picks its schema");
    expect(protocol.data.outcome).toBeUndefined();
  });

  test("a change that waited its turn too long says another writer holds it; a session ended for idling in a change is a lost connection", () => {
    const turn = pgError(Object.assign(new Error("canceling statement due to lock timeout"), { errno: "55P03" }), t, "changing slot x");
    expect(turn.message).toBe("another writer held what a2a was changing at db.example:5432/team for 30 s while changing slot x (canceling statement due to lock timeout): another a2a process is in the middle of changing it; try again (pg_stat_activity on the server shows who holds it)");
    expect({ code: turn.code, transient: turn.data.transient }).toEqual({ code: "EIO", transient: true });
    const pooled = pgError(Object.assign(new Error("unsupported startup parameter: lock_timeout"), { errno: "08P01" }), t, "listing slots");
    expect(pooled.message).toBe("the server at db.example:5432 refused a setting a2a gives its connections to bound a change's turn (unsupported startup parameter: lock_timeout): a pooler is in between; connect a2a to PostgreSQL directly, or through PgBouncer 1.20 or later with track_extra_parameters = search_path, idle_in_transaction_session_timeout, lock_timeout (or list these two in its ignore_startup_parameters), in session mode for waits");
    const idled = pgError(Object.assign(new Error("terminating connection due to idle-in-transaction timeout"), { errno: "25P03" }), t, "changing slot x");
    expect(idled.data).toMatchObject({ outcome: "unknown", transient: true });
  });
});
