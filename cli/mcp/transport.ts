// The stdio transport of `a2a mcp`: JSON-RPC lines in on stdin, answers out on stdout, and bounds
// on what a client can make the server hold, whatever it sends and however little it reads.
//
// Flow control:
// - at most MAX_IN_FLIGHT requests are served at once (handed to the SDK, not yet answered
//   nor cancelled), and none is handed over while more than MAX_UNWRITTEN bytes of answers
//   wait to be written to stdout (a client that does not read). The rest wait here, in
//   order, read and parsed. So the answers held in memory are MAX_UNWRITTEN bytes and those
//   of at most MAX_IN_FLIGHT more requests, each bounded by its tool (result.ts ANSWER_BUDGET);
// - notifications and responses from the client are never held: a cancel always gets through,
//   and a request still waiting here that it cancels is dropped unanswered (as the SDK does);
// - stdin is read on while requests wait, so its end (the client is gone) is seen and the server
//   exits even with stdout full; past MAX_BACKLOG bytes of waiting requests it is paused;
// - while answers wait unwritten, the server's own notifications (progress, resource updates,
//   mail pushes; not a listen's ack: its answer) are refused, not queued: each is sent again or
//   superseded later.
//
// Writing: send() resolves when the bytes were handed to the kernel's pipe (the write's
// callback), not when stdout.write() returned (a full pipe queues them in memory, a write error
// is only an 'error' event). It tells Deliveries when a response is being written and was.
//
// Bad input, per JSON-RPC 2.0: not JSON -> -32700, not a valid message (jsonrpc "1.0", an object
// id, no method) -> -32600, with the request's id if usable, else null; a line over MAX_LINE ->
// -32600 and the server keeps serving (the SDK's reader would close the transport); `arguments:
// null` in tools/call is no arguments. Those answers wait their turn like requests.
// A JSON array (a batch) is served, element by element, only in a session that negotiated
// 2025-03-26 (batch.ts); else it is one -32600. Revision 2026-07-28 (revision.ts) sees each
// request in its turn (its own, a listen's watches, count as served) and each message out.

import type { Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import { JSONRPCMessageSchema, type JSONRPCMessage, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { responseId, type Deliveries } from "./delivery";
import { BATCH_VERSION, Batches, type Batch } from "./batch";
import { ACKNOWLEDGED, type Revision } from "./revision";

// The longest input line served.
export const MAX_LINE = 10 * 1024 * 1024;
export const MAX_IN_FLIGHT = 16;
export const MAX_UNWRITTEN = 4 * 1024 * 1024;
export const MAX_BACKLOG = 16 * 1024 * 1024; // over MAX_LINE: one longest line always fits
const ITEM_COST = 512; // what a waiting request costs besides its bytes (the parsed object)

const idOf = (v: unknown): RequestId | null => (typeof v === "string" || (typeof v === "number" && Number.isFinite(v)) ? v : null);
const ID_RE = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})/;

// What waits its turn: a request to hand to the SDK, or an answer a2a gives (a bad line's error).
type Served = JSONRPCMessage & { id: RequestId };
type Waiting = { cost: number } & ({ request: Served; batched?: true } | { answer: JSONRPCMessage });

export class DeliveryTransport extends StdioServerTransport {
  private pending: Buffer[] = []; // the start of a line not yet ended
  private pendingBytes = 0;
  private skipping = false; // inside an oversized line, dropping bytes up to its newline
  private skippedHead = ""; // the first bytes of that line, to find its id
  private waiting: (Waiting | undefined)[] = []; // from index `head` on, oldest first
  private head = 0;
  private waitingCost = 0;
  private readonly inFlight = new Map<RequestId, number>(); // id -> requests with it being served
  private served = 0; // the sum of inFlight
  private unwritten = 0; // bytes handed to stdout whose write has not finished
  private holding = false; // requests wait for the client to read (logged once per episode)
  private initId: RequestId | undefined; // the initialize request, whose answer says the version
  private version: string | undefined; // the protocol version the session negotiated
  private readonly batches = new Batches(MAX_UNWRITTEN, (d) => (this.unwritten += d), (ms) => this.writeBatch(ms));

  constructor(
    private readonly deliveries: Deliveries,
    private readonly out: Writable = process.stdout,
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly log: (line: string) => void = () => {},
    private readonly revision?: Revision,
  ) {
    super(process.stdin, out);
  }

  override async start(): Promise<void> {
    this.input.on("data", this.take);
    this.input.on("error", (e: Error) => this.onerror?.(e));
  }

  override async close(): Promise<void> {
    this.input.off("data", this.take);
    [this.pending, this.waiting, this.head] = [[], [], 0];
    this.onclose?.();
  }

  private readonly take = (chunk: Buffer | string) => {
    let buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    for (;;) {
      const nl = buf.indexOf(10);
      if (nl < 0) {
        if (this.skipping) break;
        this.pending.push(buf);
        this.pendingBytes += buf.length;
        if (this.pendingBytes > MAX_LINE) this.startSkipping();
        break;
      }
      const tail = buf.subarray(0, nl);
      buf = buf.subarray(nl + 1);
      if (this.skipping) {
        this.skipping = false;
        const id = ID_RE.exec(this.skippedHead)?.[1];
        this.refuse(-32600, `request too large: a line over ${MAX_LINE} bytes was skipped`, id === undefined ? null : idOf(JSON.parse(id)), 0);
        continue;
      }
      const line = Buffer.concat([...this.pending, tail]).toString("utf8").replace(/\r$/, "");
      this.pending = [];
      this.pendingBytes = 0;
      if (line.trim()) this.accept(line);
    }
    this.pump();
  };

  private startSkipping(): void {
    this.skippedHead = Buffer.concat(this.pending).subarray(0, 4096).toString("utf8");
    this.pending = [];
    this.pendingBytes = 0;
    this.skipping = true;
  }

  // One input line: a request waits its turn; a notification or a response goes through.
  private accept(line: string): void {
    let value: any;
    try {
      value = JSON.parse(line);
    } catch (e) {
      return this.refuse(-32700, `parse error: ${(e as Error).message.split("\n")[0]}: send one JSON-RPC 2.0 message per line`, null, line.length);
    }
    if (!Array.isArray(value)) return this.acceptOne(value, line.length);
    if (!value.length) return this.refuse(-32600, "invalid request: an empty batch: send at least one JSON-RPC 2.0 message", null, line.length);
    if (this.version !== BATCH_VERSION) {
      const under = this.version ? `protocol version ${this.version} has none` : "none comes before initialize";
      return this.refuse(-32600, `invalid request: a batch (a JSON array) is served only under protocol version ${BATCH_VERSION}, and ${under}: send one JSON-RPC 2.0 message per line`, null, line.length);
    }
    const batch = this.batches.start();
    for (const v of value) this.acceptOne(v, Math.ceil(line.length / value.length), batch);
    this.batches.end(batch);
  }

  // One message, alone on its line or an element of `batch`.
  private acceptOne(value: any, bytes: number, batch?: Batch): void {
    if (value?.method === "tools/call" && value.params?.arguments === null) delete value.params.arguments; // "no arguments", as a client meant it
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = value && typeof value === "object" && !Array.isArray(value) ? idOf(value.id) : null;
      const message = `invalid request: not a JSON-RPC 2.0 message (jsonrpc "2.0", a string or number id, a method): check the message`;
      if (!batch) return this.refuse(-32600, message, id, bytes);
      this.log(`bad batch element: -32600 ${message}`);
      return void this.batches.hold(batch, { jsonrpc: "2.0", id, error: { code: -32600, message } } as unknown as JSONRPCMessage);
    }
    const msg = parsed.data;
    if ("method" in msg && "id" in msg) {
      if (msg.method === "initialize") this.initId = msg.id;
      if (batch) this.batches.add(batch, msg.id);
      return this.wait({ request: msg, cost: bytes + ITEM_COST, ...(batch ? { batched: true as const } : {}) });
    }
    if ("method" in msg && msg.method === "notifications/cancelled") this.cancelled(idOf((msg.params as { requestId?: unknown } | undefined)?.requestId));
    this.onmessage?.(msg);
  }

  // A cancel: a request of that id still waiting here is dropped; one being served is
  // answered by nobody (the SDK drops its answer), so it no longer counts as served.
  private cancelled(id: RequestId | null): void {
    if (id === null) return;
    const ended = this.revision?.cancelled(id); // a listen (revision.ts): no request of the SDK's
    if (ended) return ended.forEach((r) => this.serve(r as Served));
    const i = this.waiting.findIndex((w) => w && "request" in w && w.request.id === id);
    if (i >= 0) {
      this.waitingCost -= this.waiting[i]!.cost;
      this.waiting.splice(i, 1);
    } else {
      this.answered(id);
      this.deliveries.cancelled(id);
    }
    this.batches.drop(id);
  }

  private answered(id: RequestId | undefined): boolean {
    const n = id === undefined ? 0 : this.inFlight.get(id);
    if (!n) return false;
    if (n > 1) this.inFlight.set(id!, n - 1);
    else this.inFlight.delete(id!);
    this.served--;
    return true;
  }
  private serve(request: Served): void { // to the SDK, as served
    this.inFlight.set(request.id, (this.inFlight.get(request.id) ?? 0) + 1);
    this.served++;
    this.onmessage?.(request);
  }

  private refuse(code: number, message: string, id: RequestId | null, bytes: number): void {
    this.log(`bad input line: ${code} ${message}`);
    this.wait({ answer: { jsonrpc: "2.0", id, error: { code, message } } as unknown as JSONRPCMessage, cost: bytes + ITEM_COST });
  }

  private wait(w: Waiting): void {
    this.waiting.push(w);
    this.waitingCost += w.cost;
  }

  // Hands waiting requests over while the bounds allow; pauses stdin past MAX_BACKLOG.
  private pump(): void {
    while (this.head < this.waiting.length && this.served < MAX_IN_FLIGHT && this.unwritten <= MAX_UNWRITTEN) {
      const w = this.waiting[this.head]!;
      this.waiting[this.head++] = undefined; // handed over: not kept here
      this.waitingCost -= w.cost;
      if ("answer" in w) {
        this.write(w.answer, false).catch(() => {});
        continue;
      }
      const r = this.revision?.inbound(w.request as Parameters<Revision["inbound"]>[0], w.batched);
      if (!r || r.pass) this.serve(w.request);
      else {
        for (const answer of r.replies) this.write(answer, !!w.batched).catch(() => {}); // batched: into its array
        for (const own of r.internal) this.serve(own as Served);
      }
    }
    // Handed-over entries are dropped in bulk, not by one shift (a copy of the array) each.
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
    this.noteHolding();
    const input = this.input as NodeJS.ReadableStream & { pause?(): void; resume?(): void };
    if (this.waitingCost > MAX_BACKLOG) input.pause?.();
    else input.resume?.();
  }

  // Says so once when requests wait because the client does not read: checked where either side
  // moves (a request arriving, an answer queued, a write done).
  private noteHolding(): void {
    const unread = this.head < this.waiting.length && this.unwritten > MAX_UNWRITTEN;
    if (unread && !this.holding) {
      this.log(`the client is not reading its answers (${(this.unwritten / 2 ** 20).toFixed(1)} MiB unwritten): holding ${this.waiting.length - this.head} request(s) until it does`);
    }
    this.holding = unread;
  }

  override send(sent: JSONRPCMessage): Promise<void> {
    const freed = this.answered(responseId(sent));
    const out = this.revision?.outbound(sent) ?? [sent];
    if (freed && !out.length) queueMicrotask(() => this.pump()); // dropped (revision.ts): no write's end will
    return Promise.all(out.map((m) => this.sendOne(m))).then(() => {});
  }

  private sendOne(message: JSONRPCMessage): Promise<void> {
    const id = responseId(message);
    if (id === undefined && "method" in message && !("id" in message) && message.method !== ACKNOWLEDGED && this.unwritten > MAX_UNWRITTEN) {
      return Promise.reject(new Error("the client is not reading: notification not sent"));
    }
    if (id === undefined) return this.write(message, true);
    if (id === this.initId && "result" in message) {
      const v = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof v === "string") this.version = v;
    }
    return this.write(message, true);
  }

  // Writes one message: the SDK's (`receipts`: it may settle Deliveries' receipts), or an answer
  // of a2a's own (a bad line's: its id may be any request's).
  private write(message: JSONRPCMessage, receipts: boolean): Promise<void> {
    if (receipts) this.deliveries.sending(message);
    const id = receipts ? responseId(message) : undefined;
    const held = id === undefined ? undefined : this.batches.answer(id, message);
    if (held) queueMicrotask(() => this.pump()); // a place was freed, and no write's end will say so
    return held ?? this.writeLine(serializeMessage(message), id === undefined ? [] : [id]);
  }

  // The answers of a batch as one array; each settles its receipts once written.
  private writeBatch(messages: JSONRPCMessage[]): Promise<void> {
    return this.writeLine(`${JSON.stringify(messages)}\n`, messages.map(responseId).filter((id): id is RequestId => id !== undefined));
  }

  private writeLine(line: string, ids: RequestId[]): Promise<void> {
    // Bytes, and nothing else of the message kept: a waiting answer costs its size once.
    const data = Buffer.from(line, "utf8"), bytes = data.length;
    this.unwritten += bytes;
    this.noteHolding();
    return new Promise<void>((resolve, reject) => {
      let over = false;
      const done = (err?: Error | null) => {
        if (over) return;
        over = true;
        this.unwritten -= bytes;
        for (const id of ids) this.deliveries.written(id, err);
        if (err) reject(err);
        else resolve();
        this.pump();
      };
      try {
        this.out.write(data, done);
      } catch (e) {
        done(e as Error);
      }
    });
  }
}
