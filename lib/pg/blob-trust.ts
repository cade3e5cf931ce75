// Who may remove and read what in the PostgreSQL engine's blobs (PROTOCOL.md §19), as the server
// enforces it whatever statement a role sends: a blob a record names, or stored within gc's floor,
// stays, whoever deletes it
// (keep_named: gc, run by any member, decides from what that member can see, which row-level
// security filters; the server decides from every record), a stored blob's bytes never change
// and an upload in flight is its writer's (keep_parts, keep_blob), and, with row-level security
// (BLOB_ROW_SECURITY, a2a init --print-sql --rls), a role reads a blob only when it may read a
// record that names it, or it stored the blob first. lib/pg/blobs.ts appends BLOB_TRUST to its
// tables; $S is the schema.
//
// Invariants: every function pins its search_path; the security definer ones (keep_named,
// keep_parts, blob_touch) read or change only what their names say, and none returns a row;
// the caller blob_touch records is session_user (current_user is the definer's there).

import { BLOB_GRACE_FLOOR_MS } from "../blobs/storage";

// Whether a record names blob `hex` (a lower-case hex expression), each through an index: a
// message by its attachments, a slot or task by any digest its record's text mentions (read as
// loosely as a record may be written, damaged ones too: keeping too much is the safe mistake).
const NAMED = (hex: string) => `exists (select 1 from $S.messages m where m.attachments @> jsonb_build_array(jsonb_build_object('digest', 'sha256:' || ${hex})))
      or exists (select 1 from $S.slots s where strpos(s.record, 'sha256:') > 0 and $S.digests(s.record) @> array[${hex}])
      or exists (select 1 from $S.tasks t where strpos(t.record, 'sha256:') > 0 and $S.digests(t.record) @> array[${hex}])`;

// gc's floor on a blob's age (lib/maintenance/blobs.ts), as the server holds every role to it.
const FLOOR = `interval '${BLOB_GRACE_FLOOR_MS / 1000} seconds'`;
// Whether the session is an administrator of the table the trigger is on: a login role that is
// a member of its owner, a superuser (session_user: current_user is a definer's in some).
const ADMIN = `pg_has_role(session_user, (select c.relowner from pg_catalog.pg_class c where c.oid = tg_relid), 'usage')`;
// The most bytes blob_touch hashes in the server (in one piece: memory), to tell which of two
// differing uploads of a digest is its bytes.
export const HASHED_MAX = 64 * 1024 * 1024;

export const BLOB_TRUST = [
  // Without these a delete looked through every record's text: 72 ms a blob beside 50,000 tasks.
  `create index messages_attachments on $S.messages using gin (attachments jsonb_path_ops) where attachments is not null`,
  `create function $S.digests(record text) returns text[] language sql immutable parallel safe set search_path = pg_catalog, pg_temp as $$
   select coalesce(array_agg(lower(m[1])), '{}') from regexp_matches(record, 'sha256:([0-9a-fA-F]{64})', 'g') m $$`,
  `create index slots_blobs on $S.slots using gin ($S.digests(record)) where strpos(record, 'sha256:') > 0`,
  `create index tasks_blobs on $S.tasks using gin ($S.digests(record)) where strpos(record, 'sha256:') > 0`,
  // A delete of a named blob is passed over (not refused: gc's batch goes on with the others),
  // and so is one of a blob stored or touched within gc's floor (FLOOR): a send stores its files
  // before its record names them, and a hand-made delete must not step around the floor gc's
  // client keeps. Security definer: the records that name it may be ones the deleting role cannot see.
  `create function $S.keep_named() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
   begin
     if ${NAMED("old.hex")} then return null; end if;
     if old.stored_at > now() - ${FLOOR} and not ${ADMIN} then return null; end if;
     return old;
   end $$`,
  `create trigger keep_named before delete on $S.blobs for each row execute function $S.keep_named()`,
  // A stored blob never changes: its parts are neither added to nor rewritten (get would fail
  // its digest check: the attachment destroyed for every reader), and go only with it
  // (lib/pg/blobs.ts remove: the row first, then its parts; a delete is passed over, as above).
  // An upload not yet stored is its writer's: no other role adds to or rewrites its parts, and a
  // delete of them (gc's sweep) is passed over until the upload has been quiet for FLOOR (its
  // commit checks it holds its own parts whole: lib/pg/blobs.ts). A role writes parts under its
  // own name only. An administrator (a login role that is a member of the schema's owner, a
  // superuser) may do all: session_user, as current_user is the definer here.
  `create function $S.keep_parts() returns trigger language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
   declare
     up text := case when tg_op = 'INSERT' then new.upload else old.upload end;
   begin
     if exists (select 1 from $S.blobs b where b.upload = up or (tg_op = 'UPDATE' and b.upload = new.upload)) then
       if tg_op = 'DELETE' then return null; end if;
       if not ${ADMIN} then raise exception 'a stored blob cannot be changed' using errcode = '42501'; end if;
     elsif not ${ADMIN} then
       if tg_op = 'DELETE' then
         if old.writer <> session_user and (select max(p.made_at) from $S.blob_parts p where p.upload = up) > now() - ${FLOOR} then return null; end if;
       elsif tg_op = 'UPDATE' or new.writer <> session_user or exists (select 1 from $S.blob_parts p where p.upload = up and p.writer <> session_user) then
         raise exception 'an upload in progress is its writer''s alone' using errcode = '42501';
       end if;
     end if;
     return case when tg_op = 'DELETE' then old else new end;
   end $$`,
  `create trigger keep_parts before insert or update or delete on $S.blob_parts for each row execute function $S.keep_parts()`,
  // Of a blob's row only its time moves, and only forward (back, gc would count it old): which
  // bytes it is, is fixed at its put (but for an administrator, as above; blob_touch, as below).
  `create function $S.keep_blob() returns trigger language plpgsql set search_path = pg_catalog, pg_temp as $$
   begin
     if ((new.hex, new.upload, new.size, new.writer) is distinct from (old.hex, old.upload, old.size, old.writer) or new.stored_at < old.stored_at)
        and not pg_has_role(current_user, (select c.relowner from pg_catalog.pg_class c where c.oid = tg_relid), 'usage') then
       raise exception 'a stored blob cannot be changed' using errcode = '42501';
     end if;
     return new;
   end $$`,
  `create trigger keep_blob before update on $S.blobs for each row execute function $S.keep_blob()`,
  // Who else stored a blob's bytes (its row names the first): a second put is its writer's proof
  // of holding them, a claim to read the blob back under row-level security. Only blob_touch
  // writes a row here, and only once the bytes compare equal.
  `create table $S.blob_puts (
     hex text not null references $S.blobs (hex) on delete cascade,
     writer text not null,
     primary key (hex, writer))`,
  // A second put of a stored digest (the caller's parts under upload "mine", "sz" bytes) moves
  // gc's clock on (the grace counts from the newest put). The stored bytes (whoever put them)
  // are compared with the caller's, byte for byte (a digest is its writer's word, not a proof):
  // equal, the caller, if not their first writer, is recorded among those who stored it (it reads
  // it back under row-level security). Not equal, the server hashes the caller's (when whole, the caller's own, and at
  // most HASHED_MAX bytes): when they are the digest's bytes the stored ones are not (a row
  // planted under a digest someone was to attach, or damaged), and the caller's take their place
  // ('replaced': keep yours), so a plant locks no one out; else the put fails (SQLSTATE A2AB1,
  // naming no role: who stored a digest is not the caller's to learn).
  // 'kept': the stored blob stays, drop yours; 'gone': no row (gc removed it meanwhile), again.
  `create function $S.blob_touch(h text, mine text, sz bigint) returns text language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
   declare
     theirs text;
     who text;
     was bigint;
     own boolean;
     held bigint;
   begin
     update $S.blobs set stored_at = now(), changed_at = now() where hex = h returning upload, writer, size into theirs, who, was;
     if theirs is null then return 'gone'; end if;
     select coalesce(bool_and(p.writer = session_user), true), coalesce(sum(octet_length(p.data)), 0) into own, held from $S.blob_parts p where p.upload = mine;
     if not own then return 'kept'; end if;
     if was = sz and not exists (select 1 from (select n, data from $S.blob_parts where upload = mine) a
                                 full join (select n, data from $S.blob_parts where upload = theirs) b using (n) where a.data is distinct from b.data) then
       if who <> session_user then insert into $S.blob_puts (hex, writer) values (h, session_user) on conflict do nothing; end if;
       return 'kept';
     end if;
     if held = sz and sz <= ${HASHED_MAX} and encode(sha256(coalesce((select string_agg(data, ''::bytea order by n) from $S.blob_parts where upload = mine), ''::bytea)), 'hex') = h then
       update $S.blobs set upload = mine, size = sz, writer = session_user, stored_at = now() where hex = h;
       delete from $S.blob_puts where hex = h;
       delete from $S.blob_parts where upload = theirs; -- passed over while fresh (keep_parts): gc's sweep takes them
       return 'replaced';
     end if;
     raise exception 'the store holds other bytes under this digest' using errcode = 'A2AB1';
   end $$`,
];

// Optional (a2a init --print-sql --rls): a blob is seen (read, listed, exported, removed by gc)
// by the role that stored it first and by the roles that may read a record naming it (mail as
// MAIL_ROW_SECURITY shows it; every slot and task); its parts with it, and an upload's parts by
// their writer until the upload is a blob. Of a row it sees a role moves only the time
// (keep_blob: a record is about to name it); nobody writes blob_puts by hand (blob_touch does). The schema's owner (and its members), superusers and BYPASSRLS roles
// see all. $S.readable runs as the caller, so the mail it reads is what the caller's policies show.
export const BLOB_ROW_SECURITY = [
  `create function $S.readable(hex text) returns boolean language sql stable set search_path = pg_catalog, pg_temp as $$
   select ${NAMED("hex")} $$`,
  `alter table $S.blobs enable row level security`,
  `create policy stored_or_named on $S.blobs for select using (writer = current_user
     or exists (select 1 from $S.blob_puts p where p.hex = blobs.hex and p.writer = current_user) or $S.readable(hex))`,
  `create policy anyone_stores on $S.blobs for insert with check (writer = current_user)`,
  // A blob goes by the hand of a role that stored it (its gc), never by another's (keep_named
  // spares the named and the fresh whoever deletes; the owner's gc sees all).
  `create policy storers_remove on $S.blobs for delete using (writer = current_user
     or exists (select 1 from $S.blob_puts p where p.hex = blobs.hex and p.writer = current_user))`,
  `create policy time_moves on $S.blobs for update using (true) with check (true)`, // keep_blob: the time only
  `alter table $S.blob_puts enable row level security`,
  `create policy own on $S.blob_puts for select using (writer = current_user)`,
  `alter table $S.blob_parts enable row level security`,
  `create policy own_or_stored on $S.blob_parts for select using (writer = current_user or exists (select 1 from $S.blobs b where b.upload = blob_parts.upload))`,
  `create policy anyone_uploads on $S.blob_parts for insert with check (writer = current_user)`,
  `create policy gc_removes on $S.blob_parts for delete using (true)`,
];
