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
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";

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

// The longest input line served; a longer one is skipped to its newline and answered with an
// error, and the server goes on (the SDK's reader would close the transport instead).
export const MAX_LINE = 10 * 1024 * 1024;

const idOf = (v: unknown): RequestId | null => (typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) ? v : null);

// StdioServerTransport with its own reading of stdin and writing of stdout:
// - send() resolves when the bytes are written (see the header), and while stdout is full
//   stdin is paused, so a client that never reads cannot make the server buffer without end;
// - every input line gets an answer or a dispatch, per JSON-RPC 2.0: not JSON -> -32700,
//   not a valid message (jsonrpc "1.0", an object id, no method) -> -32600, with the request's
//   id when it has a usable one, else null; a line over MAX_LINE -> -32600 and the server
//   keeps serving; `arguments: null` in tools/call is taken as no arguments.
export class DeliveryTransport extends StdioServerTransport {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private skipping = false; // inside an oversized line, dropping bytes up to its newline
  private skippedHead = ""; // the first bytes of that line, to find its id
  private blocked = 0; // writes waiting for stdout to drain
  private readonly lines: string[] = []; // read, not yet dispatched (held while stdout is full)

  constructor(
    private readonly deliveries: Deliveries,
    private readonly out: Writable = process.stdout,
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly onBadLine: (why: string) => void = () => {},
  ) {
    super(process.stdin, out);
  }

  override async start(): Promise<void> {
    this.input.on("data", this.take);
    this.input.on("error", (e: Error) => this.onerror?.(e));
  }

  override async close(): Promise<void> {
    this.input.off("data", this.take);
    this.pending = [];
    this.onclose?.();
  }

  private readonly take = (chunk: Buffer | string) => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (this.skipping) return;
        this.pending.push(buf);
        this.pendingBytes += buf.length;
        if (this.pendingBytes > MAX_LINE) this.startSkipping();
        return;
      }
      const tail = buf.subarray(0, nl);
      buf = buf.subarray(nl + 1);
      if (this.skipping) {
        this.skipping = false;
        this.reject(-32600, `request too large: a line over ${MAX_LINE} bytes was skipped`, idOf(/"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})/.exec(this.skippedHead)?.[1] !== undefined ? JSON.parse(/"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})/.exec(this.skippedHead)![1]) : null));
        continue;
      }
      const line = Buffer.concat([...this.pending, tail]).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      if (line.trim()) this.lines.push(line);
      this.pump();
    }
  };

  // Dispatches read lines while stdout takes what is written: a client that stops reading
  // leaves its further requests queued (and stdin paused), never their answers in memory.
  private pump(): void {
    while (!this.blocked && this.lines.length) this.dispatch(this.lines.shift()!);
    const input = this.input as NodeJS.ReadableStream & { pause?(): void; resume?(): void };
    if (this.blocked || this.lines.length > 256) input.pause?.();
    else input.resume?.();
  }

  private startSkipping(): void {
    this.skippedHead = Buffer.concat(this.pending).subarray(0, 4096).toString("utf8");
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = true;
  }

  private reject(code: number, message: string, id: RequestId | null): void {
    this.onBadLine(`${code} ${message}`);
    this.send({ jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage).catch(() => {});
  }

  private dispatch(line: string): void {
    let value: any;
    try {
      value = JSON.parse(line);
    } catch (e) {
      return this.reject(-32700, `parse error: ${(e as Error).message.split("\n")[0]}: send one JSON-RPC 2.0 message per line`, null);
    }
    if (value && typeof value === "object" && value.method === "tools/call" && value.params && value.params.arguments === null) {
      delete value.params.arguments; // "no arguments", as a client meant it
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = value && typeof value === "object" && !Array.isArray(value) ? idOf(value.id) : null;
      return this.reject(-32600, `invalid request: not a JSON-RPC 2.0 message (jsonrpc "2.0", a string or number id, a method): check the message`, id);
    }
    this.onmessage?.(parsed.data);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = (err?: Error | null) => {
        this.deliveries.written(message, err);
        if (err) reject(err);
        else resolve();
      };
      try {
        if (!this.out.write(serializeMessage(message), done)) {
          // stdout is full: no more requests until the client drains what is queued.
          this.blocked++;
          (this.input as any).pause?.();
          this.out.once("drain", () => {
            this.blocked--;
            this.pump();
          });
        }
      } catch (e) {
        done(e as Error);
      }
    });
  }
}
