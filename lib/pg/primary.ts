// Which of a store's servers a2a talks to, when its URL lists several (lib/pg/hosts.ts): the
// first, in the URL's order, that accepts writes, as libpq's target_session_attrs=read-write
// picks it. Bun.SQL takes one host, so the choice is made here and the client is given it.
//
// Invariants:
// - a server answering pg_is_in_recovery() true (a standby) or transaction_read_only on is
//   never written to nor listened on: a standby refuses writes and delivers no notifications;
// - the probe runs on the connection that is kept: choosing costs one round trip, no more
//   connections than one server would;
// - a server that cannot be reached is passed over; any other failure (a password refused, a
//   certificate) is the URL's to fix and is said at once, for that server;
// - when none accepts writes, one line names each and what it was; the failure is passing
//   (data.transient): a wait under way looks again, and a failover in progress ends.

import type { SQL } from "bun";
import { A2AError, op, text } from "../core/errors";
import type { ServerReport } from "../engine/engine";
import { lostConnection, pgError, type Target } from "./connect";

export interface Chosen {
  sql: SQL;
  target: Target;
  passed?: string[]; // the servers before it, and what each was
}

// A client for one server; `onclose` (when given) is called when its connection closes.
export type MakeClient = (t: Target, onclose?: () => void) => SQL;

export const UNREACHABLE = /CONNECTION_(REFUSED|FAILED|TIMEOUT|CLOSED)|ECONNREFUSED|ETIMEDOUT|ENOTFOUND|EHOSTUNREACH|ENETUNREACH/;

function unreachable(err: unknown): boolean {
  const e = err as { code?: string; errno?: string };
  return UNREACHABLE.test(e?.code ?? "") || e?.errno === "57P03" || lostConnection(err);
}

// The client of the first of `all.candidates` that accepts writes. `onclose` is told when that
// client's connection closes (never for the ones passed over).
export async function pickPrimary(all: Target, make: MakeClient, onclose?: () => void): Promise<Chosen> {
  const seen: string[] = [];
  for (const t of all.candidates ?? [all]) {
    let kept = false;
    const sql = make(t, onclose && (() => kept && onclose()));
    try {
      const [row] = await sql`select pg_is_in_recovery() as standby, current_setting('transaction_read_only') as ro`;
      if (!row.standby && row.ro !== "on") {
        kept = true;
        return { sql, target: t, passed: seen };
      }
      seen.push(`${t.where} ${row.standby ? "is a standby (in recovery)" : "is read-only (transaction_read_only on)"}`);
    } catch (err) {
      void sql.close({ timeout: 0 }).catch(() => {});
      if (!unreachable(err)) throw pgError(err, t, "looking for the server that accepts writes");
      const e = err as { code?: string; errno?: string; message?: string };
      seen.push(`${t.where} cannot be reached (${String(e.message ?? e.code).split("\n")[0]})`);
      continue;
    }
    void sql.close({ timeout: 0 }).catch(() => {});
  }
  throw new A2AError("EIO", `no server of ${all.where} accepts writes: ${seen.join("; ")}: start the primary, or promote a standby (pg_ctl promote), or correct the hosts in the store's URL`, {
    data: { where: all.where, transient: true, servers: seen },
  });
}

// Doctor's word on a store of several servers: which one a2a writes to, and why not the ones
// before it; or, when none accepts writes, the report of a bus that cannot be used now.
export function serversCheck(all: Target, c: Chosen): ServerReport["checks"][number] {
  const passed = c.passed?.length ? `; passed over: ${c.passed.join("; ")}` : "";
  return { check: "servers", level: "ok", detail: [`writes and waits go to ${c.target.where}, the first of the ${all.candidates?.length} servers of the URL that accepts writes${passed}`] };
}

export function noServerReport(err: A2AError): ServerReport {
  return { checks: [{ check: "servers", level: "problem", detail: err.parts, fix: text`as the line says; then run ${op("doctor")} again` }], usable: false };
}
