// The task record, one version of a task's chain (lib/fs/chain.ts): its fields, encoding,
// ids, claim tokens and the input checks every task operation shares.
//
// A task is the directory ROOT/tasks/QUEUE/ID/ holding versions 00000001.json, 00000002.json...;
// every version is the whole record after one change (add, claim, renew, done, fail, expire,
// retry, cancel), so reading the head is reading the task. Stored states are ready, claimed,
// done and dead; "blocked" (and dead by a dead dependency) is derived on reading (state.ts).
//
// Invariants:
// - a record's `version` equals its file number and its `id`/`queue` its directory's;
// - `size` is the UTF-8 byte length of `payload` (a torn read fails this);
// - attempt numbers only grow, across retries too, so a token (which carries its attempt)
//   never becomes current again once a later attempt exists;
// - `claim` is non-null exactly when state is "claimed".

import { attachmentsOf, type Attachment } from "../blobs/attachment";
import type { Store } from "../core/config";
import { randomHex } from "../core/digest";
import { A2AError, arg, text } from "../core/errors";
import { checkAgent, checkName, isTaskId } from "../core/names";
import { hostTag } from "../core/holder";
import type { StoredState } from "./states";
export { TASK_STATES, type StoredState, type TaskState } from "./states";

export interface Claim {
  attempt: number;
  token: string;
  assignee: string;
  key: string | null; // the claimer's replay key
  claimed_at: number;
  expires_at: number; // the lease: unix seconds, the claimer's clock
  lease_sec: number;
  host: string;
  pid: number;
}

export interface Attempt {
  attempt: number;
  assignee: string;
  claimed_at: number;
  ended_at: number;
  outcome: "failed" | "expired" | "cancelled";
  reason: string;
}

export interface Dep {
  id: string;
  queue: string;
}

export interface TaskRecord {
  a2a: 1;
  id: string;
  queue: string;
  version: number;
  state: StoredState;
  payload: string;
  size: number;
  key: string | null; // the add's idempotency key
  after: Dep[];
  max_attempts: number; // per round: a retry starts a new round
  ttl_sec: number | null;
  deadline: number | null; // unix seconds after which an unfinished task is dead
  created_at: number;
  updated_at: number;
  attempt: number; // the last attempt handed out (0: never claimed)
  round_from: number; // attempts up to this one belong to earlier rounds (before a retry)
  claim: Claim | null;
  attempts: Attempt[]; // the last ATTEMPTS_KEPT attempts that ended without done, oldest first
  result: string | null;
  reason: string | null; // why it is dead
  host: string; // writer of this version
  pid: number;
  attachments?: Attachment[]; // blobs handed over with the result (§19); only on a done task
}

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_LEASE_SEC = 300; // as a2a-buffer: five minutes from the claim
export const MAX_ATTEMPTS_LIMIT = 1000;
export const MAX_TEXT_FIELD = 4096; // keys, assignee names' companions, reasons
// Attempts a record keeps: older ones are dropped (their count lives on in `attempt`), so a
// record's fields besides payload and result stay within RECORD_LIMIT's slack whatever a task
// goes through, and a claim or an expiry can always be written (lib/core/record.ts fitRecord).
export const ATTEMPTS_KEPT = 20;
export const keptAttempts = (attempts: Attempt[]): Attempt[] => attempts.slice(-ATTEMPTS_KEPT);

export function encodeTask(r: TaskRecord): string {
  return JSON.stringify({ ...r, size: Buffer.byteLength(r.payload, "utf8") }) + "\n";
}

export function taskDecoder(id: string, queue: string): (v: any) => TaskRecord | undefined {
  return (r: any) => {
    if (r.a2a !== 1 || r.id !== id || r.queue !== queue || !Number.isInteger(r.version)) return undefined;
    if (!["ready", "claimed", "done", "dead"].includes(r.state) || typeof r.payload !== "string") return undefined;
    if (r.size !== Buffer.byteLength(r.payload, "utf8") || !Array.isArray(r.after) || !Array.isArray(r.attempts)) return undefined;
    if ((r.state === "claimed") !== (r.claim !== null && typeof r.claim === "object")) return undefined;
    if (r.attachments !== undefined && !attachmentsOf(r.attachments)) return undefined;
    return r as TaskRecord;
  };
}

// Ids sort by creation time; within one process strictly (the Store's id clock).
export function newTaskId(store: Store): string {
  const us = Math.max(Date.now() * 1000, store.lastIdUs + 1);
  store.lastIdUs = us;
  return `${String(us).padStart(16, "0")}-${randomHex(4)}`;
}

export function checkTaskId(id: unknown, what = "task id"): string {
  if (!isTaskId(id)) {
    const shown = typeof id === "string" ? JSON.stringify(id.slice(0, 60)) : String(id);
    throw new A2AError("EUSAGE", `invalid ${what} ${shown}: copy the id exactly as task add printed it (e.g. 1796040000123456-3fa9c0d2)`, { data: { what } });
  }
  return id;
}

// A claim token: the attempt number, "-", 16 random hex digits.
const TOKEN_RE = /^([1-9]\d{0,9})-([0-9a-f]{16})$/;
export const newToken = (attempt: number) => `${attempt}-${randomHex(8)}`;

export function checkToken(token: unknown): { token: string; attempt: number } {
  const m = typeof token === "string" ? TOKEN_RE.exec(token) : null;
  if (!m) {
    const shown = typeof token === "string" ? JSON.stringify(token.slice(0, 60)) : String(token);
    throw new A2AError("EUSAGE", `invalid claim token ${shown}: pass the token task claim printed, e.g. 2-9f8e7d6c5b4a3928`);
  }
  return { token: m[0], attempt: Number(m[1]) };
}

export const checkQueue = (q: unknown) => checkName(q, "queue name");

export function checkText(value: unknown, what: string, max = MAX_TEXT_FIELD): string {
  if (typeof value !== "string" || value === "" || Buffer.byteLength(value, "utf8") > max) {
    throw new A2AError("EUSAGE", `the ${what} must be a non-empty text of at most ${max} bytes: pass a shorter one`, { data: { what } });
  }
  return value;
}

export function checkMaxAttempts(n: unknown): number {
  if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > MAX_ATTEMPTS_LIMIT) {
    throw new A2AError("EUSAGE", text`max attempts ${String(n)} is not a whole number from 1 to ${MAX_ATTEMPTS_LIMIT}: give e.g. ${arg("maxAttempts", 3)}`);
  }
  return n as number;
}

// Who a claim is handed to: the name given, else A2A_AGENT, else this host and pid.
export function assigneeOf(store: Store, as: string | undefined): string {
  if (as !== undefined) return checkAgent(as, "assignee name");
  return store.agent ?? `${hostTag(store.host)}.${process.pid}`;
}

// Attempts of the current round (since the last retry).
export const roundAttempts = (r: TaskRecord) => r.attempt - r.round_from;
