// The PostgreSQL engine's mail tables (lib/pg/mail.ts reads and writes them; lib/pg/schema.ts
// makes them): inboxes, messages (a row per message, its place a column), the keys of sends and
// the policies, with the triggers that stamp writers and wake waiters, then who may change what
// (lib/pg/mail-trust.ts). $S is the schema.

import { MAIL_TRUST } from "./mail-trust";

export const MAIL_TABLES = [
  `create table $S.inboxes (
     agent text primary key,
     owner text,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create trigger stamp before insert on $S.inboxes for each row execute function $S.stamp()`,
  `create function $S.wake_inboxes() returns trigger language plpgsql as $$
   begin perform pg_notify($S.channel('inboxes'), new.agent); return null; end $$`,
  `create trigger wake after insert on $S.inboxes for each row execute function $S.wake_inboxes()`,
  `create sequence $S.arrivals`,
  `create table $S.messages (
     agent text not null,
     id text not null,
     place text not null check (place in ('unread', 'claimed', 'read', 'held', 'bad')),
     sender text not null,
     body bytea not null,
     size integer not null,
     sent_at double precision not null,
     reply_to text,
     thread text, -- the thread (lib/mail/message.ts namedThread): its own id when it answers nothing; null for a reply written before threads
     host text not null,
     pid integer not null,
     attachments jsonb, -- the blobs handed over with it (lib/blobs/attachment.ts), or null
     claim_host text,
     claim_pid integer,
     claim_ms double precision,
     arrived bigint not null default nextval('$S.arrivals'),
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (agent, id))`,
  `create index messages_place on $S.messages (agent, place, id)`,
  `create index messages_thread on $S.messages (thread, id)`,
  `create index messages_answers on $S.messages (reply_to) where thread is null`, // replies written before threads, found through their parents
  `create index messages_id on $S.messages (id)`, // locate: a message by its id alone, in whichever inbox
  `create trigger stamp before insert on $S.messages for each row execute function $S.stamp()`,
  // The arrival number, not the id: any role may LISTEN on any channel, and row-level security
  // hides the id (the reader looks it up: lib/pg/engine.ts byArrival).
  `create function $S.wake_inbox() returns trigger language plpgsql as $$
   begin
     if new.place = 'unread' and (tg_op = 'INSERT' or old.place <> 'unread') then
       perform pg_notify($S.channel('inbox:' || new.agent), new.arrived::text);
     end if;
     return null;
   end $$`,
  `create trigger wake after insert or update on $S.messages for each row execute function $S.wake_inbox()`,
  `create table $S.mail_keys (
     agent text not null,
     sender text not null,
     key text not null, -- the sha256 of the sender's key (a key may hold any character, NUL included)
     id text not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (agent, sender, key))`,
  `create trigger stamp before insert or update on $S.mail_keys for each row execute function $S.stamp()`,
  `create table $S.policies (
     agent text primary key,
     record text not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create trigger stamp before insert or update on $S.policies for each row execute function $S.stamp()`,
  ...MAIL_TRUST,
];
