// The file engine's search query (lib/fs/search.ts keeps the index it runs on, caught up with
// the files): one FTS5 match ranked by bm25, the page chosen on the docs' columns first, then the
// text of its rows only. A message is visible to its inbox's owner (unread, claimed, read) and to
// its writer, as lib/search/storage.ts says.

import type { Database } from "bun:sqlite";
import { fts5Query } from "../search/query";
import type { Hit, Kind, SearchRequest } from "../search/storage";

export function query(db: Database, req: SearchRequest): Hit[] {
  const where = [`fts match ?`, `d.kind in (${req.kinds.map(() => "?").join(", ")})`];
  const args: (string | number)[] = [fts5Query(req.terms), ...req.kinds];
  if (req.from !== undefined) {
    where.push("d.author = ?");
    args.push(req.from);
  }
  if (req.since !== undefined) {
    where.push("d.time >= ?");
    args.push(req.since);
  }
  where.push(`(d.kind <> 'message' or (d.agent = ? and d.place in ('unread', 'claimed', 'read')) or (d.author = ? and d.user = ?))`);
  args.push(req.viewer.agent, req.viewer.agent, req.viewer.writer, req.limit, req.offset);
  // The page first (ranked on the docs' columns), then the text of its rows only.
  const rows = db
    .query(`select p.*, (select body from fts where rowid = p.id) as text from (
        select d.id, d.kind, d.ref, d.author, d.user, d.time, d.agent, d.place, bm25(fts) as score from fts join docs d on d.id = fts.rowid
        where ${where.join(" and ")} order by score, d.time desc, d.ref desc limit ? offset ?) p
      order by p.score, p.time desc, p.ref desc`)
    .all(...args) as { kind: Kind; ref: string; author: string | null; user: string | null; time: number; agent: string | null; place: string | null; text: string }[];
  return rows.map((r) => ({
    kind: r.kind,
    key: r.ref,
    author: r.author,
    time: r.time,
    text: r.text,
    ...(r.kind === "message" ? { agent: r.agent ?? undefined, place: r.place ?? undefined, user: r.user ?? undefined } : {}),
  }));
}
