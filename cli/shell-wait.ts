// A blocking command in a session's shell (`a2a wait`, `recv --wait`, `task claim --wait`) shows
// that session waiting, on what, in `a2a peers` and the dashboard, and puts its mark back after
// (lib/sessions/state.ts markShellWait; docs/PROTOCOL.md §11).
//
// Invariants: the mark is armed only once the wait has blocked for ARM_MS, so a wait that returns
// at once (a slot already published: the case the start-up bench times) loads no session code and
// writes nothing; marking never fails or delays the wait's own outcome beyond putting the mark back.

import type { Ctx } from "./run";

const ARM_MS = 100; // as a2a mcp's blocking tools (docs/PROTOCOL.md §11, Session state, step 2)

export async function shellWait<T>(c: Ctx, given: string | undefined, on: string, wait: () => Promise<T>): Promise<T> {
  let marking: ReturnType<Ctx["bus"]["sessions"]["markShellWait"]> | undefined;
  const timer = setTimeout(() => {
    marking = c.bus.sessions.markShellWait(given, process.cwd(), on).catch(() => undefined);
  }, ARM_MS);
  try {
    return await wait();
  } finally {
    clearTimeout(timer);
    const marked = await marking;
    if (marked) await c.bus.sessions.endWait(marked.name, marked.before).catch(() => {});
  }
}
