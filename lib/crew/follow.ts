// Reading a worker's log (lib/crew/log.ts: one slot a worker, started again at each task):
// its current or last task's output and how that task ended; with `follow`, every task after
// it too, as the output comes, until the worker stops (crew stop, crew down, gave up) or its
// supervisor is gone. Each task's output is headed by what the task is (the slot's task line).

import type { Store } from "../core/config";
import { done, ended, type Outcome } from "../core/outcome";
import { waitUntil } from "../core/watch";
import { slotStorage } from "../slots/storage";
import { crewStatus, findWorker, statusName, type WorkerState } from "./status";

export type LogPart = { kind: "task"; text: string } | { kind: "output"; text: string; n: number } | { kind: "end"; text: string };

const OVER: WorkerState[] = ["stopped", "gave-up", "gone"];

export async function followLog(store: Store, worker: string, show: (p: LogPart) => void, o: { follow?: boolean; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<Outcome<{ worker: string; state: WorkerState }>> {
  const { log, crew } = await findWorker(store, worker);
  const storage = slotStorage(store);
  let run: number | undefined; // the started_at of the task being shown
  let next = 0;
  let ended_ = false;
  const drain = async () => {
    const r = await storage.read(log, 0);
    if (r.kind === "ok") {
      const rec = r.record;
      if (rec.started_at !== run) {
        run = rec.started_at;
        next = 0;
        ended_ = false;
        if (rec.task) show({ kind: "task", text: rec.task });
      }
      for (const text of await storage.chunks(log, next, rec.chunks)) show({ kind: "output", text, n: ++next });
      if (rec.state === "done" && next >= rec.chunks && !ended_) {
        ended_ = true;
        show({ kind: "end", text: rec.result ?? "" });
      }
    }
    // Over when not following, or when the worker will write no more.
    const me = (await crewStatus(store, crew.crew, crew.host))?.workers.find((w) => w.name === worker)?.state ?? "gone";
    if (!o.follow || (OVER.includes(me) && (r.kind !== "ok" || ended_ || r.record.state !== "running"))) return { worker, state: me };
    return undefined;
  };
  if (!o.follow) return done((await drain())!);
  const slot = statusName(crew.crew, crew.host);
  const outcome = await waitUntil(store, { on: "slots" }, (changed) => (changed === undefined || changed === log || changed === slot ? drain() : undefined), {
    timeoutMs: o.timeoutMs, signal: o.signal, recheckMs: 1000, // a supervisor that died writes nothing
  });
  return outcome.kind === "done" ? done(outcome.value!) : ended(outcome.kind, { worker, state: "working" as WorkerState }, [worker]);
}
