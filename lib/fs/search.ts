// The file engine's search (lib/search/storage.ts): an SQLite FTS5 index (bun:sqlite) that is a
// derived, rebuildable cache of the files, ROOT/index/UID.sqlite, one per OS user (it holds
// the mail that user can read: mode 0600). docs/FILE-ENGINE.md §15 has the layout.
//
// Invariants:
// - the files stay the truth: no writer touches the index, so no write can fail or wait
//   because of it; each search catches it up first, in one SQLite transaction: messages by
//   id and place (a message's text never changes, only where it lies), topic posts from the last
//   id indexed per topic (ids are dense and immutable), slots and tasks by version; an inbox or
//   topic whose directories kept their mtime since a settled reading is passed over (unchanged());
// - a missing, damaged or foreign index file (not ours, not a regular file, readable by others)
//   is never a reason to fail: it is deleted and built again; when that fails too, the search
//   runs on an index built in memory for this one search;
// - the tokenizer is unicode61 with remove_diacritics 2: a hyphen separates words, and the
//   query makes a hyphenated word a phrase of its parts (lib/search/query.ts), so "e-mail"
//   finds "e-mail" and "E-Mail" and "e mail".

import { Database } from "bun:sqlite";
import { chmodSync, rmSync, statSync, type BigIntStats } from "node:fs";
import { join, sep } from "node:path";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { ensureDir } from "./guard";
import { lstatIf } from "./io";
import { claimDir, curDir, heldDir, inboxesDir, indexDir, newDir, topicDir } from "./paths";
import type { At } from "../mail/storage";
import { query } from "./search-query";
import type { Hit, Kind, SearchRequest, SearchStorage } from "../search/storage";
import { fileMail } from "./mail";
import { fileSlots } from "./slots";
import { fileTasks } from "./tasks";
import { fileTopics } from "./topics";

const FORMAT = "4"; // bumped when the tables change: an index of another format is rebuilt
const TOPIC_PAGE = 1000;

const TABLES = [
  `create table meta (key text primary key, value text not null)`,
  // key: unique per record (a message: INBOX/ID, as one id lies in one inbox); ref: what a row shows
  `create table docs (id integer primary key, kind text not null, key text not null unique, ref text not null,
     author text, user text, time real not null, agent text, place text, version integer)`,
  `create virtual table fts using fts5(body, tokenize = "unicode61 remove_diacritics 2")`,
  `create index docs_agent on docs (agent) where agent is not null`,
  `create index docs_kind on docs (kind, key)`, // slots and tasks by version, without reading every message's row
  `create table progress (topic text primary key, last integer not null)`,
  // what a directory looked like when it was last read whole (see unchanged())
  `create table dirs (path text primary key, mtime text not null, seen real not null)`,
];

// A directory is passed over when its mtime is the one seen last time and was already this old
// then: a change in the same clock tick as that reading could leave the mtime as it was (racy-git),
// so only a reading made well after the directory's last change is trusted.
const SETTLED_MS = 2000;

const uid = () => process.getuid?.() ?? 0;

function statIf(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined; // absent (a place not made yet), or not ours to look at: read it, every time
  }
}

export function fileSearch(store: Store): SearchStorage {
  return { search: async (req) => searchFiles(store, req) };
}

async function searchFiles(store: Store, req: SearchRequest): Promise<Hit[]> {
  const file = join(indexDir(store), `${uid()}.sqlite`);
  for (const attempt of [0, 1]) {
    let db: Database | undefined;
    try {
      db = openIndex(store, file);
      if (!db) {
        if (attempt === 0) removeIndex(file);
        continue;
      }
      await catchUp(store, db);
      return query(db, req);
    } catch (err) {
      if (err instanceof A2AError) throw err; // the store's own trouble, not the cache's
      if (attempt === 0) removeIndex(file);
    } finally {
      db?.close();
    }
  }
  // The cache cannot be had here (a full disk, a read-only store): one in memory, for this search.
  const db = new Database(":memory:");
  try {
    for (const t of TABLES) db.run(t);
    await catchUp(store, db);
    return query(db, req);
  } finally {
    db.close();
  }
}

function removeIndex(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      rmSync(f, { force: true });
    } catch {
      // another user's file in the sticky directory: openIndex refuses it again, and the search runs in memory
    }
  }
}

// The index at `file`, made (mode 0600) when missing; undefined when it is not ours (another
// user's file, a link, readable by others) or an index of another FORMAT: the caller deletes it
// and comes back. SQLite throws on a damaged one.
function openIndex(store: Store, file: string): Database | undefined {
  ensureDir(store, indexDir(store), "sticky");
  const before = lstatIf(file);
  if (before && !before.isFile()) return undefined;
  const db = new Database(file, { create: true });
  try {
    // Before anything is written: SQLite gives its -wal and -shm files the database's mode.
    const st = statSync(file);
    if (st.uid !== uid()) return close(db);
    if ((st.mode & 0o077) !== 0) chmodSync(file, 0o600);
    db.run("pragma busy_timeout = 10000");
    // The default rollback journal, not WAL: a search that finds nothing new writes nothing, and
    // opens and closes no -wal and -shm files.
    db.run("pragma synchronous = off"); // a cache: a crash costs a rebuild, never the truth
    const has = db.query("select 1 from sqlite_master where name = 'meta'").get();
    if (!has) {
      db.transaction(() => {
        for (const t of TABLES) db.run(t);
        db.run("insert into meta (key, value) values ('format', ?)", [FORMAT]);
      }).immediate();
    } else {
      const f = db.query("select value from meta where key = 'format'").get() as { value: string } | null;
      if (f?.value !== FORMAT) return close(db);
    }
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

const close = (db: Database): undefined => void db.close();

interface Doc {
  kind: Kind;
  key: string;
  ref: string;
  author: string | null;
  user: string | null;
  time: number;
  agent: string | null;
  place: string | null;
  version: number | null;
  body: string;
}

// Reads what changed since the index last saw the store, then writes it in one transaction.
async function catchUp(store: Store, db: Database): Promise<void> {
  const dirs = new Map((db.query("select path, mtime, seen from dirs").all() as { path: string; mtime: string; seen: number }[]).map((r) => [r.path, r]));
  const looked: { path: string; mtime: string; seen: number }[] = [];
  const forget: string[] = [];
  // Whether the directories `paths` are as they were when last read; notes them as read now.
  const unchanged = (paths: string[]): boolean => {
    let same = true;
    const seen = Date.now();
    for (const path of paths) {
      const st = statIf(path);
      const mtime = st ? String(st.mtimeNs) : "absent";
      const was = dirs.get(path);
      const settled = !st || (was !== undefined && was.seen - Number(st.mtimeNs / 1_000_000n) >= SETTLED_MS);
      if (was?.mtime === mtime && settled) continue;
      same = false;
      looked.push({ path, mtime, seen });
    }
    return same;
  };
  const add: Doc[] = [];
  const drop: number[] = [];
  const moved: { id: number; place: string }[] = [];
  const progress: { topic: string; last: number }[] = [];

  // Mail: every inbox this user can list, by (inbox, id) and place.
  const mail = fileMail(store);
  const agents = await mail.agents();
  const here = new Set(agents);
  // An inbox that was read before (its new/ noted in dirs) and is gone now: its rows go.
  const inboxes = inboxesDir(store) + sep;
  for (const path of dirs.keys()) {
    const agent = path.startsWith(inboxes) && path.endsWith(`${sep}new`) ? path.slice(inboxes.length, -4) : undefined;
    if (agent === undefined || here.has(agent)) continue;
    for (const r of db.query("select id from docs where agent = ?").all(agent) as { id: number }[]) drop.push(r.id);
    for (const d of [newDir(store, agent), claimDir(store, agent), curDir(store, agent), heldDir(store, agent)]) forget.push(d);
  }
  for (const agent of agents) {
    if (unchanged([newDir(store, agent), claimDir(store, agent), curDir(store, agent), heldDir(store, agent)])) continue;
    const known = new Map<string, { id: number; place: string }>();
    for (const r of db.query("select id, key, place from docs where agent = ?").all(agent) as { id: number; key: string; place: string }[]) known.set(r.key, r);
    const seen = new Set<string>();
    const fresh: { id: string; at: At; place: string }[] = [];
    try {
      const here: { id: string; at: At; place: string }[] = [];
      for (const place of ["unread", "read", "held"] as const) for (const id of await mail.ids(agent, place)) here.push({ id, at: place, place });
      for (const c of await mail.claims(agent)) here.push({ id: c.id, at: c, place: "claimed" });
      for (const m of here) {
        const key = `${agent}/${m.id}`;
        seen.add(key);
        const k = known.get(key);
        if (!k) fresh.push(m);
        else if (k.place !== m.place) moved.push({ id: k.id, place: m.place });
      }
      const heads = fresh.length ? await mail.heads(agent, fresh, store.maxBytes) : [];
      heads.forEach((h, i) => {
        if (typeof h === "string") return;
        add.push({ kind: "message", key: `${agent}/${h.id}`, ref: h.id, author: h.from, user: h.user, time: h.sent_at, agent, place: fresh[i].place, version: null, body: h.body });
      });
    } catch (err) {
      if (!(err instanceof A2AError)) throw err;
      // an inbox this user may not read: what the index held of it stays out of reach
      for (const key of known.keys()) seen.add(key);
    }
    for (const [key, k] of known) if (!seen.has(key)) drop.push(k.id);
  }

  // Topics: from the last id indexed, per topic.
  const topics = fileTopics(store);
  const last = new Map((db.query("select topic, last from progress").all() as { topic: string; last: number }[]).map((r) => [r.topic, r.last]));
  for (const topic of await topics.topics()) {
    if (unchanged([topicDir(store, topic)])) continue;
    let after = last.get(topic) ?? 0;
    const from = after;
    for (;;) {
      const page = await topics.read(topic, after, TOPIC_PAGE);
      for (const m of page) add.push({ kind: "topic", key: `${topic}#${m.id}`, ref: `${topic}#${m.id}`, author: m.from || null, user: m.user, time: m.sent_at, agent: null, place: null, version: null, body: m.body });
      if (!page.length) break;
      after = page.at(-1)!.id;
      if (page.length < TOPIC_PAGE) break;
    }
    if (after !== from) progress.push({ topic, last: after });
  }

  // Slots and tasks: by version.
  const versions = (kind: Kind) => new Map((db.query("select id, key, version from docs where kind = ?").all(kind) as { id: number; key: string; version: number }[]).map((r) => [r.key, r]));
  const keep = (kind: Kind, docs: Doc[]) => {
    const had = versions(kind);
    for (const d of docs) {
      const h = had.get(d.key);
      had.delete(d.key);
      if (h?.version === d.version) continue;
      if (h) drop.push(h.id);
      add.push(d);
    }
    for (const h of had.values()) drop.push(h.id);
  };
  const slots = fileSlots(store);
  const names = await slots.names();
  const slotDocs: Doc[] = [];
  (await slots.readMany(names)).forEach((r) => {
    if (r.kind !== "ok") return;
    const s = r.record;
    slotDocs.push({ kind: "slot", key: s.name, ref: s.name, author: s.name, user: null, time: s.published_at ?? s.updated_at, agent: null, place: null, version: s.version, body: [s.task, s.result ?? ""].filter(Boolean).join("\n") });
  });
  keep("slot", slotDocs);
  const tasks = fileTasks(store);
  const taskDocs: Doc[] = [];
  for (const queue of await tasks.queues()) {
    for (const t of await tasks.records(queue, await tasks.ids(queue))) {
      taskDocs.push({ kind: "task", key: t.id, ref: t.id, author: t.claim?.assignee ?? null, user: null, time: t.updated_at, agent: null, place: null, version: t.version, body: [t.payload, t.result ?? ""].filter(Boolean).join("\n") });
    }
  }
  keep("task", taskDocs);

  if (!add.length && !drop.length && !moved.length && !progress.length && !looked.length && !forget.length) return;
  const del = db.prepare("delete from docs where id = ?");
  const delText = db.prepare("delete from fts where rowid = ?");
  const move = db.prepare("update docs set place = ? where id = ?");
  const ins = db.prepare("insert into docs (kind, key, ref, author, user, time, agent, place, version) values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (key) do nothing returning id");
  const insText = db.prepare("insert into fts (rowid, body) values (?, ?)");
  const setLast = db.prepare("insert into progress (topic, last) values (?, ?) on conflict (topic) do update set last = max(last, excluded.last)");
  db.transaction(() => {
    for (const id of drop) {
      del.run(id);
      delText.run(id);
    }
    for (const m of moved) move.run(m.place, m.id);
    for (const d of add) {
      const r = ins.get(d.kind, d.key, d.ref, d.author, d.user, d.time, d.agent, d.place, d.version) as { id: number } | null;
      if (r) insText.run(r.id, d.body);
    }
    for (const p of progress) setLast.run(p.topic, p.last);
    const note = db.prepare("insert into dirs (path, mtime, seen) values (?, ?, ?) on conflict (path) do update set mtime = excluded.mtime, seen = excluded.seen");
    for (const l of looked) note.run(l.path, l.mtime, l.seen);
    for (const path of forget) db.run("delete from dirs where path = ?", [path]);
  }).immediate();
}
