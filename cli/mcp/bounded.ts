// How every blocking tool waits (agent_wait, agent_wait_all, task_claim, task_wait,
// lease_take): a lib wait run for at most min(timeout, the cap) seconds, so one call never
// outlives what a client tolerates; with a progressToken, a notifications/progress every
// progressMs saying what is awaited; cancellation (the request's signal) or server shutdown
// ends it at once. The outcome says done, timeout (the whole timeout ran out), still_waiting
// (the cap came first: call again with `remaining`), or cancelled. While it blocks, the session
// is marked waiting, on what the first progress line says (cli/mcp/session.ts waiting).

import type { Outcome } from "../../lib/core/outcome";
import type { McpCtx } from "./context";
import type { Extra } from "./result";

export type Bounded<T> = { kind: "done"; value: T; waited: number } | { kind: "timeout" | "still_waiting" | "cancelled"; waited: number; remaining: number; pending: string[] };

// Runs a lib wait for at most min(timeout, cap) seconds, with progress and cancellation.
export async function bounded<T>(
  ctx: McpCtx,
  extra: Extra,
  timeout: number,
  progress: () => string | Promise<string>,
  run: (timeoutMs: number, signal: AbortSignal) => Promise<Outcome<T>>,
): Promise<Bounded<T>> {
  const budget = Math.min(timeout, ctx.maxWaitSec);
  const t0 = performance.now();
  const waited = () => (performance.now() - t0) / 1000;
  const stop = new AbortController();
  const abort = () => stop.abort();
  extra.signal.addEventListener("abort", abort);
  ctx.shutdown.addEventListener("abort", abort);
  if (extra.signal.aborted || ctx.shutdown.aborted) stop.abort();
  const token = extra._meta?.progressToken;
  let over = false; // answered: a progress read still under way sends nothing after the answer
  const tick = async () => {
    const secs = waited();
    let what: string;
    try {
      what = await progress();
    } catch (e) {
      return ctx.warn(`progress: ${(e as Error).message}`); // what is awaited could not be read: no notification this time
    }
    if (over) return;
    await extra
      .sendNotification({ method: "notifications/progress", params: { progressToken: token!, progress: secs, total: budget, message: `${what}, ${Math.round(secs)} s` } })
      .catch(() => {}); // the client is gone: shutdown follows
  };
  const timer = token === undefined ? undefined : setInterval(() => void tick(), ctx.progressMs);
  const on = async () => (await Promise.resolve().then(progress).catch(() => "a wait")).replace(/^waiting for /, "");
  try {
    const o = await ctx.session.waiting(on, () => run(budget * 1000, stop.signal));
    if (o.kind === "done") return { kind: "done", value: o.value, waited: waited() };
    if (o.kind === "aborted") return { kind: "cancelled", waited: waited(), remaining: Math.max(0, timeout - waited()), pending: o.pending };
    return { kind: timeout > budget ? "still_waiting" : "timeout", waited: waited(), remaining: Math.max(0, timeout - budget), pending: o.pending };
  } finally {
    over = true;
    if (timer) clearInterval(timer);
    extra.signal.removeEventListener("abort", abort);
    ctx.shutdown.removeEventListener("abort", abort);
  }
}
