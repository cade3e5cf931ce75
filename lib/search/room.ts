// Search (`a2a search`, MCP search): ranked matches across what the caller may read. The rules,
// once for every engine: the query (query.ts), the options and their errors, who sees which
// mail, the rows and their snippets. The engine finds (storage.ts). docs/PROTOCOL.md §20.
//
// Invariants:
// - nothing is written by a search (an engine's index is a cache, not the store);
// - mail: an agent finds only messages of its own inbox (not held: a refused sender's mail is
//   never shown, and mail its policy refuses now is not shown while unread, as thread.ts does)
//   and the messages it wrote; topics, slots and tasks are everyone's;
// - rows come best first (the engine's relevance), ties newest first.

import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import { checkAgent } from "../core/names";
import { nowSec, parseDuration } from "../core/time";
import { accepts, readGate } from "../mail/policy";
import { mailStorage } from "../mail/storage";
import { parseQuery, snippet } from "./query";
import { KINDS, searchStorage, type Hit, type Kind } from "./storage";

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

// What --in names, in the words a user types (and the row's kind, as the rows say it).
const PLACES: Record<string, Kind> = { mail: "message", messages: "message", message: "message", topics: "topic", topic: "topic", slots: "slot", slot: "slot", tasks: "task", task: "task" };

export interface SearchOptions {
  in?: string | string[]; // mail, topics, slots, tasks (comma-separated or a list); default all
  from?: string;
  since?: string | number; // a duration back from now (2h, 7d), an ISO time, or unix seconds
  limit?: number;
}

export interface SearchRow {
  kind: Kind;
  id: string; // message id; TOPIC#ID; slot name; task id
  author: string | null;
  time: number;
  snippet: string;
}

export function parseKinds(spec: SearchOptions["in"]): Kind[] {
  if (spec === undefined) return [...KINDS];
  const words = (Array.isArray(spec) ? spec : [spec]).flatMap((s) => String(s).split(",")).map((s) => s.trim()).filter(Boolean);
  const kinds = new Set<Kind>();
  for (const w of words) {
    const k = PLACES[w.toLowerCase()];
    if (!k) throw new A2AError("EUSAGE", text`cannot search in ${JSON.stringify(w)}: ${arg("in")} takes mail, topics, slots, tasks (comma-separated)`, { data: { in: w } });
    kinds.add(k);
  }
  if (!kinds.size) throw new A2AError("EUSAGE", text`${arg("in")} names nothing: give mail, topics, slots or tasks (comma-separated)`);
  return KINDS.filter((k) => kinds.has(k));
}

// Unix seconds of a since option: a duration back from now ("2h", "7d"), an ISO 8601 time, or unix seconds.
export function parseSince(v: string | number, now = nowSec()): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  const s = String(v).trim();
  if (/^\d{9,}(\.\d+)?$/.test(s)) return Number(s);
  if (/^\d+(\.\d+)?(ms|s|m|h|d)?$/.test(s)) return now - parseDuration(s, "a time back");
  const ms = /^\d{4}-\d\d-\d\d/.test(s) ? Date.parse(s) : NaN;
  if (Number.isNaN(ms)) {
    throw new A2AError("EUSAGE", text`${arg("since")} ${JSON.stringify(s)} is not a time: give a duration back from now (2h, 7d), an ISO time (2026-12-01 or 2026-12-01T09:30:00Z) or unix seconds`, { data: { since: s } });
  }
  return ms / 1000;
}

function checkLimit(n: unknown): number {
  if (n === undefined) return DEFAULT_LIMIT;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw new A2AError("EUSAGE", text`a limit of ${String(n)} is not a count from 1 to ${MAX_LIMIT}: give one, e.g. ${arg("limit", 20)}`, { data: { limit: n } });
  }
  return n;
}

// The matches of `query` that `agent` may read, best first; [] when none.
export async function search(store: Store, agent: string, query: string, opts: SearchOptions = {}): Promise<SearchRow[]> {
  checkAgent(agent);
  const terms = parseQuery(query);
  const kinds = parseKinds(opts.in);
  const from = opts.from === undefined ? undefined : checkAgent(opts.from, "sender name");
  const since = opts.since === undefined ? undefined : parseSince(opts.since);
  const limit = checkLimit(opts.limit);
  const mail = kinds.includes("message") ? mailStorage(store) : undefined;
  const writer = mail ? await mail.writer() : "";
  const policy = mail ? await readGate(store, agent) : undefined;
  const visible = (h: Hit): boolean => {
    if (h.kind !== "message") return true;
    if (h.agent === agent && (h.place === "read" || ((h.place === "unread" || h.place === "claimed") && (!policy || accepts(policy, h.author ?? "", h.user))))) return true;
    return h.author === agent && h.user === writer;
  };
  const storage = searchStorage(store);
  const rows: SearchRow[] = [];
  // Pages until `limit` visible rows: the engine narrows mail to the viewer's, the policy here
  // drops few, so a second page is rare.
  for (let offset = 0; rows.length < limit; ) {
    const page = await storage.search({ terms, kinds, from, since, viewer: { agent, writer }, limit, offset });
    for (const h of page) {
      if (rows.length < limit && visible(h)) rows.push({ kind: h.kind, id: h.key, author: h.author, time: h.time, snippet: snippet(h.text, terms) });
    }
    if (page.length < limit) break;
    offset += page.length;
  }
  return rows;
}
