// Each worker as a session on the bus, kept by its supervisor: a presence record under the
// worker's name (the supervisor's host and pid, so a killed supervisor's workers are gone at
// once on its host, elsewhere after missed heartbeats), its state mark (waiting for a task,
// working on one) and the task it holds, as `a2a peers` and `a2a wait-state` read them.

import type { Store } from "../core/config";
import { nowSec } from "../core/time";
import type { Peer } from "../presence/record";
import { presenceStorage } from "../presence/storage";
import { holdTask, markState } from "../sessions/state";
import type { WorkerSpec } from "./file";

export interface WorkerPresence {
  waiting(): Promise<void>;
  working(task: { queue: string; id: string }): Promise<void>;
  close(): Promise<void>;
}

export function workerPresence(store: Store, w: WorkerSpec): WorkerPresence {
  const storage = presenceStorage(store);
  const now = nowSec();
  let rec: Peer = {
    a2a: 1, name: w.name, host: store.host, pid: process.pid, cwd: w.cwd, git_root: null, tty: null,
    summary: `crew ${w.crew}: ${w.agent} worker on ${w.queues.join(", ")}`, started_at: now, heartbeat: now, heartbeat_ms: store.heartbeatMs, client: `a2a-crew ${w.agent}`, // what a2a peers shows as its agent
  };
  let beating: Promise<unknown> = storage.put(rec).catch(() => {});
  const timer = setInterval(() => {
    rec = { ...rec, heartbeat: nowSec() };
    beating = beating.then(() => storage.beat(rec)).catch(() => {});
  }, store.heartbeatMs);
  const atExit = () => storage.removeAtExit(rec);
  process.on("exit", atExit);
  // Marks never stop a worker: a mark that cannot be written leaves the last one shown.
  const quiet = (p: Promise<unknown>) => p.then(() => {}, () => {});
  return {
    // One write after the other: each rewrites the session's record.
    waiting: () => quiet(beating.then(async () => {
      await holdTask(store, w.name, null);
      await markState(store, w.name, "waiting", `task claim ${w.queues.join(",")}`);
    })),
    working: (t) => quiet((async () => {
      await holdTask(store, w.name, t);
      await markState(store, w.name, "working", `task ${t.id}`);
    })()),
    async close() {
      clearInterval(timer);
      process.off("exit", atExit);
      await beating;
      await quiet(holdTask(store, w.name, null));
      await storage.remove(rec).catch(() => false);
    },
  };
}
