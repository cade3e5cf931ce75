// What a crew shows of itself, kept on the bus so any terminal (on PostgreSQL any machine) reads
// it. A crew runs one supervisor per host (each machine's own workers), each with its status slot
// `crewhost.CREW.HOST` (its JSON: the supervisor's host and pid, each worker's state, task and
// counts), published at every change; whether that supervisor is still there is its lease of the
// same name (lib/crew/supervisor.ts), so a killed one's part of the crew reads as gone. And the
// control: `crew stop` and `crew down` are mail to the supervisor's own name, which wakes its
// wait at once on every engine.

import type { Store } from "../core/config";
import { A2AError, op, text } from "../core/errors";
import { pidAlive } from "../core/holder";
import type { Outcome } from "../core/outcome";
import { waitUntil } from "../core/watch";
import { listLeases } from "../leases/lease";
import { sendMessage } from "../mail/send";
import { readChunks } from "../slots/chunks";
import { getSlot } from "../slots/read";
import { listSlots, publishSlot } from "../slots/slot";
import { logName } from "./log";
import { controlName, leaseName, PREFIX, statusName } from "./names";

export { controlName, leaseName, statusName, supervisorName, workerLeaseName } from "./names";
import type { Usage } from "./usage";

export type WorkerState = "starting" | "waiting" | "working" | "backoff" | "stopped" | "gave-up" | "gone";

export interface WorkerStatus {
  name: string;
  agent: string;
  queues: string[];
  state: WorkerState;
  since: number;
  task: { queue: string; id: string; attempt: number } | null;
  done: number; // tasks it finished
  failed: number; // attempts that failed
  failures: number; // failed attempts in a row (restarts: the bound)
  reason: string | null; // the last failed attempt's, or why it stopped
  restarts?: number; // times `crew restart` (or the dashboard) ended its run for it to start again
  usage?: Usage | null; // tokens and cost of its runs so far, where its agent reports them (lib/crew/usage.ts)
  proc?: { pid: number; start: string | null } | null; // the run's process (group leader), while it runs
  last?: string; // the last line of its log (added by the reader)
}

export interface CrewStatus {
  a2a_crew: 1;
  crew: string;
  file: string;
  host: string;
  pid: number;
  started_at: number;
  updated_at: number;
  state: "up" | "stopped" | "gone"; // gone: the reader found no live lease behind "up"
  lease_sec: number;
  workers: WorkerStatus[];
}

const KEEP_SEC = 7 * 86400;

export const publishStatus = (store: Store, s: CrewStatus) => publishSlot(store, statusName(s.crew, s.host), JSON.stringify(s), { ttlSec: KEEP_SEC });

function statusOf(result: string | null): CrewStatus | undefined {
  try {
    const v = JSON.parse(result ?? "");
    return v && v.a2a_crew === 1 && Array.isArray(v.workers) ? (v as CrewStatus) : undefined;
  } catch {
    return undefined;
  }
}

// The status of `crew` as it stands: "up" only while its supervisor holds the crew's lease.
async function live(store: Store, s: CrewStatus, held: Set<string>, lastLines: boolean): Promise<CrewStatus> {
  // Gone: its lease ran out, or (on this host, where a pid says it at once) its process is.
  const gone = s.state === "up" && (!held.has(leaseName(s.crew, s.host)) || (s.host === store.host && !pidAlive(s.pid)));
  const workers = await Promise.all(s.workers.map(async (w) => {
    const v: WorkerStatus = gone && w.state !== "stopped" && w.state !== "gave-up" ? { ...w, state: "gone" } : { ...w };
    if (lastLines) v.last = await lastLine(store, logName(s.crew, w.name));
    return v;
  }));
  return { ...s, state: gone ? "gone" : s.state, workers };
}

async function lastLine(store: Store, slot: string): Promise<string> {
  const rec = await getSlot(store, slot).catch(() => undefined);
  if (!rec) return "";
  const text = rec.state === "done" && rec.result ? rec.result : rec.chunks ? (await readChunks(store, slot, rec.chunks - 1, rec.chunks).catch(() => [""])).join("") : "";
  return text.trimEnd().split("\n").pop() ?? "";
}

// The status of crew `name`'s supervisor on `host` as it stands (no last lines), or undefined.
export async function crewStatus(store: Store, name: string, host: string): Promise<CrewStatus | undefined> {
  const s = statusOf((await getSlot(store, statusName(name, host)))?.result ?? null);
  if (!s) return undefined;
  const held = new Set((await listLeases(store, [leaseName(name, host)])).map((l) => l.name));
  return live(store, s, held, false);
}

// Every crew's supervisor the bus knows of (or crew `only`'s), one per crew and host, by crew
// then host.
export async function listCrews(store: Store, only?: string): Promise<CrewStatus[]> {
  const slots = (await listSlots(store)).records.filter((r) => r.name.startsWith(only === undefined ? PREFIX : `${PREFIX}${only}.`));
  const found = slots.flatMap((r) => {
    const s = statusOf(r.result);
    return s && (only === undefined || s.crew === only) && r.name === statusName(s.crew, s.host) ? [s] : [];
  });
  if (!found.length) return [];
  const held = new Set((await listLeases(store, found.map((s) => leaseName(s.crew, s.host)))).map((l) => l.name));
  const key = (c: CrewStatus) => `${c.crew}\0${c.host}`;
  return (await Promise.all(found.map((s) => live(store, s, held, true)))).sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

// The crew worker `name` belongs to (the supervisor running it, else the latest to), with
// where its log is.
export async function findWorker(store: Store, name: string): Promise<{ crew: CrewStatus; worker: WorkerStatus; log: string }> {
  const rank = (c: CrewStatus) => (c.state === "up" && !ENDED.includes(c.workers.find((w) => w.name === name)!.state) ? 1 : 0);
  const crews = (await listCrews(store)).filter((c) => c.workers.some((w) => w.name === name)).sort((a, b) => rank(b) - rank(a) || b.updated_at - a.updated_at);
  if (!crews.length) {
    throw new A2AError("ENOTFOUND", text`no crew has a worker named ${name}: see the crews and their workers with ${op("crew")}`, { data: { worker: name } });
  }
  const crew = crews[0];
  return { crew, worker: crew.workers.find((w) => w.name === name)!, log: logName(crew.crew, name) };
}

// The supervisors that are up of `crew` (or of the only crew up), on `host` or every host; else
// ENOTFOUND.
export async function upCrews(store: Store, crew: string | undefined, host?: string): Promise<CrewStatus[]> {
  const up = (await listCrews(store, crew)).filter((c) => c.state === "up");
  const names = [...new Set(up.map((c) => c.crew))];
  if (crew === undefined && names.length > 1) throw new A2AError("EUSAGE", `${names.length} crews are up (${names.join(", ")}): name the one to stop`, { data: { crews: names } });
  const on = up.filter((c) => host === undefined || c.host === host);
  if (on.length) return on;
  const where = host === undefined ? "" : ` on ${host}`;
  if (crew !== undefined || names.length) {
    const c = crew ?? names[0];
    throw new A2AError("ENOTFOUND", text`crew ${c} is not up${where}: start it with ${op("crew up", "FILE")}; ${op("crew")} lists the crews`, { data: { crew: c, host: host ?? null } });
  }
  throw new A2AError("ENOTFOUND", text`no crew is up: start one with ${op("crew up", "FILE")}`, { data: {} });
}

export type Control = { stop: string } | { restart: string } | { down: true };
const ENDED: WorkerState[] = ["stopped", "gave-up", "gone"];

// Asks the supervisor of a worker to stop it (or restart it: its run ended, its task given back,
// and the worker goes on), or every supervisor of `crew` (on `o.host` only, when given) to stop
// its part of the crew; waits until each has. Gives the statuses it waited on.
export async function controlCrew(store: Store, crew: string | undefined, what: Control, o: { timeoutMs?: number; signal?: AbortSignal; host?: string } = {}): Promise<Outcome<CrewStatus[] | undefined>> {
  const worker = "stop" in what ? what.stop : "restart" in what ? what.restart : undefined;
  const found = worker !== undefined ? await findWorker(store, worker) : undefined;
  const targets = found ? [found.crew] : await upCrews(store, crew, o.host);
  const verb = "restart" in what ? "restart" : "stop";
  for (const c of targets) if (c.state !== "up") throw new A2AError("ENOTFOUND", text`crew ${c.crew} is not up: nothing to ${verb}`, { data: { crew: c.crew } });
  if (found && ENDED.includes(found.worker.state)) {
    throw new A2AError("ENOTFOUND", text`worker ${found.worker.name} of crew ${found.crew.crew} is not running (${found.worker.state}): nothing to ${verb}`, { data: { crew: found.crew.crew, worker: found.worker.name, state: found.worker.state } });
  }
  // A restart is over once the worker's run it ended is no longer the one it shows.
  const before = found?.worker;
  for (const c of targets) await sendMessage(store, controlName(c.crew, c.host), controlName(c.crew, c.host), JSON.stringify(what));
  const over = async (c: CrewStatus): Promise<CrewStatus | undefined> => {
    const s = statusOf((await getSlot(store, statusName(c.crew, c.host)))?.result ?? null);
    if (!s || s.started_at !== c.started_at) return s ? { ...s } : c; // taken over, or cleared: not ours to wait for
    if (s.state === "stopped") return s;
    const w = worker !== undefined ? s.workers.find((x) => x.name === worker) : undefined;
    if ("stop" in what && ENDED.includes(w?.state ?? "gone")) return s;
    if ("restart" in what && (!w || ENDED.includes(w.state) || restarted(before!, w))) return s;
    const held = await listLeases(store, [leaseName(c.crew, c.host)]);
    return held.length ? undefined : await live(store, s, new Set(), false); // its supervisor died meanwhile
  };
  const check = async () => {
    const all = await Promise.all(targets.map(over));
    return all.every((s) => s !== undefined) ? (all as CrewStatus[]) : undefined;
  };
  const out = await waitUntil(store, { on: "slots" }, check, { timeoutMs: o.timeoutMs, signal: o.signal, recheckMs: 1000 });
  return out.kind === "done" ? out : { ...out, pending: targets.map((c) => c.crew) };
}

// The worker shows a run other than `was`'s: the one a restart ended is over.
const restarted = (was: WorkerStatus, now: WorkerStatus) => now.restarts !== was.restarts;
