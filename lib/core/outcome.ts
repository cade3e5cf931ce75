// The one outcome of every blocking call (wait for slots, receive mail, tail, subscribe,
// watch, claim a task): it ended because what was waited for happened (done), because its
// time ran out (timeout), or because its caller stopped it (aborted: a signal, a cancelled
// MCP request, a server shutting down). Each carries the value so far and what is still
// pending, so an adapter can say "timed out waiting for b, c" without lib/ phrasing it:
// the CLI maps timeout to exit 124 and aborted to 128+N, MCP to `timeout` / `still_waiting`.
// A blocking call never throws for timeout or abort; it throws only for real failures.

export type Ending = "done" | "timeout" | "aborted";

export interface Outcome<T> {
  kind: Ending;
  value: T; // the result when done; what was gathered so far otherwise
  pending: string[]; // what was still awaited (names, an inbox, a queue); empty when done
}

export const done = <T>(value: T): Outcome<T> => ({ kind: "done", value, pending: [] });
export const ended = <T>(kind: Ending, value: T, pending: string[]): Outcome<T> => ({ kind, value, pending });
