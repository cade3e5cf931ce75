// `a2a hook wake --agent opencode`: run by a2a's opencode plugin while a session sits idle at its
// prompt (cli/agents/opencode-plugin.asset.js); it waits until mail should wake the session, then
// answers the reason to look ({block}), which the plugin sends as the session's next prompt. The
// plugin ends it (SIGTERM) when a turn starts first: the user's prompt always goes before a wake.
// A wake is a reason to look, never a delivery: the mail stays unread until the session reads it.

import { MAX_BLOCKS } from "../lib/sessions/limits";
import { stopText } from "./agents/hook-text";
import type { Ctx } from "./run";

// `signal`, aborted too once the process that started this one is gone (opencode killed: it ends
// its hook processes only when it exits), looked at every second: the waiter must not outlive it.
function orphaned(signal: AbortSignal): AbortSignal {
  const parent = process.ppid;
  const ac = new AbortController();
  const timer = setInterval(() => process.ppid !== parent && ac.abort(), 1000);
  timer.unref();
  return AbortSignal.any([signal, ac.signal]);
}

// The wake's text for session `name`, once mail should wake it; undefined when the wait was ended.
export async function nextWake(c: Ctx, name: string): Promise<string | undefined> {
  const signal = orphaned(c.signal());
  for (;;) {
    const got = await c.bus.sessions.waitForWork(name, Number.POSITIVE_INFINITY, signal);
    if (got.kind !== "done") return undefined;
    const d = await c.bus.sessions.stop(name, false, MAX_BLOCKS, false);
    if (d.block) return stopText(name, d);
  }
}
