// The seam between the task queue (lib/tasks/; read by lib/board-tasks.ts) and whoever shows it (the
// dashboard, `a2a ui`): a Board is every queue's tasks with their states, holders, leases and
// dependencies, plus the named leases; a BoardProvider reads it, says which directories to
// watch for changes to it, and performs the three actions a person may take on it.
//
// Invariants:
// - the provider's actions are the same lib calls as the CLI commands they stand for (retry,
//   cancel, release), so the page can never do what the shell cannot;
// - NO_TASKS is an empty board (tests, and builds without a queue): no directories, and
//   actions that refuse with ENOTFOUND (there is nothing to act on), never a silent success.

import type { Store } from "./core/config";
import { A2AError } from "./core/errors";

export type TaskState = "ready" | "claimed" | "blocked" | "done" | "dead";
export const TASK_STATES: TaskState[] = ["ready", "claimed", "blocked", "done", "dead"];

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

export interface Board {
  available: boolean; // false: this build has no task queue
  queues: { name: string; tasks: BoardTask[] }[];
  leases: BoardLease[];
}

export interface BoardProvider {
  readonly available: boolean;
  read(store: Store): Board;
  // Directories (existing or not) whose changes may change the board.
  dirs(store: Store): string[];
  retry(store: Store, queue: string, id: string, as: string): Promise<void>;
  cancel(store: Store, queue: string, id: string, as: string): Promise<void>;
  release(store: Store, lease: string, as: string): Promise<void>;
}

const nothing = (what: string) => async () => {
  throw new A2AError("ENOTFOUND", `no ${what} to act on: this build has no task queue yet`);
};

export const NO_TASKS: BoardProvider = {
  available: false,
  read: () => ({ available: false, queues: [], leases: [] }),
  dirs: () => [],
  retry: nothing("task"),
  cancel: nothing("task"),
  release: nothing("lease"),
};
