// MCP revision 2026-07-28 beside the versions the SDK (1.32.2) negotiates with `initialize`
// (2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05), on the same stdio and the same handlers.
// Under the revision there is no handshake: each request carries its own envelope in
// params._meta (the protocol version, the client's capabilities, optionally its info), the
// server answers `server/discover` with what it speaks, every result says `resultType`, lists
// and reads carry cache hints, and change notifications reach a client only through an open
// `subscriptions/listen` request.
//
// Why a module of a2a's own and not the SDK's v2 (@modelcontextprotocol/server 2.4.0, which
// carries the revision): measured, v2 costs +114 KB of binary, +4.5 ms from start to tools/list
// and +2.9 MiB of RSS, and porting to it redoes transport.ts's flow control, compact.ts,
// protocol-errors.ts and every registration. What the revision changes on stdio is an envelope
// around the same methods: this module checks it, completes the results and routes the
// notifications; the SDK's handlers serve the methods whatever the revision. It costs +24 KB of
// binary, and start to tools/list and RSS within noise of none (30 interleaved starts each).
//
// A request is served under the revision when its _meta names a protocol version (the claim);
// one without is 2025-era traffic, answered as before. Once a revision request is seen and no
// `initialize` was, the session is the revision's: list_changed and resources/updated go only
// to the listens that asked for them (with their subscription id), log lines only at or above
// the level an envelope asked for; progress and the channel push go out as before.

import { randomUUID } from "node:crypto";
import type { JSONRPCMessage, RequestId, ServerCapabilities, Implementation } from "@modelcontextprotocol/sdk/types.js";

export const REVISION = "2026-07-28";
const PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
const CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
const CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
export const ACKNOWLEDGED = "notifications/subscriptions/acknowledged";
const UNSUPPORTED_VERSION = -32022;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const INVALID_REQUEST = -32600;
const LOG_LEVEL = "io.modelcontextprotocol/logLevel";
// Clients served the 2025 handshake even when they would take this revision (inbound).
const WANTS_2025 = new Set(["claude-code"]);
// Results a client may cache: a2a's change at any moment (slots come and go), so never for long.
const CACHEABLE = new Set(["server/discover", "tools/list", "resources/list", "resources/templates/list", "resources/read", "prompts/list"]);
const CHANGES: Record<string, keyof Filter> = {
  "notifications/tools/list_changed": "toolsListChanged",
  "notifications/prompts/list_changed": "promptsListChanged",
  "notifications/resources/list_changed": "resourcesListChanged",
};
const MAX_LISTENS = 64;
const MAX_URIS = 256; // per listen: each is a watch subscription asked of the SDK, served at once
// What the revision removed (the handshake, ping, session-wide subscriptions and log level, the
// SDK's own tasks): under it they are methods like any unknown one.
const REMOVED = new Set(["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel"]);
const LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

interface Filter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}
type Note = { jsonrpc: "2.0"; method: string; params?: Record<string, unknown> };
type Request = { jsonrpc: "2.0"; id: RequestId; method: string; params?: { _meta?: Record<string, unknown>; [k: string]: unknown } };

export interface RevisionHost {
  capabilities(): ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
  // The client's identity from an envelope, as `initialize` would give it.
  client(info: Implementation | undefined, capabilities: Record<string, unknown>): void;
}

// What to do with a request: hand it to the SDK (`pass`), or write `replies` in its turn and
// hand `internal` requests (a2a's own, whose answers nobody reads) to the SDK.
export type Inbound = { pass: true } | { pass: false; replies: JSONRPCMessage[]; internal: Request[] };

const error = (id: RequestId, code: number, message: string, data?: unknown) =>
  ({ jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } }) as unknown as JSONRPCMessage;
const PASS: Inbound = { pass: true };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class Revision {
  private readonly served = new Map<RequestId, string>(); // revision requests being served -> method
  private readonly listens = new Map<RequestId, Filter>();
  private readonly internal = new Map<RequestId, { listen?: RequestId; uri?: string }>(); // a2a's own request -> what it arms
  private readonly arming = new Map<RequestId, number>(); // listen -> its own requests not yet answered
  private legacy = false; // `initialize` came: 2025-era notifications, unsolicited
  private modern = false;
  private named = false; // the client's identity was told
  private seq = 0;
  // In a2a's own request ids: a client's request of the same id would take their answer (and
  // a2a its), so the ids are none a client could know.
  private readonly nonce = randomUUID();
  private logLevel = LEVELS.length; // log lines a revision client asked for (_meta logLevel): none by default

  constructor(private readonly host: RevisionHost) {}

  // `batched`: an element of a 2025-03-26 batch. The revision has no batches: one of its
  // requests there is refused, not served as the session's (ping answered, discover unknown).
  inbound(msg: Request, batched = false): Inbound {
    const meta = isObject(msg.params?._meta) ? msg.params._meta : undefined;
    if (batched) return meta && PROTOCOL_VERSION in meta ? this.reply(msg, undefined, error(msg.id, INVALID_REQUEST, `invalid request: a batch holds no request of protocol version ${REVISION}, which has no batches: send it alone on its line`)) : PASS;
    if (!meta || !(PROTOCOL_VERSION in meta)) {
      if (msg.method === "initialize") [this.legacy, this.modern] = [true, false]; // a session from now on
      if (msg.method !== "server/discover") return PASS; // 2025-era traffic
      return this.reply(msg, undefined, error(msg.id, INVALID_PARAMS, `invalid _meta envelope: ${PROTOCOL_VERSION} is missing: send the per-request envelope (${REVISION}) with server/discover`, { envelope: { key: PROTOCOL_VERSION, problem: "missing" } }));
    }
    const version = meta[PROTOCOL_VERSION];
    if (version !== REVISION) {
      // Not String(version): an object without a usable toString throws. Cut: it is echoed twice.
      const requested = (typeof version === "string" ? version : JSON.stringify(version) ?? "undefined").slice(0, 100);
      return this.reply(msg, undefined, error(msg.id, UNSUPPORTED_VERSION, `unsupported protocol version ${JSON.stringify(requested)}: send ${REVISION} in _meta, or none and initialize`, { supported: [REVISION], requested }));
    }
    const caps = meta[CLIENT_CAPABILITIES];
    if (!isObject(caps)) {
      const problem = caps === undefined ? "missing" : "not an object";
      return this.reply(msg, undefined, error(msg.id, INVALID_PARAMS, `invalid _meta envelope: ${CLIENT_CAPABILITIES} is ${problem}: send the client's capabilities on each request`, { envelope: { key: CLIENT_CAPABILITIES, problem } }));
    }
    const info = meta[CLIENT_INFO];
    // Claude Code (2.x) skips channel notifications on a connection of this revision ("no
    // unsolicited notification path"), and its channel is a2a's way into an idle session
    // (wake-ways.ts): its discover is answered as a 2025 server answers it, so it falls back to
    // initialize and a 2025 session, where the channel works.
    if (msg.method === "server/discover" && isObject(info) && WANTS_2025.has(info.name as string)) {
      return this.reply(msg, undefined, error(msg.id, METHOD_NOT_FOUND, `method not found: server/discover: this server speaks 2025-11-25 to ${info.name}, whose channel needs it: initialize`));
    }
    if (!this.legacy) this.modern = true;
    if (!this.named) {
      this.named = isObject(info) && typeof info.name === "string";
      this.host.client(this.named ? (info as Implementation) : undefined, caps);
    }
    if (REMOVED.has(msg.method)) return this.reply(msg, undefined, error(msg.id, METHOD_NOT_FOUND, `method not found: ${msg.method} is not part of protocol version ${REVISION}`));
    // indexOf, not String(): a client's value may be an object no string can be made of.
    const level = LEVELS.indexOf(meta[LOG_LEVEL] as string);
    if (level >= 0) this.logLevel = level;
    if (msg.method === "server/discover") return this.reply(msg, this.complete("server/discover", this.discover()));
    if (msg.method === "subscriptions/listen") return this.listen(msg);
    this.served.set(msg.id, msg.method);
    return PASS;
  }

  // A cancel of a listen ends it (no answer, as for any cancelled request), and unsubscribes
  // what no other listen holds: a2a's own requests to hand to the SDK, or undefined if `id`
  // is no listen.
  cancelled(id: RequestId): Request[] | undefined {
    this.served.delete(id);
    const filter = this.listens.get(id);
    if (!filter) return undefined;
    this.listens.delete(id);
    this.arming.delete(id);
    const held = new Set([...this.listens.values()].flatMap((f) => f.resourceSubscriptions ?? []));
    return (filter.resourceSubscriptions ?? []).filter((uri) => !held.has(uri)).map((uri) => this.own("resources/unsubscribe", { uri }));
  }

  // What the SDK sends, as it goes out: a revision result completed, an internal answer
  // dropped, a change notification routed to the listens that asked for it.
  outbound(msg: JSONRPCMessage): JSONRPCMessage[] {
    if ("id" in msg && !("method" in msg)) {
      if (this.internal.has(msg.id as RequestId)) return this.armed(msg.id as RequestId, "error" in msg);
      const method = this.served.get(msg.id as RequestId);
      if (method === undefined) return [msg];
      this.served.delete(msg.id as RequestId);
      return "result" in msg ? [{ ...msg, result: this.complete(method, msg.result as Record<string, unknown>) } as JSONRPCMessage] : [msg];
    }
    if (!this.modern || !("method" in msg) || "id" in msg) return [msg];
    if (msg.method === "notifications/message") return LEVELS.indexOf(msg.params?.level as string) >= this.logLevel ? [msg] : [];
    const uri = (msg.params as { uri?: unknown } | undefined)?.uri;
    const gate = CHANGES[msg.method];
    if (!gate && msg.method !== "notifications/resources/updated") return [msg];
    const out: JSONRPCMessage[] = [];
    for (const [id, f] of this.listens) {
      if (gate ? f[gate] : typeof uri === "string" && f.resourceSubscriptions?.includes(uri)) out.push(this.stamp(msg as Note, id));
    }
    return out;
  }

  private discover(): Record<string, unknown> {
    return { supportedVersions: [REVISION], capabilities: this.host.capabilities(), ...(this.host.instructions ? { instructions: this.host.instructions } : {}) };
  }

  private complete(method: string, result: Record<string, unknown>): Record<string, unknown> {
    const meta = isObject(result._meta) ? result._meta : {};
    return {
      ...result,
      resultType: result.resultType ?? "complete",
      ...(CACHEABLE.has(method) ? { ttlMs: result.ttlMs ?? 0, cacheScope: result.cacheScope ?? "private" } : {}),
      _meta: { ...meta, [SERVER_INFO]: this.host.serverInfo },
    };
  }

  private reply(msg: Request, result?: Record<string, unknown>, err?: JSONRPCMessage, internal: Request[] = []): Inbound {
    const out = err ?? ({ jsonrpc: "2.0", id: msg.id, result: result ?? {} } as unknown as JSONRPCMessage);
    return { pass: false, replies: [out], internal };
  }

  // The answer to a2a's own request came: a listen it armed is acknowledged once all of its
  // are, without the URIs a2a could not watch (not a slot's: their subscribe failed).
  private armed(id: RequestId, failed: boolean): JSONRPCMessage[] {
    const { listen, uri } = this.internal.get(id)!;
    this.internal.delete(id);
    const filter = listen === undefined ? undefined : this.listens.get(listen);
    if (!filter) return [];
    if (failed && uri !== undefined) {
      filter.resourceSubscriptions = filter.resourceSubscriptions?.filter((u) => u !== uri);
      if (!filter.resourceSubscriptions?.length) delete filter.resourceSubscriptions;
    }
    const left = (this.arming.get(listen!) ?? 1) - 1;
    if (left > 0) {
      this.arming.set(listen!, left);
      return [];
    }
    this.arming.delete(listen!);
    return this.acknowledge(listen!, filter);
  }

  // The ack of a listen with what it honors; one that honors nothing ends at once, gracefully.
  private acknowledge(id: RequestId, honored: Filter): JSONRPCMessage[] {
    const ack = this.stamp({ jsonrpc: "2.0", method: ACKNOWLEDGED, params: { notifications: { ...honored } } }, id);
    if (Object.keys(honored).length > 0) return [ack];
    this.listens.delete(id);
    return [ack, { jsonrpc: "2.0", id, result: this.complete("subscriptions/listen", { _meta: { [SUBSCRIPTION_ID]: id } }) } as unknown as JSONRPCMessage];
  }

  private own(method: string, params: Record<string, unknown> = {}, listen?: RequestId): Request {
    const id = `a2a-${this.nonce}-${++this.seq}`;
    this.internal.set(id, { listen, uri: typeof params.uri === "string" ? params.uri : undefined });
    return { jsonrpc: "2.0", id, method, params };
  }

  private stamp(msg: Note, id: RequestId): JSONRPCMessage {
    const params = msg.params ?? {};
    const meta = isObject(params._meta) ? params._meta : {};
    return { jsonrpc: "2.0", method: msg.method, params: { ...params, _meta: { ...meta, [SUBSCRIPTION_ID]: id } } } as JSONRPCMessage;
  }

  // subscriptions/listen: acknowledged with what a2a can send of what was asked; the request
  // stays open (unanswered) until the client cancels it. The resources it names are subscribed,
  // and the list baseline taken, by requests of a2a's own to the same handlers.
  private listen(msg: Request): Inbound {
    const asked = msg.params?.notifications;
    if (!isObject(asked) || (asked.resourceSubscriptions !== undefined && !(Array.isArray(asked.resourceSubscriptions) && asked.resourceSubscriptions.every((u) => typeof u === "string")))) {
      return this.reply(msg, undefined, error(msg.id, INVALID_PARAMS, "invalid params: subscriptions/listen needs notifications, an object (toolsListChanged, resourcesListChanged: booleans; resourceSubscriptions: URIs)"));
    }
    const uris = (asked.resourceSubscriptions as string[] | undefined) ?? [];
    const refused = this.listens.has(msg.id) ? "a listen with this id is open already: use a new id"
      : this.listens.size >= MAX_LISTENS ? `${MAX_LISTENS} listens are open already: cancel one first`
      : uris.length > MAX_URIS ? `${uris.length} resourceSubscriptions: at most ${MAX_URIS} per listen` : undefined;
    if (refused) return this.reply(msg, undefined, error(msg.id, INVALID_PARAMS, `invalid params: ${refused}`));
    const caps = this.host.capabilities();
    const honored: Filter = {};
    if (asked.toolsListChanged === true && caps.tools?.listChanged) honored.toolsListChanged = true;
    if (asked.promptsListChanged === true && caps.prompts?.listChanged) honored.promptsListChanged = true;
    if (asked.resourcesListChanged === true && caps.resources?.listChanged) honored.resourcesListChanged = true;
    if (uris.length > 0 && caps.resources?.subscribe) honored.resourceSubscriptions = [...new Set(uris)];
    const internal = (honored.resourceSubscriptions ?? []).map((uri) => this.own("resources/subscribe", { uri }, msg.id));
    if (honored.resourcesListChanged) internal.push(this.own("resources/list", {}, msg.id));
    // Acknowledged once the watches and the list's baseline are in place, so that any change
    // after the ack is notified.
    this.listens.set(msg.id, honored);
    if (internal.length === 0) return { pass: false, replies: this.acknowledge(msg.id, honored), internal };
    this.arming.set(msg.id, internal.length);
    return { pass: false, replies: [], internal };
  }
}

// The revision on a plain transport already connected to a server (unavailable.ts: no flow
// control there): requests go through inbound, messages out through outbound.
export function withRevision(t: { onmessage?: (m: JSONRPCMessage, extra?: any) => void; send(m: JSONRPCMessage): Promise<void> }, revision: Revision): void {
  const deliver = t.onmessage!;
  const send = t.send.bind(t);
  t.onmessage = (m, extra) => {
    const r = "method" in m && "id" in m ? revision.inbound(m as Request) : { pass: true as const };
    if (r.pass) return deliver(m, extra);
    for (const reply of r.replies) void send(reply).catch(() => {});
    for (const own of r.internal) deliver(own as JSONRPCMessage);
  };
  t.send = async (m) => {
    for (const out of revision.outbound(m)) await send(out);
  };
}
