// The file engine's search (lib/search/storage.ts): an SQLite FTS5 index (bun:sqlite) that is a
// derived, rebuildable cache of the files, ROOT/index/UID.sqlite, one per OS user (it holds
// the mail that user can read: mode 0600). docs/FILE-ENGINE.md §15a has the layout.
//
// Invariants:
// - the files stay the truth: no writer touches the index, so no write can fail or wait
//   because of it; each search catches it up first, in one SQLite transaction: messages by
//   id and place (a message's text never changes, only where it lies), topic posts from the last
//   id indexed per topic (ids are dense and immutable), slots and tasks by version; an inbox or
//   topic directory that kept its mtime since a settled reading is passed over (unchanged()),
//   and a changed inbox directory is compared with the index's ids at its place (search-mail.ts);
// - a missing, damaged or foreign index file (not ours, not a regular file, readable by others)
//   is never a reason to fail: it is deleted and built again; when that fails too, the search
//   runs on an index built in memory for this one search;
// - the tokenizer is unicode61 with remove_diacritics 2: a hyphen separates words, and the
//   query makes a hyphenated word a phrase of its parts (lib/search/query.ts), so "e-mail"
//   finds "e-mail" and "E-Mail" and "e mail".

import type { Database } from "bun:sqlite";
import { statSync, type BigIntStats } from "node:fs";
import { join } from "node:path";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { indexDir, topicDir } from "./paths";
import type { Kind, SearchStorage } from "../search/storage";
import { memoryIndex, openIndex, removeIndex, uid, type Doc } from "./search-index";
import { mailChanges, type MailChanges } from "./search-mail";
import { query } from "./search-query";
import { fileSlots } from "./slots";
import { fileTasks } from "./tasks";
import { fileTopics } from "./topics";

const TOPIC_PAGE = 1000;

// A directory is passed over when its mtime is the one seen last time and was already this old
// then: a change in the same clock tick as that reading could leave the mtime as it was (racy-git),
// so only a reading made well after the directory's last change is trusted.
const SETTLED_MS = 2000;

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

async function searchFiles(store: Store, req: Parameters<SearchStorage["search"]>[0]) {
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
  const db = memoryIndex();
  try {
    await catchUp(store, db);
    return query(db, req);
  } finally {
    db.close();
  }
}

// Reads what changed since the index last saw the store, then writes it in one transaction.
async function catchUp(store: Store, db: Database): Promise<void> {
  const dirs = new Map((db.query("select path, mtime, seen from dirs").all() as { path: string; mtime: string; seen: number }[]).map((r) => [r.path, r]));
  const looked: { path: string; mtime: string; seen: number }[] = [];
  // Whether the directory at `path` is as it was when last read; notes it as read now when not.
  const unchanged = (path: string): boolean => {
    const seen = Date.now(); // before the stat: a reading is never dated later than it was made
    const st = statIf(path);
    const mtime = st ? String(st.mtimeNs) : "absent";
    const was = dirs.get(path);
    const settled = !st || (was !== undefined && was.seen - Number(st.mtimeNs / 1_000_000n) >= SETTLED_MS);
    if (was?.mtime === mtime && settled) return true;
    looked.push({ path, mtime, seen });
    return false;
  };
  const changes: MailChanges = { add: [], drop: [], moved: [], forget: [] };
  await mailChanges(store, db, dirs.keys(), unchanged, changes);
  const { add, drop, moved, forget } = changes;
  const progress: { topic: string; last: number }[] = [];

  // Topics: from the last id indexed, per topic.
  const topics = fileTopics(store);
  const last = new Map((db.query("select topic, last from progress").all() as { topic: string; last: number }[]).map((r) => [r.topic, r.last]));
  for (const topic of await topics.topics()) {
    if (unchanged(topicDir(store, topic))) continue;
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
