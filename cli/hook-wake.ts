// `a2a hook wake --agent ID`: a waiter for a session idle at its prompt, for agents whose way in
// is a process that ends when mail should wake the session: a2a's opencode plugin runs it while a
// session sits idle and prompts the session with its answer; in Gemini CLI the model runs it as a
// background shell command, whose end Gemini CLI injects into the idle session as a new turn. It
// waits until the wake rule (lib/sessions/wake-rule.ts, the same for every agent) says wake, keeps
// the rule's bookkeeping, and answers the wake's text; docs/PROTOCOL.md §11 is the contract.
//
// Invariants:
// - a wake is a reason to look, never a delivery: nothing here reads or moves mail;
// - event-driven: it looks again on new mail, and on a timer only while the rule waits on time
//   (a rate bound, a pending batch, a turn to end);
// - the loop guard's hold is said once: with `endOnHold` (opencode) it ends the wait, the next
//   idle starts a new waiter; without (Gemini CLI: any end of the command wakes the session) it
//   is said on stderr and the wait goes on until the user's prompt starts the guard over;
// - it never outlives the process that started it (opencode killed without ending it).

import { WAKE_LIMITS, wakeText } from "../lib/sessions/wake-rule";
import { err, msUntil } from "./io";
import type { Ctx } from "./run";

export type WakeAnswer = { wake: string } | { held: string } | undefined;

// `signal`, aborted too once the process that started this one is gone, looked at every second.
function orphaned(signal: AbortSignal): AbortSignal {
  const parent = process.ppid;
  const ac = new AbortController();
  const timer = setInterval(() => process.ppid !== parent && ac.abort(), 1000);
  timer.unref();
  return AbortSignal.any([signal, ac.signal]);
}

// What ends one wait: new mail, `ms` (none: no timer), or the end of the waiter.
function until(signal: AbortSignal, ms: number | undefined, mail: { next: Promise<void> }): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done); // a waiter looks again each second for hours: no listener piles up
      resolve();
    };
    const timer = ms === undefined ? undefined : setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
    mail.next.then(done);
  });
}

// Session `name`'s next wake (`read`: how its agent reads mail, for the wake's text), or the loop
// guard's hold; undefined when the wait was ended.
export async function nextWake(c: Ctx, name: string, read: string, endOnHold: boolean): Promise<WakeAnswer> {
  const signal = orphaned(c.signal());
  let kick = () => {};
  const mail = { next: new Promise<void>((r) => (kick = r)) };
  const renew = () => (mail.next = new Promise<void>((r) => (kick = r)));
  const unwatch = await c.bus.mail.watch(name, () => kick());
  try {
    while (!signal.aborted) {
      renew();
      const d = await c.bus.sessions.wakeCheck(name);
      if (d.mark) await c.bus.sessions.keepWake(name, d.mark);
      if (d.wake) return { wake: wakeText(d.count, d.senders, read) };
      if (d.first) {
        const held = `a2a: ${name} was woken ${WAKE_LIMITS.run} times in a row with no prompt from its user: no more wakes until the user prompts`;
        if (endOnHold) return { held };
        err(held + "\n");
      }
      // A rate bound ends at retryAt; a pending batch, a running turn or the loop guard's hold
      // (the user's prompt ends it) is looked at each second.
      const ms = d.retryAt !== undefined ? msUntil(d.retryAt) : d.why === "nothing-new" || d.why === "sender-rate" ? undefined : 1000;
      await until(signal, ms, mail);
    }
    return undefined;
  } finally {
    unwatch();
  }
}
