// The task room's tables on PostgreSQL (lib/pg/tasks.ts keeps the rows; lib/pg/schema.ts runs
// these statements). Out of lib/pg/tasks.ts, as lib/pg/mail-tables.ts is out of lib/pg/mail.ts.

// The room's tables (lib/pg/schema.ts runs them; $S is the schema). Ids and queues compare by
// code unit (collate "C"), as the file engine sorts them: oldest id first. Rows carry their writer
// as the server saw it ($S.stamp).
export const TASK_TABLES = [
  `create table $S.tasks (
     queue text collate "C" not null,
     id text collate "C" not null,
     version integer not null,
     state text not null,
     record text not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (queue, id))`,
  `create index tasks_open on $S.tasks (queue, id) where state in ('ready', 'claimed')`,
  `create index tasks_by_id on $S.tasks (id)`,
  `create table $S.task_deps (
     dep_queue text collate "C" not null,
     dep_id text collate "C" not null,
     queue text collate "C" not null,
     id text collate "C" not null,
     primary key (dep_queue, dep_id, queue, id))`,
  `create table $S.task_keys (
     queue text collate "C" not null,
     key_hash text not null,
     id text collate "C" not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (queue, key_hash))`,
  `create table $S.task_claim_keys (
     queue text collate "C" not null,
     key_hash text not null,
     assignee text not null,
     id text collate "C" not null,
     token text not null,
     at double precision not null,
     writer text not null default current_user,
     changed_at timestamptz not null default now(),
     primary key (queue, key_hash))`,
  `create trigger stamp before insert or update on $S.tasks for each row execute function $S.stamp()`,
  `create trigger stamp before insert or update on $S.task_keys for each row execute function $S.stamp()`,
  `create trigger stamp before insert or update on $S.task_claim_keys for each row execute function $S.stamp()`,
  // What the file engine's @open markers and @bell files wake (lib/fs/tasks.ts afterChange).
  `create function $S.wake_task() returns trigger language plpgsql as $$
   declare d record;
   begin
     perform pg_notify($S.channel('task:' || new.queue || '/' || new.id), '');
     if new.state = 'ready' then
       perform pg_notify($S.channel('queue:' || new.queue), new.id);
     elsif new.state in ('done', 'dead') then
       for d in
         with recursive down (queue, id) as (
           select k.queue, k.id from $S.task_deps k where k.dep_queue = new.queue and k.dep_id = new.id
           union
           select k.queue, k.id from down join $S.task_deps k on k.dep_queue = down.queue and k.dep_id = down.id where new.state = 'dead')
         select t.queue, t.id from down join $S.tasks t on t.queue = down.queue and t.id = down.id where t.state not in ('done', 'dead')
       loop
         perform pg_notify($S.channel('task:' || d.queue || '/' || d.id), '');
         if new.state = 'done' then perform pg_notify($S.channel('queue:' || d.queue), d.id); end if;
       end loop;
     end if;
     return null;
   end $$`,
  `create trigger wake after insert or update on $S.tasks for each row execute function $S.wake_task()`,
];
