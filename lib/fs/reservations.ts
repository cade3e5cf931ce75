// The file engine's reservation storage (lib/reservations/storage.ts): a repository's whole set
// is one record, reservations/HASH.json (HASH: sha256 of the repository's identity, so any
// identity is a safe file name), {"a2a":1,"repo":ID,"reservations":[...]} on one line.
// docs/FILE-ENGINE.md §12 is the layout.
//
// Invariants:
// - a change runs under the lock "@reservations.HASH" (lib/fs/lock.ts) and replaces the file
//   with writeAtomic, its lock checked just before the rename: of two changes of one
//   repository the second reads what the first wrote;
// - a reader never locks: one bounded read of one file sees a whole set (the rename), which is
//   what lets the PreToolUse hook answer with 1,000 reservations in one read;
// - a file that is not a record a2a wrote for this repository is EIO naming it, and is never
//   overwritten by a change (a2a replaces only its own records); removing it by hand frees the set;
// - a change that leaves the set empty removes the file, so a repository nobody reserves in
//   leaves nothing behind;
// - the directory is the repository's channel: every change renames or removes in it.

import { writeAtomic } from "./atomic";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { entries, readJsonLine } from "./io";
import { fitRecord } from "../core/record";
import { ensureDir, removeFile } from "./guard";
import { withLock } from "./lock";
import { reservationFile, reservationFileName, reservationsDir } from "./paths";
import { join } from "node:path";
import type { Reservation, ReservationStorage } from "../reservations/storage";

interface SetRecord {
  a2a: 1;
  repo: string;
  reservations: Reservation[];
}

const isReservation = (r: any, repo: string): r is Reservation =>
  !!r && r.a2a === 1 && r.repo === repo && typeof r.pattern === "string" && typeof r.holder === "string" && typeof r.exclusive === "boolean" &&
  typeof r.expires_at === "number" && typeof r.created_at === "number";

const decoder = (repo: string) => (v: any): SetRecord | undefined =>
  v.a2a === 1 && v.repo === repo && Array.isArray(v.reservations) && v.reservations.every((r: unknown) => isReservation(r, repo)) ? v : undefined;

function read(store: Store, repo: string): Reservation[] {
  const file = reservationFile(store, repo);
  for (let i = 0; ; i++) {
    const r = readJsonLine(store, file, decoder(repo));
    if (r.kind === "ok") return r.value.reservations;
    if (r.kind === "absent" && !r.stale) return [];
    if (r.kind === "absent" && i < 3) continue; // ESTALE: replaced while opened; the next open sees the new one
    const why = r.kind === "invalid" ? r.why : "not readable";
    throw new A2AError("EIO", `${file} (the reservations of ${repo}) is ${why}, not an a2a record: fix or remove it (removing it frees every reservation of that repository)`, {
      data: { repo, file, damaged: true },
    });
  }
}

export function fileReservations(store: Store): ReservationStorage {
  return {
    live: async (repo) => read(store, repo),
    liveMany: async (repos) => [...new Set(repos)].flatMap((repo) => read(store, repo)),
    change: async (repo, decide) => {
      const hash = reservationFileName(repo).slice(0, -5);
      ensureDir(store, reservationsDir(store));
      return withLock(store, `@reservations.${hash}`, (lock) => {
        const next = decide(read(store, repo));
        const file = reservationFile(store, repo);
        if (next.length === 0) {
          lock.check();
          removeFile(store, file);
        } else {
          const line = fitRecord(store, JSON.stringify({ a2a: 1, repo, reservations: next } satisfies SetRecord) + "\n", `the reservations of ${repo}`);
          writeAtomic(store, file, line, { beforeCommit: lock.check });
        }
        return next;
      });
    },
    repos: async () => {
      const out: string[] = [];
      for (const f of entries(store, reservationsDir(store))) {
        if (!f.endsWith(".json")) continue;
        const r = readJsonLine(store, join(reservationsDir(store), f), (v: any) => (v.a2a === 1 && typeof v.repo === "string" ? (v as SetRecord) : undefined));
        if (r.kind === "ok" && reservationFileName(r.value.repo) === f) out.push(r.value.repo);
      }
      return out.sort();
    },
  };
}
