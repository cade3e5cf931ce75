// MCP revision 2026-07-28 over HTTP for the bridge (mcp-http.ts): no session and no
// Mcp-Session-Id. Each POST carries one request with its envelope in params._meta, and is
// served on its own by an `a2a mcp` started for it and ended once it is answered (for
// subscriptions/listen: once the client drops the stream). The HTTP layer's own rules are
// checked here, as the revision's HTTP transport does: the MCP-Protocol-Version, Mcp-Method
// and Mcp-Name headers must mirror the body (else 400, -32020), a request without the
// envelope is -32602, and an error answer's HTTP status follows its code (-32601 is 404).
// The answer is JSON when the request's answer is the first thing a2a says, else an SSE stream
// (progress first, or a listen's notifications).
import type { Subprocess } from "bun";

export type Message = { jsonrpc?: string; id?: string | number | null; method?: string; params?: Record<string, any>; [k: string]: unknown };
type Child = Subprocess<"pipe", "pipe", "ignore">;

const CLAIM = "io.modelcontextprotocol/protocolVersion";
// The body field each method's Mcp-Name header mirrors.
const MIRRORED: Record<string, string> = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };
const STATUS: Record<number, number> = { [-32700]: 400, [-32600]: 400, [-32601]: 404, [-32020]: 400, [-32021]: 400, [-32022]: 400 };

const isObject = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);
const claimOf = (m: Message): unknown => (isObject(m.params?._meta) ? m.params._meta[CLAIM] : undefined);

// A POST the revision serves: no session, and not a 2025-era `initialize` (one without the envelope).
export function isStateless(messages: Message[]): boolean {
  return !(messages.some((m) => m.method === "initialize" && claimOf(m) === undefined) || messages.some((m) => m.method === undefined));
}

const answer = (status: number, id: Message["id"], code: number, message: string, data?: unknown) =>
  Response.json({ jsonrpc: "2.0", id: id ?? null, error: { code, message, ...(data === undefined ? {} : { data }) } }, { status });

// "=?base64?...?=" carries a value that is not a plain header value.
function decoded(value: string): string | undefined {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  if (!value.startsWith("=?base64?")) return value;
  if (!m || m[1]!.length % 4 !== 0) return undefined;
  return Buffer.from(m[1]!, "base64").toString("utf8");
}

function headersDisagree(req: Request, m: Message): Response | undefined {
  const mismatch = (header: string, body: string) => answer(400, m.id, -32020, `Bad Request: the request headers and body disagree: ${body}`, { mismatch: { header, body } });
  const claim = claimOf(m);
  const version = req.headers.get("mcp-protocol-version")?.trim();
  if (claim !== undefined && version !== claim) return mismatch(version ?? "(missing)", `the body's envelope names protocol version ${String(claim)}, the MCP-Protocol-Version header ${version ?? "is absent"}`);
  const method = req.headers.get("mcp-method")?.trim();
  if (method !== m.method) return mismatch(method ?? "(missing)", `the body names method ${m.method}, the Mcp-Method header ${method ?? "is absent"}`);
  const field = MIRRORED[m.method!];
  const value = field ? m.params?.[field] : undefined;
  if (typeof value !== "string") return undefined;
  const name = req.headers.get("mcp-name")?.trim();
  if (name === undefined) return mismatch("(missing)", `the body carries params.${field}, the Mcp-Name header is absent`);
  if (decoded(name) !== value) return mismatch(name, `the body carries params.${field}="${value}", the Mcp-Name header another value`);
  return undefined;
}

// What a2a writes, message by message, until it exits.
async function* messagesOf(child: Child): AsyncGenerator<Message> {
  let buf = "";
  const dec = new TextDecoder();
  for await (const chunk of child.stdout) {
    buf += dec.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).trim();
      buf = buf.slice(nl + 1);
      if (line) yield JSON.parse(line) as Message;
    }
  }
}

export async function statelessPost(req: Request, messages: Message[], start: () => Child): Promise<Response> {
  if (messages.length !== 1) return answer(400, null, -32600, "Bad Request: JSON-RPC batches may not carry protocol revision 2026-07-28 requests");
  const m = messages[0]!;
  if (m.id === undefined || m.id === null) return new Response(null, { status: 202 }); // a notification: no session to give it to
  if (claimOf(m) === undefined) {
    return answer(400, m.id, -32602, `Invalid params: _meta carries no ${CLAIM}: send the per-request envelope (protocol revision 2026-07-28), or initialize for a session`);
  }
  const bad = headersDisagree(req, m);
  if (bad) return bad;
  const child = start();
  child.stdin.write(JSON.stringify(m) + "\n");
  child.stdin.flush();
  const out = messagesOf(child);
  const isAnswer = (x: Message) => x.method === undefined && x.id === m.id;
  const first = await out.next();
  if (first.done) return answer(502, m.id, -32603, "a2a mcp ended without answering");
  if (isAnswer(first.value)) {
    child.stdin.end();
    const code = (first.value.error as { code?: number; data?: { envelope?: unknown } } | undefined) ?? undefined;
    const status = !code ? 200 : (STATUS[code.code!] ?? (code.code === -32602 && code.data?.envelope ? 400 : 200));
    return Response.json(first.value, { status });
  }
  const enc = new TextEncoder();
  const frame = (x: Message) => enc.encode(`event: message\ndata: ${JSON.stringify(x)}\n\n`);
  const body = new ReadableStream<Uint8Array>({
    async start(ctl) {
      try {
        ctl.enqueue(frame(first.value));
        for await (const x of out) {
          ctl.enqueue(frame(x));
          if (isAnswer(x)) break;
        }
        ctl.close();
      } catch {
        // the client dropped the stream
      } finally {
        child.stdin.end();
      }
    },
    cancel: () => void child.stdin.end(),
  });
  return new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}
