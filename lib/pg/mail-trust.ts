// Who may change what in the PostgreSQL engine's mail (PROTOCOL.md §15), as the server enforces
// it whatever statement a role sends: a sent message (its words, attachments, every field) is
// its writer's for good (keep_writer), an owned inbox is its owner's to change (owner_only), a
// send's key its sender's (own_key), the unread limit is counted as the owner sees it
// (inbox_load), and, optionally, row-level security hides the mail of inboxes a role does not
// own and others' keys (MAIL_ROW_SECURITY, a2a init --print-sql --rls).
// lib/pg/mail-tables.ts appends MAIL_TRUST to its tables; $S is the schema.
//
// Invariants: every function that decides pins its search_path (a caller's objects never run in
// it); none of them is security definer but inbox_load, which only counts.

export const MAIL_TRUST = [
  // A message's writer is kept by its moves, so what it vouches for must not move: an update
  // that changes anything but the place and the claim (and what a move sets with them: its
  // arrival; the writer and time this trigger sets) is refused, whoever makes it. The columns
  // are named (a row's jsonb would hex-encode the body twice a move);
  // tests/e2e/pg-rls-blobs.test.ts tries every column the table has, so one added is not missed.
  `create function $S.keep_writer() returns trigger language plpgsql set search_path = pg_catalog, pg_temp as $$
   begin
     if (new.agent, new.id, new.sender, new.body, new.size, new.sent_at, new.reply_to, new.thread, new.host, new.pid, new.attachments)
        is distinct from (old.agent, old.id, old.sender, old.body, old.size, old.sent_at, old.reply_to, old.thread, old.host, old.pid, old.attachments) then
       raise exception 'a sent message cannot be changed, only moved (its place and claim)' using errcode = '42501';
     end if;
     new.writer := old.writer; new.changed_at := now(); return new;
   end $$`,
  `create trigger keep_writer before update on $S.messages for each row execute function $S.keep_writer()`,
  // How full an inbox is, as its owner sees it: under row-level security (MAIL_ROW_SECURITY) a
  // sender sees only its own messages, so the count runs as the schema's owner, which the
  // policies do not bind (security definer; a fixed search_path, so no caller's object is run).
  `create function $S.inbox_load(inbox text) returns integer language sql stable security definer set search_path = pg_catalog, pg_temp as $$
   select count(*)::int from $S.messages where agent = inbox and place in ('unread', 'claimed') $$`,
  // An owned inbox is its owner's to change, as an inbox directory is on files: its owner, its
  // policy, and where its messages are (reading, holding, removing). Anyone may still send into
  // it. The schema's owner (and its members, and superusers) may change anything: an administrator.
  // A trigger that decides pins its search_path: the caller's could put its own pg_has_role
  // (or operators) before pg_catalog's.
  `create function $S.owner_only() returns trigger language plpgsql set search_path = pg_catalog, pg_temp as $$
   declare
     inbox text := case when tg_op = 'INSERT' then new.agent else old.agent end;
     holder text;
   begin
     if tg_table_name = 'inboxes' then
       holder := case when tg_op = 'DELETE' or new.owner is distinct from old.owner then old.owner end;
     else
       select i.owner into holder from $S.inboxes i where i.agent = inbox;
     end if;
     if holder is not null and holder <> current_user
        and not pg_has_role(current_user, (select c.relowner from pg_catalog.pg_class c where c.oid = tg_relid), 'usage') then
       raise exception 'the inbox of % belongs to role %, not to %', inbox, holder, current_user using errcode = '42501';
     end if;
     return case when tg_op = 'DELETE' then old else new end;
   end $$`,
  `create trigger owner_only before update or delete on $S.inboxes for each row execute function $S.owner_only()`,
  `create trigger owner_only before update or delete on $S.messages for each row execute function $S.owner_only()`,
  `create trigger owner_only before insert or update or delete on $S.policies for each row execute function $S.owner_only()`,
  // A send's key is its sender's: removed or rewritten by another role, a retry would deliver
  // twice. An administrator (as above) may still.
  `create function $S.own_key() returns trigger language plpgsql set search_path = pg_catalog, pg_temp as $$
   begin
     if old.writer <> current_user
        and not pg_has_role(current_user, (select c.relowner from pg_catalog.pg_class c where c.oid = tg_relid), 'usage') then
       raise exception 'the key of mail to % belongs to role %, not to %', old.agent, old.writer, current_user using errcode = '42501';
     end if;
     return case when tg_op = 'DELETE' then old else new end;
   end $$`,
  `create trigger own_key before update or delete on $S.mail_keys for each row execute function $S.own_key()`,
];

// Optional (a2a init --print-sql --rls): each role reads, moves and removes only the mail of the
// inboxes it owns (plus reads what it wrote), writes only their policies and sees only its own
// send keys (a key another role holds is a conflict it cannot read: lib/pg/mail.ts); anyone may send,
// see which inboxes exist, read a policy (a sender checks it), and own an inbox nobody owns yet.
// The schema's owner (and its members), superusers and BYPASSRLS roles see all. The triggers
// need no security definer: they read no table (pg_notify needs no grant).
const OWN = `agent in (select i.agent from $S.inboxes i where i.owner = current_user)`;
export const MAIL_ROW_SECURITY = [
  `alter table $S.inboxes enable row level security`,
  `create policy everyone_sees on $S.inboxes for select using (true)`,
  `create policy unowned_or_own on $S.inboxes for insert with check (owner is null or owner = current_user)`,
  `create policy claim_unowned on $S.inboxes for update using (owner is null or owner = current_user) with check (owner = current_user)`,
  `create policy remove_own on $S.inboxes for delete using (owner is null or owner = current_user)`,
  `alter table $S.messages enable row level security`,
  `create policy read_own on $S.messages for select using (writer = current_user or ${OWN})`,
  `create policy anyone_sends on $S.messages for insert with check (true)`,
  `create policy move_own on $S.messages for update using (${OWN})`,
  `create policy remove_own on $S.messages for delete using (${OWN})`,
  `alter table $S.policies enable row level security`,
  `create policy everyone_reads on $S.policies for select using (true)`,
  `create policy owner_writes on $S.policies for all using (${OWN}) with check (${OWN})`,
  `alter table $S.mail_keys enable row level security`,
  `create policy own_keys on $S.mail_keys for all using (writer = current_user) with check (writer = current_user)`,
];
