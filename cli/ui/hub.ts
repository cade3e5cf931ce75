// The dashboard's live state and its listeners: one feed (bus.dashboard.watch,
// lib/dashboard/feed.ts, on the one watch primitive) feeds an in-memory copy of what the page
// shows, and every change goes out to every connected page as one server-sent event. A page
// that connects (or reconnects) gets a snapshot first, then the changes; the page never polls.
//
// Invariants:
// - one feed per server, however many pages are open: the store is read once per change;
// - state is re-read from the store on each event (never replayed from the event), so a
//   burst folded into one event, or an event seen twice, still ends in the store's state;
// - the reads run one at a time, in the order of the events (the board and the baseline
//   first): a handler's reads never interleave with another's, so a chunk is never told
//   twice and an older read never overwrites a newer one;
// - a page that cannot keep up is dropped (it reconnects and gets a fresh snapshot) rather
//   than buffered without bound;
// - texts from agents are already cut by lib/dashboard/view.ts; chunks are cut to their last
//   BODY_CHARS here (the full stream is read on demand).

import type { Bus } from "../../lib/bus";
import type { Board } from "../../lib/dashboard/board";
import { statusName } from "../../lib/crew/names";
import type { CrewStatus } from "../../lib/crew/status";
import type { BusEvent } from "../../lib/dashboard/feed";
import { BODY_CHARS, PREVIEW_CHARS, slotRow, type SlotRow } from "../../lib/dashboard/rows";
import type { AgentRow, TopicRow } from "../../lib/dashboard/view";
import type { Peer } from "../../lib/presence/peers";
import type { SlotRecord } from "../../lib/slots/record";
import { byName } from "../../lib/core/names";
import { senderShown } from "../frame";
import { turns } from "../in-turn";

export const TAIL_CHARS = 2000;
const TIMELINE_KEEP = 300;
const TOPIC_KEEP = 20;
const MAX_BACKLOG = 2000; // queued events before a slow page is dropped

export type UiSlot = SlotRow & { tail: string };

export interface TimelineEntry {
  seq: number;
  at: number;
  kind: string; // started, appended, published, cleared, sent, claimed, read, held, topic, joined, left
  subject: string; // a slot, agent or topic name (names follow the name rule)
  detail: string; // may be written by an agent: rendered as text, marked as such
  from_agent: boolean;
}

interface Run {
  started: number;
  n: number;
  tail: string;
}

const lastChars = (s: string, n: number) => (s.length > n ? s.slice(-n) : s);

export class Hub {
  readonly slots = new Map<string, UiSlot>();
  readonly agents = new Map<string, AgentRow>();
  readonly topics = new Map<string, TopicRow>();
  board: Board = { available: false, queues: [], leases: [], reservations: [] }; // read before the hub is handed out (open)
  readonly timeline: TimelineEntry[] = [];
  crews: CrewStatus[] = []; // every crew's supervisors (one per host); re-read when one publishes, or sessions come and go
  #runs = new Map<string, Run>();
  #peers = new Map<string, Peer>();
  #clients = new Set<ReadableStreamDefaultController<Uint8Array>>();
  #seq = 0;
  #enc = new TextEncoder();
  #stop = new AbortController();
  #inTurn = turns();
  #boardRead: Promise<void>;
  #feedReady: Promise<void>;
  readonly done: Promise<unknown>;

  // The hub of `bus`, once the board has been read: that read's error is thrown, the feed stopped.
  static async open(bus: Bus, recheckMs = 5000): Promise<Hub> {
    const hub = new Hub(bus, recheckMs);
    try {
      await hub.#boardRead;
      // A page is served only once the feed has its baseline: a change made after the page
      // loaded is then an event, never folded silently into what the feed found at its start.
      await Promise.race([hub.#feedReady, hub.done.then(() => undefined)]);
    } catch (e) {
      await hub.stop().catch(() => {}); // the board's error is the one to tell
      throw e;
    }
    return hub;
  }

  private constructor(
    readonly bus: Bus,
    recheckMs: number,
  ) {
    // Subscribed first (inside the feed's first step), then the baseline is read. `done`
    // rejects with the first read the store refuses, from the feed or the baseline: the
    // command then stops with that one line (it is always awaited, never left unhandled).
    let fail!: (e: unknown) => void;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    let ready!: () => void;
    this.#feedReady = new Promise<void>((resolve) => (ready = resolve));
    this.done = Promise.race([bus.dashboard.watch((e) => this.#on(e), { signal: this.#stop.signal, recheckMs, onReady: ready }), failed]);
    this.done.catch(() => {});
    this.#boardRead = this.#inTurn(async () => {
      this.board = await bus.dashboard.board();
    });
    this.#inTurn(() => this.#loadBaseline()).catch(fail);
  }


  async #loadBaseline(): Promise<void> {
    const { records } = await this.bus.slots.list();
    for (const r of records) if (!this.slots.has(r.name)) await this.#putRecord(r, false);
    await this.#refreshAgents(false);
    await this.#refreshCrews(false);
    for (const t of await this.bus.dashboard.topicRows(TOPIC_KEEP)) this.topics.set(t.topic, t);
  }

  stop(): Promise<unknown> {
    this.#stop.abort();
    for (const c of this.#clients) {
      try {
        c.close();
      } catch {
        // already closed by the page
      }
    }
    this.#clients.clear();
    return this.done;
  }

  snapshot() {
    return {
      slots: [...this.slots.values()].sort((a, b) => b.updated_at - a.updated_at || byName(a.name, b.name)),
      agents: [...this.agents.values()],
      topics: [...this.topics.values()],
      board: this.board,
      crews: this.crews,
      timeline: this.timeline,
    };
  }

  // A new page: its stream starts with the snapshot.
  connect(): ReadableStream<Uint8Array> {
    let me: ReadableStreamDefaultController<Uint8Array> | undefined;
    return new ReadableStream<Uint8Array>({
      start: (c) => {
        me = c;
        this.#clients.add(c);
        c.enqueue(this.#frame("snapshot", this.snapshot()));
      },
      cancel: () => {
        if (me) this.#clients.delete(me);
      },
    });
  }

  // A comment line keeps idle connections (and proxies) from timing out.
  ping(): void {
    this.#send(this.#enc.encode(": ping\n\n"));
  }

  #frame(type: string, data: unknown): Uint8Array {
    return this.#enc.encode(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  #broadcast(type: string, data: unknown): void {
    if (this.#clients.size) this.#send(this.#frame(type, data));
  }

  #send(bytes: Uint8Array): void {
    for (const c of this.#clients) {
      try {
        if ((c.desiredSize ?? 0) < -MAX_BACKLOG) throw new Error("page too slow");
        c.enqueue(bytes);
      } catch {
        this.#clients.delete(c);
        try {
          c.close();
        } catch {
          // gone already
        }
      }
    }
  }

  #note(kind: string, subject: string, detail: string, fromAgent: boolean, at = Date.now() / 1000): void {
    const e: TimelineEntry = { seq: ++this.#seq, at, kind, subject, detail, from_agent: fromAgent };
    this.timeline.push(e);
    if (this.timeline.length > TIMELINE_KEEP) this.timeline.splice(0, this.timeline.length - TIMELINE_KEEP);
    this.#broadcast("timeline", e);
  }

  // Re-reads slot `name` (and its new chunks) and tells the pages; "corrupt" is a torn read,
  // which the next event re-reads.
  async #putSlot(name: string, live: boolean): Promise<"ok" | "absent" | "corrupt"> {
    const r = await this.bus.slots.read(name, 0);
    if (r.kind === "ok") await this.#putRecord(r.record, live);
    return r.kind;
  }

  async #putRecord(rec: SlotRecord, live: boolean): Promise<void> {
    const name = rec.name;
    let run = this.#runs.get(name);
    if (!run || run.started !== rec.started_at) {
      // A new run: on the baseline only its last few chunks make the tail; live, all of them are news.
      run = { started: rec.started_at, n: live ? 0 : Math.max(0, rec.chunks - 5), tail: "" };
      this.#runs.set(name, run);
    }
    if (rec.chunks > run.n) {
      let texts: string[] = [];
      try {
        texts = await this.bus.slots.chunks(name, run.n, rec.chunks);
      } catch {
        // a damaged chunk file: the row still shows; the detail view says what is wrong
      }
      for (const t of texts) {
        run.n++;
        run.tail = lastChars(run.tail + t, TAIL_CHARS);
        if (live) this.#broadcast("chunk", { name, n: run.n, started_at: run.started, text: lastChars(t, BODY_CHARS), cut: t.length > BODY_CHARS });
      }
    }
    const row: UiSlot = { ...slotRow(rec), tail: run.tail };
    this.slots.set(name, row);
    if (live) this.#broadcast("slot", row);
  }

  async #refreshAgents(live: boolean): Promise<void> {
    this.#peers = new Map((await this.bus.dashboard.livePeers()).map((p) => [p.name, p]));
    const rows = await this.bus.dashboard.agentRows();
    this.agents.clear();
    for (const a of rows) this.agents.set(a.name, a);
    if (live) this.#broadcast("agents", rows);
  }

  // Every supervisor (on start, and when sessions come and go), or the one whose status slot
  // `slot` changed: read alone, not the whole list of slots at each worker's change.
  async #refreshCrews(live: boolean, slot?: string): Promise<void> {
    const m = slot === undefined ? null : /^crewhost\.([^.]+)\.(.+)$/.exec(slot);
    if (!m) this.crews = await this.bus.crew.list();
    else {
      const s = await this.bus.crew.status(m[1], m[2]); // the host as its slot names it finds the same slot
      const rest = this.crews.filter((c) => statusName(c.crew, c.host) !== slot);
      this.crews = (s ? [...rest, s] : rest).sort((a, b) => byName(`${a.crew}\0${a.host}`, `${b.crew}\0${b.host}`));
    }
    if (live) this.#broadcast("crews", this.crews);
  }

  #on(e: BusEvent): void {
    this.#inTurn(() => this.#handle(e)).catch(() => {
      // A store that changed under the read (a vanished inbox, a damaged file) must not stop
      // the feed; the next event re-reads it.
    });
  }

  async #handle(e: BusEvent): Promise<void> {
    switch (e.area) {
      case "slot": {
        const s = e.event;
        if ((s.event === "cleared" ? "absent" : await this.#putSlot(s.name, true)) === "absent") {
          if (this.slots.delete(s.name)) this.#broadcast("slot-gone", { name: s.name });
          this.#runs.delete(s.name);
        }
        const detail = s.event === "published" ? (s.preview ?? "") : s.event === "started" ? (s.task ?? "") : s.event === "appended" ? `chunk ${s.chunks}` : "";
        this.#note(s.event, s.name, detail, s.event === "published" || s.event === "started", s.at);
        if (s.name.startsWith("crewhost.")) await this.#refreshCrews(true, s.name);
        return;
      }
      case "mail": {
        const who = e.from ? `${e.from} → ${e.agent}` : e.agent;
        this.#note(e.kind, who, e.kind === "sent" || e.kind === "held" ? e.preview : e.id, e.kind === "sent" || e.kind === "held", e.at);
        return;
      }
      case "agent": {
        const row = await this.bus.dashboard.agentRow(e.name, this.#peers.get(e.name));
        this.agents.set(e.name, row);
        this.#broadcast("agent", row);
        return;
      }
      case "peers":
        await this.#refreshAgents(true);
        for (const n of e.joined) this.#note("joined", n, "", false, e.at);
        for (const n of e.left) this.#note("left", n, "", false, e.at);
        await this.#refreshCrews(true);
        return;
      case "topic": {
        const m = e.message;
        const row = this.topics.get(m.topic) ?? (await this.bus.dashboard.topicRow(m.topic, 0));
        if (!row.recent.some((x) => x.id === m.id)) row.recent.push(m);
        if (row.recent.length > TOPIC_KEEP) row.recent.splice(0, row.recent.length - TOPIC_KEEP);
        row.last_id = Math.max(row.last_id, m.id);
        this.topics.set(m.topic, row);
        this.#broadcast("topic", { topic: m.topic, message: m });
        this.#note("topic", `${senderShown(m)} → ${m.topic}`, m.body.slice(0, PREVIEW_CHARS), true, m.sent_at);
        return;
      }
      case "board":
        this.board = await this.bus.dashboard.board();
        this.#broadcast("board", this.board);
        return;
    }
  }
}
