// A Streamable HTTP front for `a2a mcp`, for clients that speak only HTTP (the official MCP
// conformance suite): a test harness, not part of the product, which is stdio only. Each
// session (an `initialize` POST without Mcp-Session-Id) runs its own `a2a mcp` on a store the
// caller gives, and JSON-RPC is relayed both ways, line for line. A POST without a session that
// is not `initialize` is revision 2026-07-28's (mcp-http-stateless.ts).
//
// A POST carrying a request is answered with an SSE stream that stays open until every request
// in it has its response; what the server sends meanwhile (notifications, its own requests to
// the client) goes on the newest such stream, as the transport says it may, else on the GET
// stream, else it waits for one. A POST of notifications or responses only gets 202.
import type { Subprocess } from "bun";
import { BIN, childEnv } from "./run";
import { isStateless, statelessPost, type Message } from "./mcp-http-stateless";

interface Stream {
  pending: Set<string>; // ids of the requests this stream still owes a response
  send(m: Message): void;
  end(): void;
}

interface Session {
  child: Subprocess<"pipe", "pipe", "ignore">;
  posts: Stream[];
  get: Stream | null;
  queued: Message[];
}

export interface Bridge {
  url: string;
  stop(): Promise<void>;
}

const key = (id: unknown) => JSON.stringify(id);

// A page on another site that resolves its name to 127.0.0.1 (DNS rebinding) sends its own
// Host and Origin: only loopback names are served, as the SDK's own HTTP transport does.
const LOOPBACK = /^(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/i;
function foreign(req: Request): boolean {
  if (!LOOPBACK.test(req.headers.get("host") ?? "")) return true;
  const origin = req.headers.get("origin");
  if (origin === null) return false;
  try {
    return !LOOPBACK.test(new URL(origin).host);
  } catch {
    return true;
  }
}
const jsonError = (status: number, code: number, message: string) =>
  Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });

// An SSE response whose stream the bridge writes to until `end`.
function sseStream(pending: Set<string>): { stream: Stream; response: Response; closed: Promise<void> } {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  let done = false;
  let onClosed!: () => void;
  const closed = new Promise<void>((r) => (onClosed = r));
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start: (c) => void (ctl = c),
    cancel: () => {
      done = true;
      onClosed();
    },
  });
  const stream: Stream = {
    pending,
    send(m) {
      if (!done) ctl.enqueue(enc.encode(`event: message\ndata: ${JSON.stringify(m)}\n\n`));
    },
    end() {
      if (done) return;
      done = true;
      ctl.close();
      onClosed();
    },
  };
  const response = new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  return { stream, response, closed };
}

// `store` gives each new session its store (a fresh one per session, or one for all).
// `maxSessions`: a client that never ends its sessions (the conformance suite opens one per
// scenario and sends no DELETE) would leave one `a2a mcp` each running; past this many, the
// least recently used session with no call open is ended.
export function startBridge(o: { store: () => string; env?: Record<string, string>; args?: string[]; maxSessions?: number }): Bridge {
  const sessions = new Map<string, Session>(); // least recently used first
  const exits: Promise<number>[] = []; // every child's, ended sessions' too: stop waits for all
  const use = (id: string, s: Session) => {
    sessions.delete(id);
    sessions.set(id, s);
  };
  const evict = () => {
    for (const [id, s] of sessions) {
      if (sessions.size < (o.maxSessions ?? 4)) return;
      if (s.posts.length > 0) continue;
      sessions.delete(id);
      end(s);
    }
  };

  const deliver = (s: Session, m: Message) => {
    const isResponse = m.method === undefined;
    if (isResponse) {
      const owner = s.posts.find((p) => p.pending.has(key(m.id)));
      if (!owner) return; // an answer to a request whose stream the client dropped
      owner.pending.delete(key(m.id));
      owner.send(m);
      if (owner.pending.size === 0) owner.end();
      return;
    }
    // A stream that got its last answer has ended, though its removal from s.posts waits a
    // tick: a notification right behind that answer must not go to it (and be lost).
    const target = s.posts.findLast((p) => p.pending.size > 0) ?? s.get;
    if (target) target.send(m);
    else s.queued.push(m);
  };

  const start = () => {
    const child = Bun.spawn({
      cmd: [BIN, "mcp", ...(o.args ?? [])],
      env: childEnv({ dir: o.store(), env: o.env }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    exits.push(child.exited);
    return child;
  };

  const spawn = (): Session => {
    const child = start();
    const s: Session = { child, posts: [], get: null, queued: [] };
    void (async () => {
      let buf = "";
      const dec = new TextDecoder();
      for await (const chunk of child.stdout) {
        buf += dec.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).trim();
          buf = buf.slice(nl + 1);
          if (!line) continue;
          const parsed = JSON.parse(line) as Message | Message[];
          for (const m of Array.isArray(parsed) ? parsed : [parsed]) deliver(s, m);
        }
      }
      // The server ended: no stream will get its answer.
      for (const p of s.posts) p.end();
      s.get?.end();
    })();
    return s;
  };

  const write = (s: Session, messages: Message[]) => {
    for (const m of messages) s.child.stdin.write(JSON.stringify(m) + "\n");
    s.child.stdin.flush();
  };

  const post = async (req: Request): Promise<Response> => {
    let body: Message | Message[];
    try {
      body = (await req.json()) as Message | Message[];
    } catch {
      return jsonError(400, -32700, "Parse error: the body is not JSON");
    }
    const messages = Array.isArray(body) ? body : [body];
    const id = req.headers.get("mcp-session-id");
    let s: Session | undefined;
    let newId: string | undefined;
    if (id === null) {
      if (isStateless(messages)) return statelessPost(req, messages, start);
      evict();
      newId = crypto.randomUUID();
      s = spawn();
      sessions.set(newId, s);
    } else {
      s = sessions.get(id);
      if (!s) return jsonError(404, -32001, "Session not found");
      use(id, s);
    }
    const requests = messages.filter((m) => m.method !== undefined && m.id !== undefined && m.id !== null);
    if (requests.length === 0) {
      write(s, messages);
      return new Response(null, { status: 202 });
    }
    const { stream, response, closed } = sseStream(new Set(requests.map((m) => key(m.id))));
    s.posts.push(stream);
    void closed.then(() => {
      const i = s.posts.indexOf(stream);
      if (i >= 0) s.posts.splice(i, 1);
    });
    for (const m of s.queued.splice(0)) stream.send(m);
    write(s, messages);
    if (newId) response.headers.set("mcp-session-id", newId);
    return response;
  };

  const get = (req: Request): Response => {
    const s = sessions.get(req.headers.get("mcp-session-id") ?? "");
    if (!s) return req.headers.has("mcp-session-id") ? jsonError(404, -32001, "Session not found") : jsonError(400, -32000, "Bad Request: no Mcp-Session-Id");
    if (s.get) return jsonError(409, -32000, "Conflict: this session has a GET stream already");
    const { stream, response, closed } = sseStream(new Set());
    s.get = stream;
    void closed.then(() => {
      if (s.get === stream) s.get = null;
    });
    for (const m of s.queued.splice(0)) stream.send(m);
    return response;
  };

  function end(s: Session) {
    for (const p of s.posts) p.end();
    s.get?.end();
    s.child.stdin.end();
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0, // a long tool call keeps its stream open with nothing to say
    fetch(req) {
      if (new URL(req.url).pathname !== "/mcp") return new Response("Not Found", { status: 404 });
      if (foreign(req)) return jsonError(403, -32000, "Forbidden: Host and Origin must be a loopback name");
      if (req.method === "POST") return post(req);
      if (req.method === "GET") return get(req);
      if (req.method === "DELETE") {
        const id = req.headers.get("mcp-session-id") ?? "";
        const s = sessions.get(id);
        if (!s) return jsonError(404, -32001, "Session not found");
        sessions.delete(id);
        end(s);
        return new Response(null, { status: 200 });
      }
      return new Response("Method Not Allowed", { status: 405, headers: { allow: "GET, POST, DELETE" } });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}/mcp`,
    async stop() {
      for (const s of sessions.values()) end(s);
      await Promise.all(exits);
      sessions.clear();
      server.stop(true);
    },
  };
}
