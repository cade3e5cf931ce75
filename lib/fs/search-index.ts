// The file engine's search index file, ROOT/index/UID.sqlite (lib/fs/search.ts catches it up and
// queries it): its tables, and opening it only when it is this user's own, private, and of this
// FORMAT. docs/FILE-ENGINE.md §15a.

import { Database } from "bun:sqlite";
import { chmodSync, rmSync, statSync } from "node:fs";
import type { Store } from "../core/config";
import { ensureDir } from "./guard";
import { lstatIf } from "./io";
import { indexDir } from "./paths";
import type { Kind } from "../search/storage";

const FORMAT = "5"; // bumped when the tables change: an index of another format is rebuilt

const TABLES = [
  `create table meta (key text primary key, value text not null)`,
  // key: unique per record (a message: INBOX/ID, as one id lies in one inbox); ref: what a row shows
  `create table docs (id integer primary key, kind text not null, key text not null unique, ref text not null,
     author text, user text, time real not null, agent text, place text, version integer)`,
  `create virtual table fts using fts5(body, tokenize = "unicode61 remove_diacritics 2")`,
  // an inbox's ids at one place, read from the index alone: a changed directory is compared with it
  `create index docs_agent on docs (agent, place, key) where agent is not null`,
  `create index docs_kind on docs (kind, key)`, // slots and tasks by version, without reading every message's row
  `create table progress (topic text primary key, last integer not null)`,
  // what a directory looked like when it was last read whole (lib/fs/search.ts, unchanged())
  `create table dirs (path text primary key, mtime text not null, seen real not null)`,
];

// A row of docs with its text, as a catch-up adds it.
export interface Doc {
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

export const uid = () => process.getuid?.() ?? 0;

// An index in memory, for one search, when the file cannot be had.
export function memoryIndex(): Database {
  const db = new Database(":memory:");
  for (const t of TABLES) db.run(t);
  return db;
}

export function removeIndex(file: string): void {
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
export function openIndex(store: Store, file: string): Database | undefined {
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
