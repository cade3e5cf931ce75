// Knowing that an answer reached the client, so that what a tool hands out (mail marked read
// by check_messages, a task claimed by task_claim, names taken by lease_take) is kept only
// when its answer was written, and given back otherwise.
//
// How it works (SDK 1.32.2): the Protocol class sends a request's response itself, after the
// tool handler has returned, through the transport's send(), checking just before that the
// request was not cancelled: a cancelled request gets no response at all. The transport
// (transport.ts) tells Deliveries when it starts writing a response (sending) and when the
// write finished (written: the bytes were handed to the kernel's pipe, or the write failed).
//
// A receipt (Deliveries.delivered(id, signal)) therefore:
//   - resolves once the response to request `id` was written to stdout in full;
//   - rejects if that write failed, if the request was cancelled (`signal` aborts) before
//     its response was handed to the transport (no response will ever be written), or if the
//     server closes before the write finished (close()).
// A cancel that comes after the response was handed to the transport does not reject it:
// the answer is on its way and the client may act on it (and a tool must not take back what
// the client may hold).
// The pipe is as far as a stdio server can see: a client killed after the bytes reached its
// pipe but before it read them is indistinguishable from one that read them.

import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

interface Waiter {
  commit(): void; // the response is being written: a cancel no longer rejects
  resolve(): void;
  reject(e: Error): void;
}

// The id of `message` when it is a response (to a request of the client), else undefined.
export const responseId = (message: JSONRPCMessage): RequestId | undefined =>
  "id" in message && !("method" in message) && message.id !== undefined && message.id !== null ? message.id : undefined;

export class Deliveries {
  private readonly waiting = new Map<RequestId, Set<Waiter>>();
  private readonly tracked = new Set<Promise<unknown>>();
  private closed = false;

  // See the header. Register before the handler returns: the response follows right after.
  delivered(id: RequestId, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) return reject(new Error("the server is closing: the answer may never reach the client"));
      if (signal?.aborted) return reject(new Error("the request was cancelled: no answer is sent"));
      const set = this.waiting.get(id) ?? new Set<Waiter>();
      this.waiting.set(id, set);
      let over = false;
      const finish = (e?: Error) => {
        if (over) return;
        over = true;
        signal?.removeEventListener("abort", onAbort);
        set.delete(w);
        if (!set.size && this.waiting.get(id) === set) this.waiting.delete(id);
        if (e) reject(e);
        else resolve();
      };
      const onAbort = () => finish(new Error("the request was cancelled: no answer is sent"));
      const w: Waiter = { commit: () => signal?.removeEventListener("abort", onAbort), resolve: () => finish(), reject: finish };
      signal?.addEventListener("abort", onAbort);
      set.add(w);
    });
  }

  // Runs `undo` unless the answer to request `id` is written (a receipt that rejects), and
  // keeps that work so close() waits for it. For what a tool hands out that must not stay
  // taken by a client that never learnt of it.
  undoUnlessDelivered(id: RequestId, signal: AbortSignal, undo: (why: Error) => void | Promise<void>): void {
    this.track(this.delivered(id, signal).catch(undo));
  }

  // Keeps `p` (work that ends with a receipt) so close() can wait for it to finish.
  track<T>(p: Promise<T>): Promise<T> {
    this.tracked.add(p);
    p.then(
      () => this.tracked.delete(p),
      () => this.tracked.delete(p),
    );
    return p;
  }

  // Called by the transport when it starts writing `message`: from here on the response is
  // the client's, whatever cancel comes.
  sending(message: JSONRPCMessage): void {
    const id = responseId(message);
    if (id !== undefined) for (const w of this.waiting.get(id) ?? []) w.commit();
  }

  // Called by the transport after a write of the response to request `id` finished (err: it failed).
  written(id: RequestId, err?: Error | null): void {
    const set = this.waiting.get(id);
    if (!set) return;
    this.waiting.delete(id);
    for (const w of [...set]) (err ? w.reject(new Error(`the answer could not be written: ${err.message}`)) : w.resolve());
  }

  // Every open receipt is rejected; resolves when the tracked work has finished.
  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.reject(new Error("the server closed before the answer was written"));
    this.waiting.clear();
    await Promise.allSettled([...this.tracked]);
  }
}
