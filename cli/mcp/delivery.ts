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
// the client may hold) while the server runs. But a client that cancels before it has read the
// answer ignores it when it comes (the MCP spec says it should: the SDK client drops it), so
// what such an answer handed out is given back when the server closes (undoUnlessDelivered):
// once the server is gone no call of that client can still use it.
// The pipe is as far as a stdio server can see: a client killed after the bytes reached its
// pipe but before it read them is indistinguishable from one that read them.

import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

interface Waiter {
  committed: boolean;
  commit(): void; // the response is being written: a cancel no longer rejects
  resolve(): void;
  reject(e: Error): void;
}

// The id of `message` when it is a response (to a request of the client), else undefined.
export const responseId = (message: JSONRPCMessage): RequestId | undefined =>
  "id" in message && !("method" in message) && message.id !== undefined && message.id !== null ? message.id : undefined;

type Undo = (why: Error) => void | Promise<void>;

// How many answered hand-outs are remembered for a late cancel: one comes while its answer is
// in transit, so only the most recent ones can get one.
const LATE_KEPT = 256;

export class Deliveries {
  private readonly waiting = new Map<RequestId, Set<Waiter>>();
  private readonly tracked = new Set<Promise<unknown>>();
  private readonly answered = new Map<RequestId, Undo[]>(); // written hand-outs, oldest first
  private readonly cancelledInWrite = new Set<RequestId>(); // cancelled while their answer was being written
  private readonly ignored: Undo[] = []; // hand-outs whose answer came after the client's cancel
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
      const w: Waiter = {
        committed: false,
        commit: () => {
          w.committed = true;
          signal?.removeEventListener("abort", onAbort);
        },
        resolve: () => finish(),
        reject: finish,
      };
      signal?.addEventListener("abort", onAbort);
      set.add(w);
    });
  }

  // Runs `undo` unless the answer to request `id` is written (a receipt that rejects), and
  // keeps that work so close() waits for it. For what a tool hands out that must not stay
  // taken by a client that never learnt of it.
  // Written, it is still undone at close() when a cancel of the request came after it (see the header).
  undoUnlessDelivered(id: RequestId, signal: AbortSignal, undo: Undo): void {
    this.track(this.delivered(id, signal).then(() => this.keep(id, undo), undo));
  }

  private keep(id: RequestId, undo: Undo): void {
    if (this.cancelledInWrite.delete(id)) return void this.ignored.push(undo);
    const list = this.answered.get(id) ?? [];
    list.push(undo);
    this.answered.delete(id); // re-inserted as the newest
    this.answered.set(id, list);
    for (const old of this.answered.keys()) {
      if (this.answered.size <= LATE_KEPT) break;
      this.answered.delete(old);
    }
  }

  // Called by the transport for every cancel from the client: one whose answer was already
  // written (or is being written) marks what that answer handed out for close().
  cancelled(id: RequestId): void {
    const list = this.answered.get(id);
    if (list) {
      this.answered.delete(id);
      this.ignored.push(...list);
    } else if ([...(this.waiting.get(id) ?? [])].some((w) => w.committed)) {
      this.cancelledInWrite.add(id);
      if (this.cancelledInWrite.size > LATE_KEPT) this.cancelledInWrite.delete(this.cancelledInWrite.values().next().value!);
    }
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

  // Every open receipt is rejected, what answers after a cancel handed out is undone; resolves
  // when the tracked work has finished, work that began meanwhile (a hand-out under way) too.
  async close(): Promise<void> {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.reject(new Error("the server closed before the answer was written"));
    this.waiting.clear();
    for (const undo of this.ignored.splice(0)) this.track(Promise.resolve().then(() => undo(new Error("the client cancelled the call before it read the answer, and ignored it"))));
    while (this.tracked.size) await Promise.allSettled([...this.tracked]);
  }
}
