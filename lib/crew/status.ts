// What a crew shows of itself, kept on the bus so any terminal (on PostgreSQL any machine) reads
// it: the status slot `crew.NAME` (its JSON: the supervisor's host and pid, each worker's state,
// task and counts), published by the supervisor at every change; whether the supervisor is still
// there is the crew's lease (lib/crew/supervisor.ts), so a killed one's crew reads as gone.
// And the control: `crew stop` and `crew down` are mail to the supervisor's own name, which
// wakes its wait at once on every engine.

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

export const statusName = (crew: string) => `crew.${crew}`;
export const leaseName = (crew: string) => `crew.${crew}`;
export const controlName = (crew: string) => `crew.${crew}`;
const KEEP_SEC = 7 * 86400;

export const publishStatus = (store: Store, s: CrewStatus) => publishSlot(store, statusName(s.crew), JSON.stringify(s), { ttlSec: KEEP_SEC });

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
  const gone = s.state === "up" && (!held.has(leaseName(s.crew)) || (s.host === store.host && !pidAlive(s.pid)));
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

// The status of crew `name` as it stands (no last lines), or undefined: no such crew.
export async function crewStatus(store: Store, name: string): Promise<CrewStatus | undefined> {
  const s = statusOf((await getSlot(store, statusName(name)))?.result ?? null);
  if (!s) return undefined;
  const held = new Set((await listLeases(store, [leaseName(name)])).map((l) => l.name));
  return live(store, s, held, false);
}

// Every crew the bus knows of (or `only`), by name.
export async function listCrews(store: Store, only?: string): Promise<CrewStatus[]> {
  const slots = (await listSlots(store)).records.filter((r) => r.name.startsWith("crew.") && (only === undefined || r.name === statusName(only)));
  const found = slots.flatMap((r) => {
    const s = statusOf(r.result);
    return s && r.name === statusName(s.crew) ? [s] : []; // a log slot (crew.NAME.WORKER) is no status
  });
  if (!found.length) return [];
  const held = new Set((await listLeases(store, found.map((s) => leaseName(s.crew)))).map((l) => l.name));
  return (await Promise.all(found.map((s) => live(store, s, held, true)))).sort((a, b) => (a.crew < b.crew ? -1 : 1));
}

// The crew worker `name` belongs to (its latest), with where its log is.
export async function findWorker(store: Store, name: string): Promise<{ crew: CrewStatus; worker: WorkerStatus; log: string }> {
  const crews = (await listCrews(store)).filter((c) => c.workers.some((w) => w.name === name)).sort((a, b) => b.updated_at - a.updated_at);
  if (!crews.length) {
    throw new A2AError("ENOTFOUND", text`no crew has a worker named ${name}: see the crews and their workers with ${op("crew")}`, { data: { worker: name } });
  }
  const crew = crews[0];
  return { crew, worker: crew.workers.find((w) => w.name === name)!, log: logName(crew.crew, name) };
}

// The crew that is up under `crew` (or the only one up), else ENOTFOUND.
export async function upCrew(store: Store, crew: string | undefined): Promise<CrewStatus> {
  const up = (await listCrews(store, crew)).filter((c) => c.state === "up");
  if (up.length === 1) return up[0];
  if (crew !== undefined) throw new A2AError("ENOTFOUND", text`crew ${crew} is not up: start it with ${op("crew up", "FILE")}; ${op("crew")} lists the crews`, { data: { crew } });
  if (!up.length) throw new A2AError("ENOTFOUND", text`no crew is up: start one with ${op("crew up", "FILE")}`, { data: {} });
  throw new A2AError("EUSAGE", `${up.length} crews are up (${up.map((c) => c.crew).join(", ")}): name the one to stop`, { data: { crews: up.map((c) => c.crew) } });
}

export type Control = { stop: string } | { down: true };
const ENDED: WorkerState[] = ["stopped", "gave-up", "gone"];

// Asks `crew`'s supervisor to stop one worker, or the whole crew, and waits until it has.
export async function controlCrew(store: Store, crew: string | undefined, what: { stop: string } | { down: true }, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Outcome<CrewStatus | undefined>> {
  const found = "stop" in what ? await findWorker(store, what.stop) : undefined;
  const c = found ? found.crew : await upCrew(store, crew);
  if (c.state !== "up") throw new A2AError("ENOTFOUND", text`crew ${c.crew} is not up: nothing to stop`, { data: { crew: c.crew } });
  if (found && ENDED.includes(found.worker.state)) {
    throw new A2AError("ENOTFOUND", text`worker ${found.worker.name} of crew ${c.crew} is not running (${found.worker.state}): nothing to stop`, { data: { crew: c.crew, worker: found.worker.name, state: found.worker.state } });
  }
  await sendMessage(store, controlName(c.crew), controlName(c.crew), JSON.stringify(what));
  const slot = statusName(c.crew);
  const check = async () => {
    const rec = await getSlot(store, slot);
    const s = statusOf(rec?.result ?? null);
    if (!s || s.started_at !== c.started_at) return s ? { ...s } : undefined; // taken over, or cleared: not ours to wait for
    if (s.state === "stopped") return s;
    if ("stop" in what && ENDED.includes(s.workers.find((w) => w.name === what.stop)?.state ?? "gone")) return s;
    const held = await listLeases(store, [leaseName(c.crew)]);
    return held.length ? undefined : (await live(store, s, new Set(), false)); // its supervisor died meanwhile
  };
  const out = await waitUntil(store, { on: "slots" }, check, { timeoutMs: o.timeoutMs, signal: o.signal, recheckMs: 1000 });
  return out.kind === "done" ? out : { ...out, pending: [c.crew] };
}
