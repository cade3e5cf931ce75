// The seam between the task queue (lib/tasks/; read by lib/dashboard/tasks.ts) and whoever shows it (the
// dashboard, `a2a ui`): a Board is every queue's tasks with their states, holders, leases and
// dependencies, plus the named leases; a BoardProvider reads it, says which directories to
// watch for changes to it, and performs the three actions a person may take on it.
//
// Invariants:
// - the provider's actions are the same lib calls as the CLI commands they stand for (retry,
//   cancel, release), so the page can never do what the shell cannot.

import type { Store } from "../core/config";
import type { TaskState } from "../tasks/record";

export interface BoardTask {
  queue: string;
  id: string;
  title: string; // written by agents: untrusted text
  state: TaskState;
  holder: string | null; // claimed: who holds it
  lease_expires_at: number | null; // claimed: unix seconds when the claim lapses
  deps: string[]; // ids in the same queue this task waits for
  reason: string | null; // dead: why (untrusted text)
  attempts: number;
  updated_at: number; // unix seconds
}

export interface BoardLease {
  name: string;
  holder: string;
  acquired_at: number;
  expires_at: number;
}

// A reservation on paths of a repository (lib/reservations/).
export interface BoardReservation {
  repo: string; // the repository's identity
  pattern: string;
  holder: string;
  exclusive: boolean;
  reason: string | null; // written by agents: untrusted text
  created_at: number;
  expires_at: number;
}

export interface Board {
  available: boolean; // false: this build has no task queue
  queues: { name: string; tasks: BoardTask[] }[];
  leases: BoardLease[];
  reservations: BoardReservation[];
}

export interface BoardProvider {
  readonly available: boolean;
  read(store: Store): Promise<Board>;
  // Directories (existing or not) whose changes may change the board.
  dirs(store: Store): Promise<string[]>;
  retry(store: Store, queue: string, id: string, as: string): Promise<void>;
  cancel(store: Store, queue: string, id: string, as: string): Promise<void>;
  release(store: Store, lease: string, as: string): Promise<void>;
  releaseReservation(store: Store, which: { repo: string; holder: string; pattern: string }, as: string): Promise<void>;
}

