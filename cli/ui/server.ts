// The dashboard's HTTP server (`a2a ui`): one page and its two assets (embedded in the binary
// as text), one server-sent event stream fed by the Hub, one detail read, and the actions.
//
// Invariants:
// - every request passes the Gate (gate.ts: Host, Origin, session) before anything else; the
//   URL printed or handed to a browser is a one-time link (gate.ts), never a reusable secret;
// - an answer is this module's or a short plain-text 500: never Bun's development error
//   page (server source and paths), whatever throws;
// - a name from a request is checked by lib's one name rule before it becomes a path;
// - store data reaches the page only as JSON (the event stream and the detail read), never
//   inside the HTML; the page renders it with textContent only (page.js);
// - each action is the same bus operation as the CLI command it stands for: clear ->
//   bus.slots.clear (a2a clear NAME), send -> bus.mail.send (a2a send TO MESSAGE --as NAME),
//   write -> bus.mail.sendAsHuman (the person at the page writing to a session of theirs as
//   themselves, no --as needed: lib/mail/human.ts),
//   and the board's retry / cancel / release -> bus.dashboard's (lib/dashboard/tasks.ts: a2a
//   task retry ID, a2a task cancel ID, a2a lease release NAME; a2a release PATTERN --as HOLDER),
//   and the crew view's stop / restart -> bus.crew.control (a2a crew stop NAME, a2a crew
//   restart NAME: waits until the supervisor has done it); POST only, refused when read-only;
// - nothing here writes to the store but those actions.

import type { Bus } from "../../lib/bus";
import { A2AError, asA2AError, phrase } from "../../lib/core/errors";
import { checkName } from "../../lib/core/names";
import { err } from "../io";
import { SHELL } from "../phrase";
import { Gate, SECURITY_HEADERS, urlHost } from "./gate";
import { Hub } from "./hub";
import pageHtml from "./page.html" with { type: "text" };
import pageCss from "./page.css" with { type: "text" };
import pageJs from "./page.js" with { type: "text" };

// Bun types every *.html import as an HTML bundle; imported as text it is the file's text.
const PAGE = String(pageHtml);
const DETAIL_MAX_CHARS = 8 * 1024 * 1024; // the most of a stream one detail read returns
const THREAD_BODY_CHARS = 64 * 1024; // the most of each message a thread view shows

export interface UiOptions {
  host: string;
  port: number;
  readOnly: boolean;
  as: string | undefined; // the human the page sends as (--as / A2A_AGENT); none: no sending
  recheckMs?: number;
}

export interface Ui {
  base: string; // http://HOST:PORT, which opens nothing by itself
  port: number;
  // A new one-time link to the page (gate.ts); ttlMs: it also dies unused after that long;
  // onUsed: called when it is opened.
  link(o?: { ttlMs?: number; onUsed?: () => void }): string;
  hub: Hub;
  stop(): Promise<void>;
}

const STATUS: Record<string, number> = { EUSAGE: 400, ETOOBIG: 413, ENOTFOUND: 404, ECONFLICT: 409, EDENIED: 403, EFULL: 507 };

function reply(body: string | ReadableStream<Uint8Array>, status: number, type: string, extra: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...SECURITY_HEADERS, "Content-Type": type, ...extra } });
}
const jsonReply = (v: unknown, status = 200) => reply(JSON.stringify(v), status, "application/json; charset=utf-8");
const refuse = (status: number, why: string) => reply(`a2a ui: ${why}\n`, status, "text/plain; charset=utf-8");

function failure(e: unknown): Response {
  const a = asA2AError(e);
  return jsonReply({ error: phrase(a, SHELL), code: a.code }, STATUS[a.code] ?? 500);
}

async function body(req: Request): Promise<Record<string, unknown>> {
  if (!(req.headers.get("content-type") ?? "").startsWith("application/json")) {
    throw new A2AError("EUSAGE", "actions take a JSON body (Content-Type: application/json)");
  }
  try {
    const v = await req.json();
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new A2AError("EUSAGE", "the action's body is not a JSON object");
}

const str = (v: unknown, what: string): string => {
  if (typeof v !== "string") throw new A2AError("EUSAGE", `${what} is missing`);
  return v;
};

export async function serveUi(bus: Bus, o: UiOptions): Promise<Ui> {
  const hub = await Hub.open(bus, o.recheckMs);
  let gate: Gate;

  const need = (): string => {
    if (!o.as) throw new A2AError("EUSAGE", "this action needs a name to act as: restart with a2a ui --as NAME (or set A2A_AGENT)");
    return o.as;
  };
  const actions: Record<string, (b: Record<string, unknown>) => Promise<unknown>> = {
    "/api/clear": async (b) => ({ cleared: await bus.slots.clear(str(b.name, "the slot name")) }),
    "/api/send": async (b) => bus.mail.send(need(), str(b.to, "the recipient"), str(b.body, "the message")),
    "/api/write": async (b) => bus.mail.sendAsHuman(str(b.to, "the session"), str(b.body, "the message")),
    "/api/task/retry": async (b) => (await bus.dashboard.retry(str(b.queue, "the queue"), str(b.id, "the task id"), need()), { ok: true }),
    "/api/task/cancel": async (b) => (await bus.dashboard.cancel(str(b.queue, "the queue"), str(b.id, "the task id"), need()), { ok: true }),
    "/api/lease/release": async (b) => (await bus.dashboard.release(str(b.name, "the lease name"), need()), { ok: true }),
    "/api/crew/stop": async (b) => crewAct(bus, { stop: checkName(str(b.worker, "the worker"), "worker name") }),
    "/api/crew/restart": async (b) => crewAct(bus, { restart: checkName(str(b.worker, "the worker"), "worker name") }),
    "/api/reservation/release": async (b) =>
      (await bus.dashboard.releaseReservation({ repo: str(b.repo, "the repository"), holder: str(b.holder, "the holder"), pattern: str(b.pattern, "the pattern") }, need()), { ok: true }),
  };

  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname: o.host,
      port: o.port,
      idleTimeout: 60,
      maxRequestBodySize: bus.settings.maxBytes * 6 + 65536, // a message at the limit, JSON-escaped
      development: false,
      error: (e) => {
        err(`a2a: warning: the dashboard failed to answer a request: ${e.message}\n`);
        return refuse(500, "internal error");
      },
      fetch: async (req, srv) => {
        const v = gate.check(req);
        if (v.kind === "refuse") return refuse(v.status, v.why);
        if (v.kind === "enter") return reply("", 303, "text/plain; charset=utf-8", { Location: "/", ...(v.setCookie ? { "Set-Cookie": v.setCookie } : {}) });
        const { url } = v;
        const path = url.pathname;
        if (req.method === "POST") {
          const act = actions[path];
          if (!act) return refuse(404, "no such action");
          if (o.readOnly) return jsonReply({ error: "this dashboard is read-only (a2a ui --read-only)", code: "EREADONLY" }, 403);
          try {
            return jsonReply(await act(await body(req)));
          } catch (e) {
            return failure(e);
          }
        }
        if (req.method !== "GET" && req.method !== "HEAD") return refuse(405, "only GET and POST");
        if (path in actions) return refuse(405, "actions are POST only");
        switch (path) {
          case "/":
            return reply(PAGE.replaceAll("__TOKEN__", v.token), 200, "text/html; charset=utf-8");
          case "/app.js":
            return reply(pageJs, 200, "text/javascript; charset=utf-8");
          case "/app.css":
            return reply(pageCss, 200, "text/css; charset=utf-8");
          case "/events":
            srv.timeout(req, 0); // an event stream is idle by nature
            return reply(hub.connect(), 200, "text/event-stream; charset=utf-8", { "X-Accel-Buffering": "no" });
          case "/api/config":
            return jsonReply({ root: bus.where, read_only: o.readOnly, as: o.as ?? null, tasks: hub.board.available, max_bytes: bus.settings.maxBytes });
          case "/api/slot":
            try {
              return jsonReply(await slotDetail(bus, url.searchParams.get("name")));
            } catch (e) {
              return failure(e);
            }
          case "/api/search":
            try {
              return jsonReply(await searchRows(bus, o.as, url.searchParams.get("q")));
            } catch (e) {
              return failure(e);
            }
          case "/api/thread":
            try {
              return jsonReply(await threadDetail(bus, url.searchParams.get("agent"), url.searchParams.get("id")));
            } catch (e) {
              return failure(e);
            }
        }
        return refuse(404, "not found");
      },
    });
  } catch (e) {
    await hub.stop();
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE") throw new A2AError("EIO", `port ${o.port} on ${o.host} is in use: pass another --port, or --port 0 for any free one`);
    if (code === "EADDRNOTAVAIL") throw new A2AError("EUSAGE", `${o.host} is not an address of this machine: pass one of its addresses to --host`);
    throw new A2AError("EIO", `cannot serve on ${o.host}:${o.port}: ${(e as Error).message}`);
  }
  const port = server.port ?? o.port;
  gate = new Gate(o.host, port);
  const ping = setInterval(() => hub.ping(), 20_000);
  const shownHost = o.host === "0.0.0.0" || o.host === "::" ? "127.0.0.1" : o.host;
  const base = `http://${urlHost(shownHost)}:${port}`;
  return {
    base,
    port,
    link: (l) => `${base}/?code=${gate.mint(l)}`,
    hub,
    stop: async () => {
      clearInterval(ping);
      try {
        await hub.stop(); // rethrows the feed's error, if it ended with one
      } finally {
        await server.stop(true);
      }
    },
  };
}

// A crew worker stopped or restarted as `a2a crew stop|restart NAME` does it, once done.
const CREW_WAIT_MS = 60_000;
async function crewAct(bus: Bus, what: { stop: string } | { restart: string }) {
  const out = await bus.crew.control(undefined, what, { timeoutMs: CREW_WAIT_MS });
  if (out.kind !== "done") throw new A2AError("ETIMEDOUT", `the crew's supervisor did not confirm within ${CREW_WAIT_MS / 1000} s: see a2a crew`);
  return { ok: true };
}

// What the search box finds (lib/search/): as the page's --as, whose mail is searched with the
// rest; without one, topics, slots and tasks only (mail is searched as someone).
export const SEARCH_ROWS = 50;
async function searchRows(bus: Bus, as: string | undefined, query: string | null) {
  const rows = await bus.search.find(as ?? "dashboard", str(query, "the query"), { limit: SEARCH_ROWS, ...(as ? {} : { in: "topics,slots,tasks" }) });
  return { as: as ?? null, rows };
}

// The conversation message `id` of `agent`'s inbox is in, as `agent` sees it (lib/mail/thread.ts:
// its inbox and what it sent; nothing marked read), each body cut to THREAD_BODY_CHARS.
async function threadDetail(bus: Bus, agent: string | null, id: string | null) {
  const messages = await bus.mail.thread(str(agent, "the agent"), str(id, "the message id")); // names and ids checked there
  return {
    agent,
    thread: messages[0].thread,
    messages: messages.map((m) => ({
      id: m.id, from: m.from, to: m.to, user: m.user, sent_at: m.sent_at, reply_to: m.reply_to, state: m.state,
      body: m.body.slice(0, THREAD_BODY_CHARS), truncated: m.body.length > THREAD_BODY_CHARS, attachments: m.attachments ?? [], human: !!m.human,
    })),
  };
}

// One slot in full: its record (the whole result) and its streamed chunks (the last
// DETAIL_MAX_CHARS of them), for the page's detail view.
async function slotDetail(bus: Bus, name: string | null) {
  const r = await bus.slots.read(checkName(str(name, "the slot name"), "slot name"));
  if (r.kind === "corrupt") throw new A2AError("EIO", `slot ${name}'s record is unreadable: a2a clear ${name} removes it`);
  if (r.kind === "absent") throw new A2AError("ENOTFOUND", `no slot named ${name}: it was cleared or has expired`);
  const rec = r.record;
  let chunks: string[] = [];
  let chunkError: string | null = null;
  try {
    chunks = await bus.slots.chunks(rec.name, 0, rec.chunks);
  } catch (e) {
    chunkError = phrase(asA2AError(e), SHELL);
  }
  let total = 0;
  let first = chunks.length;
  while (first > 0 && total + chunks[first - 1].length <= DETAIL_MAX_CHARS) total += chunks[--first].length;
  return { record: rec, chunks: chunks.slice(first), skipped: first, chunk_error: chunkError };
}
