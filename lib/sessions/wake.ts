// The wake rule (wake-rule.ts) against a store: what a trigger (the session's own a2a mcp) asks
// before it wakes an idle session, and the bookkeeping it keeps in the session record, shared
// with the prompt hook (a user's prompt starts the loop guard over). docs/PROTOCOL.md §11
// ("Waking an idle session") is the contract.
//
// Invariants:
// - reading here never moves mail: the decision looks at what waits, the wake is a reason to look;
// - nothing is written unless the decision says so: a trigger's look at an idle inbox costs reads only;
// - the record is read again just before each write (hooks and a2a mcp write it too): a wake's
//   mark replaces the wake field only, never a state or task written meanwhile.

import type { Store } from "../core/config";
import { nowSec } from "../core/time";
import { waitingFor } from "../mail/inbox";
import { presenceStorage } from "../presence/storage";
import { readRecord, writeRecord } from "./hooks";
import { stateOf } from "./state";
import { HUMAN } from "../core/names";
import { decideWake, isWakePrompt, NOT_THE_USER, userPrompted, type Mail, type WakeDecision, type WakeLimits, type WakeMark } from "./wake-rule";

const HEADS_MAX = 100; // new messages whose senders a decision looks at (the oldest)

// What the rule decides for session `name` now.
export async function wakeCheck(store: Store, name: string, limits?: WakeLimits): Promise<WakeDecision> {
  const [peer, rec, mail] = await Promise.all([presenceStorage(store).read(name), readRecord(store, name), waitingFor(store, name)]);
  const v = stateOf(store, peer, rec.state);
  const known = new Set(rec.wake?.ids ?? []);
  const fresh = mail.ids.filter((id) => !known.has(id)).slice(0, HEADS_MAX);
  const heads = fresh.length ? await mail.heads(fresh) : [];
  // HUMAN whose mark does not count (another user's dashboard wrote it) is named as such: the
  // wake's text would say it is the user's own word (wakeText goes by the name).
  const from = new Map(heads.map((m) => [m.id, m.from === HUMAN && !m.human ? NOT_THE_USER : m.from]));
  // The person's own message (lib/mail/human.ts: marked only when its writer owns the inbox) is
  // the user speaking, as a prompt is: the loop guard starts over for it.
  const wake = heads.some((m) => m.human) ? (userPrompted(rec.wake) ?? rec.wake) : rec.wake;
  // Known ids need no sender; a fresh one whose head was refused (a policy) or is gone wakes nothing.
  const unread: Mail[] = mail.ids.flatMap((id) => (known.has(id) ? [{ id, from: "" }] : from.has(id) ? [{ id, from: from.get(id)! }] : []));
  return decideWake({ now: nowSec(), state: v.state, since: v.since, unread, wake }, limits);
}

// Keeps `mark` as the session's wake bookkeeping (after a wake was sent, or a decision that
// changed it).
export async function keepWake(store: Store, name: string, mark: WakeMark): Promise<void> {
  const rec = await readRecord(store, name);
  await writeRecord(store, { ...rec, wake: mark });
}

// The prompt hook: a prompt that is not a2a's wake is the user's, and starts the loop guard over.
// Writes nothing when there is nothing to start over.
export async function promptedBy(store: Store, name: string, prompt: unknown): Promise<void> {
  if (isWakePrompt(prompt)) return;
  const rec = await readRecord(store, name);
  const reset = userPrompted(rec.wake);
  if (reset) await writeRecord(store, { ...rec, wake: reset });
}
