// How a blocking command ends, from lib's Outcome: done returns the value; a timeout is exit
// 124 with a message naming what was still pending; aborted (a signal) is exit 128+N, set by
// the signal handler. One place, so every blocking command maps them the same way.

import { A2AError, type Part } from "../lib/core/errors";
import type { Outcome } from "../lib/core/outcome";

export function timedOut(pending: string[], what: (pending: string[]) => Part[]): never {
  throw new A2AError("ETIMEDOUT", what(pending), { data: { pending } });
}

// The value of a done outcome; a timeout throws (exit 124); aborted returns undefined.
export function settle<T>(o: Outcome<T>, onTimeout: (pending: string[]) => Part[]): T | undefined {
  if (o.kind === "timeout") timedOut(o.pending, onTimeout);
  return o.kind === "done" ? o.value : undefined;
}
