// The PostgreSQL engine's topic storage (lib/topics/storage.ts): a topic is a row of `topics`,
// its counter (the last id given and when), each message a row of `topic_messages`; a named
// subscriber is a row of `topic_subscribers`, its position in a topic a row of `topic_cursors`.
// lib/pg/schema.ts makes them.
//
// Invariants:
// - an append is one statement: an upsert of the topic's counter row (made on first use, else
//   incremented under its row lock) and the insert of the message with the id it returned. The
//   row lock is held until the statement commits, so appends to one topic take ids one after
//   another and commit in id order: ids are dense, and a reader that sees id N sees every id
//   below it (a lower id committed first); sent_at never goes back with the id (the counter
//   keeps the last one, and a message is stamped with the later of it and the writer's clock);
// - a message is never updated; `user` is its `writer`, which the server stamps;
// - a message's body is stored as its JSON string: PostgreSQL's text holds no NUL, a body may;
// - a topic's first message wakes `topics` (payload: the topic), every message its topic's
//   channel (payload: the id), both at commit, from triggers.

import type { SQL } from "bun";
import { nowSec } from "../core/time";
import type { TopicCounts, TopicMessage, TopicStorage } from "../topics/storage";
import type { PgClient } from "./engine";

// Who wrote a row and when, as the server says: $S.stamp sets both, whatever the client sent.
const STAMPED = "writer text not null default current_user, changed_at timestamptz not null default now()";

// The room's tables (lib/pg/schema.ts runs them; $S is the schema). Every row carries its
// writer as the server saw it; a message wakes its topic's channel, a new topic `topics`.
export const TOPIC_TABLES = [
  `create table $S.topics (
     name text primary key,
     last_id bigint not null,
     last_at double precision not null,
     ${STAMPED})`,
  `create table $S.topic_messages (
     topic text not null,
     id bigint not null,
     sender text not null,
     body text not null,
     sent_at double precision not null,
     ${STAMPED},
     primary key (topic, id))`,
  `create table $S.topic_subscribers (
     name text primary key,
     created_at double precision not null,
     ${STAMPED})`,
  `create table $S.topic_cursors (
     name text not null,
     topic text not null,
     position bigint not null,
     ${STAMPED},
     primary key (name, topic))`,
  ...["topics", "topic_messages", "topic_subscribers", "topic_cursors"].map(
    (t) => `create trigger stamp before insert or update on $S.${t} for each row execute function $S.stamp()`,
  ),
  `create function $S.wake_topics() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('topics'), new.name); return null; end $$`,
  `create trigger wake after insert on $S.topics for each row execute function $S.wake_topics()`,
  `create function $S.wake_topic() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('topic:' || new.topic), new.id::text); return null; end $$`,
  `create trigger wake after insert on $S.topic_messages for each row execute function $S.wake_topic()`,
];

interface MessageRow {
  id: string; // bigint: the client gives it as a string
  sender: string;
  body: string;
  sent_at: number;
  writer: string;
}

// A row as a reader sees it; undefined for a body that is not a2a's (a row written by hand),
// which readers pass over as the file engine passes over a foreign entry.
function messageOf(topic: string, r: MessageRow): TopicMessage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(r.body);
  } catch {
    return undefined;
  }
  if (typeof body !== "string") return undefined;
  return { a2a: 1, topic, id: Number(r.id), from: r.sender, body, sent_at: r.sent_at, user: r.writer };
}

// Positions and ids beyond what a bigint holds are past every message.
const BEYOND = Number.MAX_SAFE_INTEGER;

// One statement: the counter row made or incremented (locked until commit), the message
// inserted under the id it gives. `now` is the writer's clock, kept from going back.
async function append(sql: SQL, topic: string, from: string, body: string, now: number): Promise<TopicMessage> {
  const [r] = await sql`
    with n as (
      insert into topics as t (name, last_id, last_at) values (${topic}, 1, ${now})
      on conflict (name) do update set last_id = t.last_id + 1, last_at = greatest(t.last_at, excluded.last_at)
      returning last_id, last_at)
    insert into topic_messages (topic, id, sender, body, sent_at)
      select ${topic}, last_id, ${from}, ${JSON.stringify(body)}, last_at from n
    returning id, sent_at, writer`;
  return { a2a: 1, topic, id: Number(r.id), from, body, sent_at: r.sent_at, user: r.writer };
}

async function read(sql: SQL, topic: string, afterId: number, limit: number): Promise<TopicMessage[]> {
  if (afterId >= BEYOND || limit <= 0) return [];
  const rows: MessageRow[] = await sql`select id, sender, body, sent_at, writer from topic_messages
    where topic = ${topic} and id > ${afterId} order by id limit ${Number.isFinite(limit) ? limit : null}`;
  return rows.map((r) => messageOf(topic, r)).filter((m): m is TopicMessage => m !== undefined);
}

async function counts(sql: SQL, topic: string, after: number[]): Promise<TopicCounts> {
  const [c] = await sql`select count(*)::int as messages, coalesce(max(id), 0) as last_id,
    (select sent_at from topic_messages where topic = ${topic} order by id desc limit 1) as last_at
    from topic_messages where topic = ${topic}`;
  const positions = after.map((p) => Math.min(p, BEYOND));
  const unread = positions.length
    ? await sql`select (select count(*)::int from topic_messages where topic = ${topic} and id > p) as n
        from unnest(${positions}::int8[]) with ordinality as u(p, i) order by i`
    : [];
  return { messages: c.messages, last_id: Number(c.last_id), last_at: c.last_at, unread: unread.map((r: { n: number }) => r.n) };
}

// The subscriber's creation time, `now` recorded on first use. A row is never removed, so when
// the insert finds one (an earlier first use, or a concurrent one it waited for) the next
// statement sees it.
async function subscriber(sql: SQL, name: string, now: number): Promise<number> {
  const made = await sql`insert into topic_subscribers (name, created_at) values (${name}, ${now})
    on conflict (name) do nothing returning created_at`;
  if (made.length) return made[0].created_at;
  return (await sql`select created_at from topic_subscribers where name = ${name}`)[0].created_at;
}

export function pgTopics(pg: PgClient): TopicStorage {
  return {
    // Times are the call's instant (nowSec before pg.run), also when pg.run repeats the statement
    // after making the schema: a subscriber whose first use waited for it still started before a
    // message published meanwhile.
    append: (topic, from, body) => {
      const now = nowSec();
      return pg.run(`publishing on topic ${topic}`, (sql) => append(sql, topic, from, body, now));
    },
    read: (topic, afterId, limit) => pg.read(`reading topic ${topic}`, (sql) => read(sql, topic, afterId, limit)),
    topics: () => pg.read("listing topics", async (sql) => (await sql`select name from topics`).map((r: { name: string }) => r.name)),
    lastBefore: (topic, sec) => pg.read(`reading topic ${topic}`, async (sql) => {
      const rows = await sql`select id from topic_messages where topic = ${topic} and sent_at < ${sec} order by id desc limit 1`;
      return rows.length ? Number(rows[0].id) : 0;
    }),
    counts: (topic, after) => pg.read(`counting topic ${topic}`, (sql) => counts(sql, topic, after)),
    subscriber: (name) => {
      const now = nowSec();
      return pg.run(`recording subscriber ${name}`, (sql) => subscriber(sql, name, now));
    },
    subscribers: () => pg.read("listing subscribers", async (sql) =>
      (await sql`select name from topic_subscribers union select name from topic_cursors`).map((r: { name: string }) => r.name)),
    cursor: (name, topic) => pg.read(`reading subscriber ${name}`, async (sql) => {
      const rows = await sql`select position from topic_cursors where name = ${name} and topic = ${topic}`;
      return rows.length ? Number(rows[0].position) : undefined;
    }),
    setCursor: (name, topic, id) => pg.run(`moving subscriber ${name}`, async (sql) => {
      await sql`insert into topic_cursors (name, topic, position) values (${name}, ${topic}, ${id})
        on conflict (name, topic) do update set position = excluded.position`;
    }),
    // The counter row keeps the highest id and its time, so appends go on after it.
    restore: (m) => pg.run(`restoring message ${m.id} of topic ${m.topic}`, (sql) =>
      sql.begin(async (tx) => {
        await tx`insert into topics as t (name, last_id, last_at) values (${m.topic}, ${m.id}, ${m.sent_at})
          on conflict (name) do update set last_id = greatest(t.last_id, excluded.last_id), last_at = greatest(t.last_at, excluded.last_at)`;
        const made = await tx`insert into topic_messages (topic, id, sender, body, sent_at) values (${m.topic}, ${m.id}, ${m.from}, ${JSON.stringify(m.body)}, ${m.sent_at})
          on conflict (topic, id) do nothing returning id`;
        if (!made.length) throw TAKEN; // rolls the counter back too
        return true;
      }).catch((err) => (err === TAKEN ? false : Promise.reject(err)))),
    subscription: (name) => pg.run(`reading subscriber ${name}`, async (sql) => {
      const [s] = await sql`select created_at from topic_subscribers where name = ${name}`;
      const rows = await sql`select topic, position from topic_cursors where name = ${name} order by topic`;
      return { created_at: s?.created_at, cursors: rows.map((r: { topic: string; position: string }) => ({ topic: r.topic, id: Number(r.position) })) };
    }),
    restoreSubscriber: (name, at) => pg.run(`recording subscriber ${name}`, async (sql) =>
      (await sql`insert into topic_subscribers (name, created_at) values (${name}, ${at}) on conflict (name) do nothing returning 1`).length > 0),
  };
}

// A restored message's number was taken: the transaction is undone.
const TAKEN = new Error("the message's number is taken");
