// JSON-RPC batches on `a2a mcp`'s stdio (transport.ts): a JSON array of messages on one line,
// which MCP 2025-03-26 requires a server to accept and 2025-06-18 removed. The transport takes
// each element as a line of its own (its requests wait their turn and count against
// MAX_IN_FLIGHT one by one; a bad element is answered with its error); this module holds the
// answers to a batch's requests and writes them together, as one array, once each request is
// answered or cancelled (no line at all for a batch of notifications only).
//
// Bounds: answers held here count as unwritten (the transport hands nothing more over past
// MAX_UNWRITTEN), and once a batch holds more than MAX_UNWRITTEN bytes what it holds is written
// as an array of its own, so a batch never makes the server hold more than single lines would
// (JSON-RPC says a server SHOULD answer a batch with one array: this is the exception).

import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";

// The only version whose sessions may send batches (2024-11-05 had none).
export const BATCH_VERSION = "2025-03-26";

export interface Batch {
  open: number; // requests not yet answered nor cancelled
  held: JSONRPCMessage[];
  bytes: number;
  done: (() => void)[]; // the SDK's send() promises for the answers held
}

export class Batches {
  private readonly of = new Map<RequestId, Batch>(); // requests of a batch not yet answered

  constructor(
    private readonly limit: number, // MAX_UNWRITTEN
    private readonly unwritten: (delta: number) => void, // the transport's count of answers not written
    private readonly writeArray: (messages: JSONRPCMessage[]) => Promise<void>,
  ) {}

  start(): Batch {
    return { open: 0, held: [], bytes: 0, done: [] };
  }

  // Request `id` of `batch` was read: its answer joins the batch's.
  add(batch: Batch, id: RequestId): void {
    batch.open++;
    this.of.set(id, batch);
  }

  // Every element of `batch` was read: a batch with no request to wait for is answered now.
  end(batch: Batch): void {
    if (!batch.open) this.flush(batch);
  }

  // The answer to request `id`: held when it is a batch's (the promise resolves once written), else undefined.
  answer(id: RequestId, message: JSONRPCMessage): Promise<void> | undefined {
    const batch = this.of.get(id);
    if (!batch) return undefined;
    this.of.delete(id);
    const written = this.hold(batch, message);
    if (!--batch.open) this.flush(batch);
    return written;
  }

  // Request `id` will have no answer (cancelled): its batch may be complete.
  drop(id: RequestId): void {
    const batch = this.of.get(id);
    if (!batch) return;
    this.of.delete(id);
    if (!--batch.open) this.flush(batch);
  }

  // Keeps an answer (or a bad element's error) of `batch`.
  hold(batch: Batch, message: JSONRPCMessage): Promise<void> {
    const bytes = Buffer.byteLength(serializeMessage(message), "utf8");
    batch.held.push(message);
    batch.bytes += bytes;
    this.unwritten(bytes);
    const written = new Promise<void>((resolve) => batch.done.push(resolve));
    if (batch.bytes > this.limit) this.flush(batch);
    return written;
  }

  private flush(batch: Batch): void {
    const { held, bytes, done } = batch;
    batch.held = [];
    batch.bytes = 0;
    batch.done = [];
    this.unwritten(-bytes);
    if (!held.length) return;
    const settle = () => done.forEach((d) => d());
    this.writeArray(held).then(settle, settle);
  }
}
