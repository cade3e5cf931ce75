// The leases a crew's supervisor holds (lib/crew/supervisor.ts): its own, crewhost.CREW.HOST,
// and one crewworker.WORKER per worker, taken all at once, so that one host runs one supervisor
// of a crew and the bus one worker of a name, whatever machine it is on.
//
// Invariants:
// - nothing is taken unless everything is (takeLeases is all or nothing);
// - a worker's lease held by a supervisor that is gone (it holds no crewhost lease any more: it
//   was killed, and its own lease has run out) is waited for, once, until it runs out too: its
//   leases were renewed together, a few milliseconds apart, so that wait is short;
// - a refusal names who holds what: this host's supervisor of the crew, or where the worker runs.

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { isoTime, nowSec } from "../core/time";
import { listLeases, takeLeases } from "../leases/lease";
import type { CrewSpec } from "./file";
import { leaseName, PREFIX as SUPERVISOR_LEASE, workerLeaseName } from "./names";
import { crewStatus, listCrews } from "./status";

// Takes the crew's leases on this host as `holder`; the names taken, or ECONFLICT.
export async function takeCrewLeases(store: Store, spec: CrewSpec, holder: string, signal?: AbortSignal): Promise<string[]> {
  const lease = leaseName(spec.name, store.host);
  const leases = [lease, ...spec.workers.map((w) => workerLeaseName(w.name))];
  for (let tries = 0; ; tries++) {
    try {
      await takeLeases(store, leases, { as: holder, ttlSec: spec.leaseSec });
      return leases;
    } catch (e) {
      if (!(e instanceof A2AError) || e.code !== "ECONFLICT") throw e;
      const wait = tries === 0 ? await lapsing(store, leases, holder) : undefined;
      if (wait === undefined || !(await pause(wait, signal))) return refuseTaken(store, spec, lease, holder);
    }
  }
}

// How long (ms) until the leases of `names` others hold run out, when every one of them is held
// by a supervisor that is gone; else undefined.
async function lapsing(store: Store, names: string[], holder: string): Promise<number | undefined> {
  const others = (await listLeases(store, names)).filter((l) => l.holder !== holder);
  if (!others.length || others.some((l) => l.name.startsWith(SUPERVISOR_LEASE))) return undefined;
  const holders = new Set(others.map((l) => l.holder));
  const live = (await listLeases(store)).some((l) => l.name.startsWith(SUPERVISOR_LEASE) && holders.has(l.holder));
  return live ? undefined : Math.max(0, ...others.map((l) => l.expires_at - nowSec())) * 1000 + 50;
}

function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const t = setTimeout(() => resolve(true), ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), resolve(false)), { once: true });
  });
}

// A lease of the crew's held by another: this host's supervisor of the crew, or another's (any
// crew, any host) running a worker of the same name. ECONFLICT naming which.
export async function refuseTaken(store: Store, spec: CrewSpec, lease: string, holder: string): Promise<never> {
  const held = await listLeases(store, [lease]);
  if (held.length && held[0].holder !== holder) {
    const s = (await crewStatus(store, spec.name, store.host).catch(() => undefined)) ?? { pid: 0, host: null };
    const who = s.pid ? `its supervisor, pid ${s.pid} on ${s.host}, holds ${lease}` : `${held[0].holder} holds ${lease}`;
    throw new A2AError("ECONFLICT", text`crew ${spec.name} is already up on this host (${who} until ${isoTime(held[0].expires_at)}): stop it with ${op("crew down", spec.name)} (or Ctrl-C where it runs); a supervisor that died is taken over once its lease runs out`, {
      data: { crew: spec.name, holder: held[0].holder, host: s.host ?? null, pid: s.pid ?? null },
    });
  }
  const names = new Map(spec.workers.map((w) => [workerLeaseName(w.name), w.name]));
  const taken = (await listLeases(store, [...names.keys()])).find((l) => l.holder !== holder);
  const worker = taken ? names.get(taken.name)! : spec.workers[0].name;
  const other = taken ? (await listCrews(store)).find((c) => c.state === "up" && c.workers.some((w) => w.name === worker)) : undefined;
  const where = other ? `crew ${other.crew} on ${other.host} (supervisor pid ${other.pid})` : `${taken?.holder ?? "another supervisor"}`;
  throw new A2AError("ECONFLICT", text`worker ${worker} already runs under ${where}: a worker's name is one session on the bus, so each machine's workers need names of their own (a crew file per machine, or other names in this one); nothing was started`, {
    data: { crew: spec.name, worker, holder: taken?.holder ?? null, host: other?.host ?? null },
  });
}

