// The dashboard's board read from the task queue (lib/tasks): every queue's tasks and the
// named leases, the directories whose changes move them, and the three actions a person may
// take, each the same call as its CLI command (a2a task retry ID, a2a task cancel ID,
// a2a lease release NAME --as HOLDER). Top-level because it joins tasks with the board.

import type { Store } from "../core/config";
import { leaseDir, leasesDir, openDir, queueDir, reservationsDir, taskDir, tasksDir } from "../fs/paths";
import { byName } from "../core/names";
import { allReservations, dropReservation } from "../reservations/reserve";
import type { Board, BoardProvider, BoardTask } from "./board";
import { cancelTask, retryTask } from "../tasks/admin";
import { listLeases, releaseLeases } from "../leases/lease";
import { leaseNames } from "../fs/leases";
import { listTasks } from "../tasks/query";
import { queues } from "../tasks/state";

// Beyond this many live tasks their own directories are not watched one by one: the page's
// periodic refresh covers them (inotify watches are a limited resource).
const MAX_WATCHED_TASKS = 500;

export const TASK_BOARD: BoardProvider = {
  available: true,
  async read(store: Store): Promise<Board> {
    const byQueue = new Map<string, BoardTask[]>();
    for (const t of await listTasks(store)) {
      const list = byQueue.get(t.queue) ?? [];
      list.push({
        queue: t.queue, id: t.id, title: t.payload.slice(0, 200), state: t.state, holder: t.assignee,
        lease_expires_at: t.lease_expires_at, deps: t.after, reason: t.reason, attempts: t.attempt, updated_at: t.updated_at,
      });
      byQueue.set(t.queue, list);
    }
    const leases = (await listLeases(store)).map((l) => ({ name: l.name, holder: l.holder, acquired_at: l.taken_at, expires_at: l.expires_at }));
    const reservations = (await allReservations(store)).map((r) => ({ repo: r.repo, pattern: r.pattern, holder: r.holder, exclusive: r.exclusive, reason: r.reason, created_at: r.created_at, expires_at: r.expires_at }));
    return { available: true, queues: [...byQueue].sort(([a], [b]) => byName(a, b)).map(([name, tasks]) => ({ name, tasks })), leases, reservations };
  },
  async dirs(store: Store): Promise<string[]> {
    const dirs = [tasksDir(store), leasesDir(store), reservationsDir(store)];
    for (const q of await queues(store)) dirs.push(queueDir(store, q), openDir(store, q));
    const live = (await listTasks(store)).filter((t) => t.state === "ready" || t.state === "claimed" || t.state === "blocked");
    for (const t of live.slice(0, MAX_WATCHED_TASKS)) dirs.push(taskDir(store, t.queue, t.id));
    for (const name of leaseNames(store)) dirs.push(leaseDir(store, name));
    return dirs;
  },
  async retry(store, _queue, id) {
    await retryTask(store, id);
  },
  async cancel(store, _queue, id, as) {
    await cancelTask(store, id, { reason: `cancelled by ${as} from the dashboard` });
  },
  async release(store, lease) {
    const held = (await listLeases(store, [lease]))[0];
    if (held) await releaseLeases(store, [lease], { as: held.holder });
  },
  async releaseReservation(store, which) {
    await dropReservation(store, which);
  },
};
