// Knowing that an answer reached the client, so check_messages marks mail read only then.
//
// How it works (SDK 1.32.2): the Protocol class sends a request's response itself, after the
// tool handler has returned, through the transport's send(); a cancelled request gets no
// response at all. StdioServerTransport.send resolves when stdout.write() returned, which says
// nothing about the bytes (a full pipe queues them in memory, and a write error is only an
// 'error' event). DeliveryTransport replaces send() with a write whose callback resolves only
// when the bytes were handed to the kernel's pipe, or rejects on EPIPE and the like; when the
// message is the response to request ID, it settles the receipts waiting on ID.
//
// A receipt (Deliveries.delivered(id, signal)) therefore:
//   - resolves once the response to request `id` was written to stdout in full;
//   - rejects if that write failed, if the request was cancelled (`signal` aborts: no response
//     will ever be written), or if the server closes first (close()).
// The pipe is as far as a stdio server can see: a client killed after the bytes reached its
// pipe but before it read them is indistinguishable from one that read them.

import type { Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

interface Waiter {
  resolve(): void;
  reject(e: Error): void;
}

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
      const w: Waiter = { resolve: () => finish(), reject: finish };
      const onAbort = () => finish(new Error("the request was cancelled: no answer is sent"));
      signal?.addEventListener("abort", onAbort);
      set.add(w);
    });
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

  // Called by the transport after a write of `message` finished (err: it failed).
  written(message: JSONRPCMessage, err?: Error | null): void {
    if (!("id" in message) || "method" in message || message.id === undefined) return; // requests and notifications
    const set = this.waiting.get(message.id);
    if (!set) return;
    this.waiting.delete(message.id);
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

// StdioServerTransport whose send() resolves when the bytes are written (see the header).
export class DeliveryTransport extends StdioServerTransport {
  constructor(
    private readonly deliveries: Deliveries,
    private readonly out: Writable = process.stdout,
  ) {
    super(process.stdin, out);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => {
        this.deliveries.written(message, err);
        if (err) reject(err);
        else resolve();
      };
      try {
        this.out.write(serializeMessage(message), done);
      } catch (e) {
        done(e as Error);
      }
    });
  }
}
