// Waking the idle session this a2a mcp serves (issue 35): on each inbox event (and when a rate
// bound ends, or the session's turn does) it asks the wake rule (lib/sessions/wake-rule.ts via
// bus.sessions.wakeCheck) and, when the rule says wake, wakes the session by its agent's way in
// (wake-ways.ts), then keeps the rule's mark in the session record. docs/PROTOCOL.md §11
// ("Waking an idle session") is the contract.
//
// Invariants:
// - a wake is a reason to look: nothing here reads or moves mail, and the wake's text names
//   check_messages; the message stays unread until the session reads it;
// - one look at a time: events during a look make one more look after it, never two at once;
// - the mark is kept only after the way in took the wake (a failed wake is logged and the mail
//   stays new: the next event tries again); every record write goes through session.update, so
//   it never crosses the marks of waits;
// - it stops with the server: no timer or wait outlives close().

import { WAKE_LIMITS, wakeText } from "../../lib/sessions/wake-rule";
import type { McpCtx } from "./context";
import type { WakeWay } from "./wake-ways";

const SETTLE_MS = 1500;

export function startWake(ctx: McpCtx, way: WakeWay): () => void {
  const { bus, session } = ctx;
  const me = session.me;
  const stopped = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let waitingIdle = false;
  let running = false;
  let again = false;

  const look = async () => {
    const d = await bus.sessions.wakeCheck(me);
    if (d.wake) {
      try {
        await way.wake(wakeText(d.count, d.senders, way.read), d);
      } catch (e) {
        return ctx.log(`waking the session: ${(e as Error).message}`);
      }
      ctx.log(`woke the session (${way.name}) for ${d.count} message${d.count === 1 ? "" : "s"} from ${d.senders.join(", ")}`);
      return session.update("keeping the wake", () => bus.sessions.keepWake(me, d.mark));
    }
    if (d.mark) await session.update("keeping the wake's batch", () => bus.sessions.keepWake(me, d.mark!));
    if (d.first) ctx.log(`no more wakes until the user prompts: ${WAKE_LIMITS.run} wakes in a row with no user prompt between (the loop guard)`);
    if (d.retryAt !== undefined) {
      clearTimeout(timer);
      timer = setTimeout(() => void check(), Math.max(0, d.retryAt * 1000 - Date.now()) + 10);
    }
    if (d.why === "not-idle" && !waitingIdle) {
      // Mail that came during the session's own turn wakes it once the turn is over.
      waitingIdle = true;
      bus.sessions.waitState(me, ["idle"], { signal: stopped.signal }).then(
        (r: { kind: string }) => ((waitingIdle = false), r.kind === "done" && void check()),
        () => (waitingIdle = false),
      );
    }
  };

  const check = async () => {
    if (stopped.signal.aborted) return;
    if (running) return void (again = true);
    running = true;
    try {
      do {
        again = false;
        await look().catch((e) => ctx.log(`wake: ${(e as Error).message}`));
      } while (again && !stopped.signal.aborted);
    } finally {
      running = false;
    }
  };

  // The first look waits SETTLE_MS: Claude Code registers its channel handler a few hundred ms
  // after the handshake, and drops an event that comes before (mail waiting at the start).
  let off: (() => void) | undefined;
  const settle = setTimeout(() => {
    bus.mail.watch(me, () => void check(), (e: unknown) => ctx.log(`wake watch: ${(e as Error).message}`)).then(
      (stop: () => void) => (stopped.signal.aborted ? stop() : (off = stop)),
      (e: unknown) => ctx.log(`wake watch: ${(e as Error).message}`),
    );
  }, SETTLE_MS);
  return () => {
    stopped.abort();
    clearTimeout(settle);
    clearTimeout(timer);
    off?.();
  };
}
