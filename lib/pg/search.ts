// The PostgreSQL engine's search (lib/search/storage.ts): the server's own full-text search over
// the rows themselves, no copy to keep current. docs/PG-ENGINE.md §14 has the design.
//
// Invariants:
// - the text of a record is parsed by $S.doc: configuration 'simple' (no stemming, no stop
//   words: a word is found as it was written), after the separators a query word may hold
//   (- . / : @ _ ') are made spaces, as the file engine's tokenizer splits at them, so "e-mail"
//   is the words e, mail in a row on both engines (lib/search/query.ts makes the query's
//   hyphenated word that phrase);
// - each searched table has a GIN expression index on exactly the expression the query uses
//   (doc of the message body, the topic post, the slot's task and result, the task's payload
//   and result), so a search reads the index, never every row;
// - $S.utf8 and the record functions are immutable (UTF-8 decoding and JSON field extraction
//   are), as an index expression must be;
// - relevance is ts_rank; the room cuts and marks the snippet (the same on both engines).

import type { Hit, Kind, SearchRequest, SearchStorage } from "../search/storage";
import { tsQuery } from "../search/query";
import type { PgClient } from "./engine";

export const SEARCH_TABLES = [
  `create function $S.doc(t text) returns tsvector language sql immutable parallel safe as $$
   select to_tsvector('simple'::regconfig, translate(coalesce(t, ''), '-./:@_''', '        ')) $$`,
  `create function $S.utf8(b bytea) returns text language sql immutable parallel safe as $$ select convert_from(b, 'UTF8') $$`,
  `create function $S.slot_text(record text) returns text language sql immutable parallel safe as $$
   select concat_ws(e'\\n', record::jsonb->>'task', record::jsonb->>'result') $$`,
  `create function $S.task_text(record text) returns text language sql immutable parallel safe as $$
   select concat_ws(e'\\n', record::jsonb->>'payload', record::jsonb->>'result') $$`,
  `create index messages_search on $S.messages using gin ($S.doc($S.utf8(body)))`,
  `create index topic_messages_search on $S.topic_messages using gin ($S.doc(body))`,
  `create index slots_search on $S.slots using gin ($S.doc($S.slot_text(record)))`,
  `create index tasks_search on $S.tasks using gin ($S.doc($S.task_text(record)))`,
];

// One select per kind, each naming its columns (a union takes the first branch's names, and any may be first): (kind, ref, author, user, time, agent, place, text, score).
// q: the tsquery, the viewer (me) and its writer (wr), --from (who: null for anyone), --since (null).
const SELECTS: Record<Kind, string> = {
  message: `select 'message' as kind, m.id as ref, m.sender as author, m.writer as "user", m.sent_at as time, m.agent, m.place,
      utf8(m.body) as text, ts_rank(doc(utf8(m.body)), q.q) as score
    from messages m, q where doc(utf8(m.body)) @@ q.q
      and ((m.agent = q.me and m.place in ('unread', 'claimed', 'read')) or (m.sender = q.me and m.writer = q.wr))
      and (q.who is null or m.sender = q.who) and (q.since is null or m.sent_at >= q.since)`,
  topic: `select 'topic' as kind, t.topic || '#' || t.id as ref, nullif(t.sender, '') as author, t.writer as "user", t.sent_at as time, null as agent, null as place,
      t.body as text, ts_rank(doc(t.body), q.q) as score
    from topic_messages t, q where doc(t.body) @@ q.q
      and (q.who is null or t.sender = q.who) and (q.since is null or t.sent_at >= q.since)`,
  slot: `select 'slot' as kind, s.name as ref, s.name as author, s.writer as "user",
      coalesce((s.record::jsonb->>'published_at')::float8, (s.record::jsonb->>'updated_at')::float8) as time, null as agent, null as place,
      slot_text(s.record) as text, ts_rank(doc(slot_text(s.record)), q.q) as score
    from slots s, q where doc(slot_text(s.record)) @@ q.q
      and s.record::jsonb->>'state' <> 'cleared'
      and (s.record::jsonb->>'expires_at' is null or (s.record::jsonb->>'expires_at')::float8 > extract(epoch from clock_timestamp()))
      and (q.who is null or s.name = q.who)
      and (q.since is null or coalesce((s.record::jsonb->>'published_at')::float8, (s.record::jsonb->>'updated_at')::float8) >= q.since)`,
  task: `select 'task' as kind, k.id::text as ref, k.record::jsonb->'claim'->>'assignee' as author, k.writer as "user",
      (k.record::jsonb->>'updated_at')::float8 as time, null as agent, null as place,
      task_text(k.record) as text, ts_rank(doc(task_text(k.record)), q.q) as score
    from tasks k, q where doc(task_text(k.record)) @@ q.q
      and (q.who is null or k.record::jsonb->'claim'->>'assignee' = q.who)
      and (q.since is null or (k.record::jsonb->>'updated_at')::float8 >= q.since)`,
};

interface Row {
  kind: Kind;
  ref: string;
  author: string | null;
  user: string | null;
  time: number;
  agent: string | null;
  place: string | null;
  text: string;
}

export function pgSearch(pg: PgClient): SearchStorage {
  return {
    search: (req: SearchRequest) =>
      pg.read("searching", async (sql) => {
        const text = `with q as (select to_tsquery('simple'::regconfig, $1) as q, $2::text as me, $3::text as wr, $4::text as who, $5::float8 as since)
          select * from (${req.kinds.map((k) => SELECTS[k]).join("\nunion all\n")}) hits
          order by score desc, time desc, ref desc limit $6 offset $7`;
        const rows: Row[] = await sql.unsafe(text, [tsQuery(req.terms), req.viewer.agent, req.viewer.writer, req.from ?? null, req.since ?? null, req.limit, req.offset]);
        return rows.map((r): Hit => ({
          kind: r.kind,
          key: r.ref,
          author: r.author,
          time: Number(r.time),
          text: r.text ?? "",
          ...(r.kind === "message" ? { agent: r.agent ?? undefined, place: r.place ?? undefined, user: r.user ?? undefined } : {}),
        }));
      }),
  };
}
