// The dashboard's read model: the whole bus as rows a person looks at (slots, agents with
// their inboxes, topics, the task board); lib/dashboard/feed.ts is the feed of bus events that keeps
// them current; the slot row and the lengths texts are cut to are rows.ts (pure).
// It joins concepts (slots, mail, topics, presence, the board seam in board.ts), so it lives
// at the top of lib/ and is imported by adapters only (`a2a ui`) and by the feed.
//
// Invariants:
// - reading only: nothing here moves, claims, acks or rewrites anything; the only write is
//   the sweep of gone peers that every peer listing performs;
// - texts written by agents (results, tasks, chunks, bodies, summaries) are cut to bounded
//   lengths here, so a 1 MiB line costs the feed a few KiB; the full text is read on demand.

import type { Attachment } from "../blobs/attachment";
import type { Store } from "../core/config";
import { byName, isValidName } from "../core/names";
import { listInbox } from "../mail/inbox";
import { mailStorage } from "../mail/storage";
import { listPeers, type Peer } from "../presence/peers";
import { readRecord } from "../sessions/hooks";
import type { SessionState } from "../sessions/mark";
import { stateOf } from "../sessions/state";
import { checkTopic, readTopic, type TopicMessage } from "../topics/log";
import { topicStorage } from "../topics/storage";
import { BODY_CHARS, cut, PREVIEW_CHARS } from "./rows";

// ---- agents: live peers and inboxes ---------------------------------------------------------

export interface AgentRow {
  name: string;
  live: boolean; // a running `a2a mcp` session holds the name
  host: string | null;
  pid: number | null;
  cwd: string | null;
  summary: string;
  last_seen: number | null; // the last heartbeat
  // What the session is doing (lib/sessions/state.ts): working, idle, waiting, needs-you, or gone
  // (not running); since when, and on what it waits or what it asks its user (cut).
  state: SessionState;
  state_since: number | null;
  state_on: string | null;
  unread: number;
  held: number;
  read: number;
  // The oldest unread messages and the held ones (bodies cut): what is piling up; thread: the
  // conversation it is in (null: a reply written before threads, found when it is opened).
  // attachments: the files handed over with it (§19), [] when none.
  // human: from the person at the dashboard, its mark counting (lib/mail/human.ts).
  waiting: { id: string; from: string; user: string; sent_at: number; body: string; state: string; reply_to: string | null; thread: string | null; attachments: Attachment[]; human: boolean }[];
}

const WAITING = 5;

export async function livePeers(store: Store): Promise<Peer[]> {
  return (await listPeers(store, "all", { cwd: store.root, gitRoot: null })).peers;
}

export async function agentRow(store: Store, name: string, peer?: Peer): Promise<AgentRow> {
  const l = await listInbox(store, name, WAITING);
  const st = stateOf(store, peer, (await readRecord(store, name)).state);
  const waiting = [...l.unread, ...l.held].slice(0, WAITING).map((m) => ({ id: m.id, from: m.from, user: m.user, sent_at: m.sent_at, body: cut(m.body, PREVIEW_CHARS), state: m.state, reply_to: m.reply_to, thread: m.thread ?? null, attachments: m.attachments ?? [], human: !!m.human }));
  return {
    name,
    live: !!peer && st.state !== "gone", // a record its dead process left is no live session (stateOf looks at the pid)
    host: peer?.host ?? null,
    pid: peer?.pid ?? null,
    cwd: peer?.cwd ?? null,
    summary: cut(peer?.summary ?? "", PREVIEW_CHARS),
    last_seen: peer?.heartbeat ?? null,
    state: st.state,
    state_since: st.since,
    state_on: st.on === null ? null : cut(st.on, PREVIEW_CHARS),
    unread: l.counts.unread,
    held: l.counts.held,
    read: l.counts.read,
    waiting,
  };
}

export const inboxNames = (store: Store): Promise<string[]> => mailStorage(store).agents();

// Every agent with a live presence or an inbox, live ones first, then by name.
export async function agentRows(store: Store): Promise<AgentRow[]> {
  const peers = new Map((await livePeers(store)).map((p) => [p.name, p]));
  const names = [...new Set([...peers.keys(), ...(await inboxNames(store))])];
  const rows: AgentRow[] = [];
  for (const n of names) rows.push(await agentRow(store, n, peers.get(n)));
  return rows.sort((a, b) => Number(b.live) - Number(a.live) || byName(a.name, b.name));
}

// ---- topics ---------------------------------------------------------------------------------

export interface TopicRow {
  topic: string;
  last_id: number;
  recent: TopicMessage[]; // oldest first, bodies cut to BODY_CHARS
}

export const trimMessage = (m: TopicMessage): TopicMessage => ({ ...m, body: cut(m.body, BODY_CHARS) });

export const isTopic = (t: string) => {
  try {
    checkTopic(t);
    return true;
  } catch {
    return false;
  }
};

export async function topicRow(store: Store, topic: string, recent = 20): Promise<TopicRow> {
  checkTopic(topic);
  const last = (await topicStorage(store).counts(topic, [])).last_id;
  return { topic, last_id: last, recent: (await readTopic(store, topic, Math.max(0, last - recent))).map(trimMessage) };
}

export async function topicRows(store: Store, recent = 20): Promise<TopicRow[]> {
  const rows: TopicRow[] = [];
  for (const t of (await topicStorage(store).topics()).filter(isTopic)) rows.push(await topicRow(store, t, recent));
  return rows;
}
