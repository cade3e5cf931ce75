// The file engine's sweeps `a2a gc` runs for tasks and leases (lib/fs/gc.ts; the retention is
// the task room's, lib/tasks/retention.ts): whole chains removed once they are final and
// old (docs/FILE-ENGINE.md §10: "a whole chain MAY be removed once it is final and old"; §13).
//
// What is removed, and why it is safe:
// - a task whose head is done (for TASK_KEEP_SEC) or dead (for DEAD_KEEP_SEC: dead letters are
//   kept longer, for their reasons and a retry), and that no unfinished task depends on (a
//   dependant would read a missing dependency as dead). Done is final: no change can land
//   after it. A dead task can only change by a retry; a retry racing the sweep of that very
//   task leaves its new version alone in the directory, which claim and list still read.
//   Its add-key record goes with it (a later add with that key makes a new task), so do the
//   replay records of claims on it;
// - a lease chain whose head is free (released, or run out) for LEASE_KEEP_SEC. A take racing
//   the sweep links its version into the (re-created) directory: a lone version is a valid
//   chain, so the take holds.
// - a pending @open/.ID marker (add step 4, lib/fs/tasks.ts) older than TMP_STALE_MS whose task never got a
//   version: the add crashed before its task existed. One whose task exists is promoted to
//   @open/ID instead (the add crashed between its steps 5 and 6).
// - nothing of a chain whose head is damaged: it is named in the report (`damaged`) for a
//   person to repair (task cancel, lease release); a damaged dependant keeps its dependency.
// Versions go lowest first and the head last, so a reader never sees a chain without its head
// while it still has older versions. Only files named by the protocol are removed (guard.ts
// removeFile: regular files only); a directory holding anything else is left in place.

import { lstatSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import type { Store } from "../core/config";
import { readHead } from "./chain";
import { hashHex } from "../core/digest";
import { entries, readJsonLine } from "./io";
import { removeFile } from "./guard";
import {
  addKeyFile, claimKeysDir, dependantOf, isTaskId, isValidName, leaseDir, leasesDir, openDir, openFile, pendingOpenFile, queueDir, taskBell, taskDir,
  versionFile, versionOf,
} from "./paths";
import { TMP_STALE_MS } from "./atomic";
import { nowSec } from "../core/time";
import { openIds, queues, readTasks } from "./tasks";
import type { DamagedChain } from "../tasks/state";
import { DEAD_KEEP_SEC, LEASE_KEEP_SEC, TASK_KEEP_SEC } from "../tasks/retention";

export { DEAD_KEEP_SEC, LEASE_KEEP_SEC, TASK_KEEP_SEC };

export interface SweepReport {
  tasks: number; // final task chains removed
  leases: number; // free lease chains removed
  damaged: DamagedChain[]; // chains passed over because their head is damaged
}

export function sweepTasksAndLeases(store: Store, now = nowSec()): SweepReport {
  const report: SweepReport = { tasks: 0, leases: 0, damaged: [] };
  for (const q of queues(store)) {
    sweepPending(store, q, now);
    const gone = new Set<string>();
    for (const rec of readTasks(store, q, entries(store, queueDir(store, q)).filter(isTaskId), report.damaged)) {
      const id = rec.id;
      if (rec.state !== "done" && rec.state !== "dead") continue;
      if (now - rec.updated_at < (rec.state === "done" ? TASK_KEEP_SEC : DEAD_KEEP_SEC)) continue;
      const dir = taskDir(store, q, id);
      const files = entries(store, dir);
      const waiting = files.some((f) => {
        const t = dependantOf(f);
        if (!t) return false;
        const damaged: DamagedChain[] = [];
        const dep = readTasks(store, t.queue, [t.id], damaged)[0];
        return damaged.length > 0 || (!!dep && dep.state !== "done" && dep.state !== "dead");
      });
      if (waiting) continue;
      removeFile(store, openFile(store, q, id));
      for (const f of files) if (dependantOf(f)) removeFile(store, join(dir, f));
      removeFile(store, taskBell(store, q, id));
      if (removeChain(store, dir, files)) {
        report.tasks++;
        gone.add(id);
        if (rec.key !== null) {
          const keyPath = addKeyFile(store, q, hashHex("sha256", rec.key).slice(0, 32));
          const k = readJsonLine(store, keyPath, (r: any) => (r?.a2a === 1 && r.id === id ? r : undefined));
          if (k.kind === "ok") removeFile(store, keyPath);
        }
      }
    }
    if (!gone.size) continue;
    const claims = claimKeysDir(store, q);
    for (const f of entries(store, claims)) {
      const path = join(claims, f);
      const k = readJsonLine(store, path, (r: any) => (r?.a2a === 1 && typeof r.id === "string" ? r : undefined));
      if (k.kind === "ok" && gone.has(k.value.id)) removeFile(store, path);
    }
  }
  for (const name of entries(store, leasesDir(store)).filter(isValidName)) {
    const dir = leaseDir(store, name);
    const h = readHead(store, dir, (r: any) => (r?.a2a === 1 && r.name === name && Number.isInteger(r.version) ? r : undefined), true);
    if (h.damaged) {
      report.damaged.push({ kind: "lease", name, ...h.damaged });
      continue;
    }
    const head = h.value as { holder: string | null; expires_at: number } | undefined;
    if (!head || (head.holder !== null && head.expires_at > now)) continue;
    // Free since it ran out, or (released: the record keeps its old expiry) since the release was written.
    const freeSince = head.holder === null ? mtimeSec(versionFile(dir, h.version)) : head.expires_at;
    if (freeSince === undefined || now - freeSince < LEASE_KEEP_SEC) continue;
    if (removeChain(store, dir, entries(store, dir))) report.leases++;
  }
  return report;
}

function sweepPending(store: Store, queue: string, now: number): void {
  openIds(store, queue); // promotes the pending markers of tasks that exist
  for (const f of entries(store, openDir(store, queue), true)) {
    if (!f.startsWith(".") || !isTaskId(f.slice(1))) continue;
    const path = pendingOpenFile(store, queue, f.slice(1));
    const since = mtimeSec(path);
    if (since !== undefined && now - since > TMP_STALE_MS / 1000) removeFile(store, path);
  }
}

function mtimeSec(path: string): number | undefined {
  try {
    return lstatSync(path).mtimeMs / 1000;
  } catch {
    return undefined;
  }
}

// Removes the version files of a chain, lowest first, then its directory; false when the
// directory is not empty afterwards (a version landed meanwhile, or something foreign is there).
function removeChain(store: Store, dir: string, files: string[]): boolean {
  const versions = files.map(versionOf).filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  for (const v of versions) removeFile(store, versionFile(dir, v));
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}
