// The PostgreSQL engine's search (lib/search/storage.ts): the server's own full-text search over
// the rows themselves, no copy to keep current. docs/PG-ENGINE.md §14 has the design.
//
// Invariants:
// - the text of a record is parsed by $S.doc: configuration 'simple' (no stemming, no stop
//   words: a word is found as it was written), after the separators a query word may hold
//   (- . / : @ _ ') and common punctuation are made spaces, as the file engine splits at them, so "e-mail"
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

// A text as the index reads it when it cannot be decoded (a NUL in JSON, which jsonb refuses):
// its escapes made spaces. The functions are total: an index expression that raised would make
// the write it indexes fail, and no write may fail because of search.
const LOOSE = `regexp_replace(t, '\\\\(u[0-9a-fA-F]{4}|.)', ' ', 'g')`;

// What separates words on the file engine (unicode61: anything not a letter or digit) but would
// join them in PostgreSQL's parser, which under the C locale takes every non-ASCII character for
// a letter: the ASCII ones a query word may hold, and the punctuation text often has.
const SEPARATORS = "-./:@_'\u00a0\u00ab\u00bb\u00b7\u2010\u2011\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026";

export const SEARCH_TABLES = [
  `create function $S.doc(t text) returns tsvector language sql immutable parallel safe as $$
   select to_tsvector('simple'::regconfig, translate(coalesce(t, ''), '${SEPARATORS.replaceAll("'", "''")}', '${" ".repeat(SEPARATORS.length)}')) $$`,
  // a message's body (bytea): one that is not UTF-8 text is not searched
  `create function $S.utf8(b bytea) returns text language plpgsql immutable parallel safe as $$
   begin return convert_from(b, 'UTF8'); exception when others then return ''; end $$`,
  // JSON text as jsonb, which refuses a \u0000: that one is read as a space
  `create function $S.js(t text) returns jsonb language sql immutable parallel safe as $$ select replace(t, '\\u0000', ' ')::jsonb $$`,
  // a topic post's body, kept as its JSON string (lib/pg/topics.ts)
  `create function $S.unjson(t text) returns text language plpgsql immutable parallel safe as $$
   begin return $S.js(t) #>> '{}'; exception when others then return ${LOOSE}; end $$`,
  // fields a and b of a record (a slot's, a task's: one JSON object each)
  `create function $S.fields(t text, a text, b text) returns text language plpgsql immutable parallel safe as $$
   declare j jsonb; begin j := $S.js(t); return concat_ws(e'\\n', j->>a, j->>b); exception when others then return ${LOOSE}; end $$`,
  `create function $S.slot_text(record text) returns text language sql immutable parallel safe as $$ select $S.fields(record, 'task', 'result') $$`,
  `create function $S.task_text(record text) returns text language sql immutable parallel safe as $$ select $S.fields(record, 'payload', 'result') $$`,
  `create index messages_search on $S.messages using gin ($S.doc($S.utf8(body)))`,
  `create index topic_messages_search on $S.topic_messages using gin ($S.doc($S.unjson(body)))`,
  `create index slots_search on $S.slots using gin ($S.doc($S.slot_text(record)))`,
  `create index tasks_search on $S.tasks using gin ($S.doc($S.task_text(record)))`,
];

// One select per kind, each naming its columns (a union takes the first branch's names, and any may be first): (kind, ref, author, user, time, agent, place, text, score).
// A record's fields are read through $S.js, which a record holding a \u0000 does not fail.
// q: the tsquery, the viewer (me) and its writer (wr), --from (who: null for anyone), --since (null).
const SELECTS: Record<Kind, string> = {
  message: `select 'message' as kind, m.id as ref, m.sender as author, m.writer as "user", m.sent_at as time, m.agent, m.place,
      utf8(m.body) as text, ts_rank(doc(utf8(m.body)), q.q) as score
    from messages m, q where doc(utf8(m.body)) @@ to_tsquery('simple'::regconfig, $1::text)
      and ((m.agent = q.me and m.place in ('unread', 'claimed', 'read')) or (m.sender = q.me and m.writer = q.wr))
      and (q.who is null or m.sender = q.who) and (q.since is null or m.sent_at >= q.since)`,
  topic: `select 'topic' as kind, t.topic || '#' || t.id as ref, nullif(t.sender, '') as author, t.writer as "user", t.sent_at as time, null as agent, null as place,
      unjson(t.body) as text, ts_rank(doc(unjson(t.body)), q.q) as score
    from topic_messages t, q where doc(unjson(t.body)) @@ to_tsquery('simple'::regconfig, $1::text)
      and (q.who is null or t.sender = q.who) and (q.since is null or t.sent_at >= q.since)`,
  slot: `select 'slot' as kind, s.name as ref, s.name as author, s.writer as "user",
      coalesce((js(s.record)->>'published_at')::float8, (js(s.record)->>'updated_at')::float8) as time, null as agent, null as place,
      slot_text(s.record) as text, ts_rank(doc(slot_text(s.record)), q.q) as score
    from slots s, q where doc(slot_text(s.record)) @@ to_tsquery('simple'::regconfig, $1::text)
      and js(s.record)->>'state' <> 'cleared'
      and (js(s.record)->>'expires_at' is null or (js(s.record)->>'expires_at')::float8 > extract(epoch from clock_timestamp()))
      and (q.who is null or s.name = q.who)
      and (q.since is null or coalesce((js(s.record)->>'published_at')::float8, (js(s.record)->>'updated_at')::float8) >= q.since)`,
  task: `select 'task' as kind, k.id::text as ref, js(k.record)->'claim'->>'assignee' as author, k.writer as "user",
      (js(k.record)->>'updated_at')::float8 as time, null as agent, null as place,
      task_text(k.record) as text, ts_rank(doc(task_text(k.record)), q.q) as score
    from tasks k, q where doc(task_text(k.record)) @@ to_tsquery('simple'::regconfig, $1::text)
      and (q.who is null or js(k.record)->'claim'->>'assignee' = q.who)
      and (q.since is null or (js(k.record)->>'updated_at')::float8 >= q.since)`,
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
        const text = `with q as (select to_tsquery('simple'::regconfig, $1::text) as q, $2::text as me, $3::text as wr, $4::text as who, $5::float8 as since)
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
