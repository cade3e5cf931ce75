// The PostgreSQL engine's mail storage (lib/mail/storage.ts): a message is a row of `messages`
// whose `place` says where it is (unread, claimed, read, held, or bad: set aside); a claim is
// the row's holder columns. Inboxes, policies and the keys of sends are rows of their own.
// lib/pg/schema.ts makes the tables from MAIL_TABLES (lib/pg/mail-tables.ts).
//
// Invariants:
// - a message moves by one update whose where clause names the place (and the claim) it must
//   be in: of two readers claiming one message, or two moves of one claim, exactly one changes
//   a row, and the other is told false;
// - a message's writer is the role that inserted it, set by the server and kept by every later
//   update (the reader's moves do not make it theirs); so an update may change only its place
//   and claim (a trigger refuses any other, whoever makes it: no one rewrites another's words);
// - a delivery commits at once or not at all: the unread count and the insert (one statement),
//   with a key in one transaction with its row, whose insert waits for a concurrent one of the
//   same key, so a key delivers once;
// - a message entering unread wakes the inbox's channel at commit with its arrival number, never
//   its id (any role may listen: the id is the inbox owner's to read);
// - an inbox's owner is the role that first opened it as its own (a sender's delivery makes
//   the inbox but owns nothing); a policy speaks for its agent when its writer is that owner,
//   or when no owner is known yet;
// - once owned, only its owner (or an administrator: the schema's owner, its members, a
//   superuser) changes the inbox, its policy or where its messages are: a trigger refuses
//   anyone else, whatever statement they send (row-level security, optional, hides reads too).
//   Those triggers and policies are lib/pg/mail-trust.ts.

import type { SQL } from "bun";
import type { Store } from "../core/config";
import { hashHex } from "../core/digest";
import { A2AError, arg, text } from "../core/errors";
import { holderGone, hostTag } from "../core/holder";
import { namedThread, type Message } from "../mail/message";
import type { Policy } from "../mail/policy";
import type { At, Claim, Delivery, Filed, Found, Head, MailStorage, Place, PolicyRead, Stored } from "../mail/storage";
import { attachmentsOf } from "../blobs/attachment";
import { transaction } from "./connect";
import type { PgClient } from "./engine";
import { textArray } from "./text-array";

interface Row {
  id: string;
  place: string;
  agent: string;
  sender: string;
  body: Uint8Array; // UTF-8: a body may hold any character, NUL included, which text cannot
  size: number;
  sent_at: number;
  reply_to: string | null;
  thread: string | null;
  host: string;
  pid: number;
  attachments: unknown; // jsonb: a list, or null
  claim_host: string | null;
  claim_pid: number | null;
  claim_ms: number | null;
  writer: string;
}

// The message a row holds, its fields in the order of `Message` (as every engine shows them; a
// thread only on a reply, as the record has it; attachments last, only when there are some).
const stored = (r: Row, body: string): Stored => {
  const attachments = attachmentsOf(typeof r.attachments === "string" ? JSON.parse(r.attachments) : r.attachments);
  return {
    a2a: 1, id: r.id, from: r.sender, to: r.agent, body, size: r.size, sent_at: r.sent_at, reply_to: r.reply_to, ...(r.reply_to === null || r.thread === null ? {} : { thread: r.thread }),
    host: r.host, pid: r.pid, ...(attachments ? { attachments } : {}), user: r.writer,
  };
};

// A row read with the first bytes of its body (`bytes`: the whole body's length), as a listing shows it.
const headOf = (r: Row & { bytes: number }, bodyChars: number): Head => {
  const part = new TextDecoder().decode(r.body, { stream: r.body.length < r.bytes }); // a character cut at the end is left out
  return { ...stored(r, part.slice(0, bodyChars)), truncated: part.length > bodyChars || r.body.length < r.bytes };
};

// Where row `r` is: its place, or its claim.
const atOf = (r: Row): At => (r.place === "claimed" ? { id: r.id, host: r.claim_host!, pid: r.claim_pid!, ms: r.claim_ms! } : (r.place as Place));

// Whether row `r` is the message at `at` (a place, or this very claim).
const isAt = (r: Row, at: At) =>
  typeof at === "string" ? r.place === at : r.place === "claimed" && r.claim_host === at.host && r.claim_pid === at.pid && r.claim_ms === at.ms;

const asPolicy = (p: any): Policy | undefined =>
  p && p.a2a === 1 && (p.mode === "open" || p.mode === "allowlist") && Array.isArray(p.allow) && Array.isArray(p.deny) ? p : undefined;

const FULL = new Error("the inbox is full");

// A delivery without a key in one statement, which commits alone (one round trip, not the five
// of a transaction): the inbox made if new, its load counted, the message written only where
// the load is under the limit. A key needs the transaction (its row's insert waits for a
// concurrent one), so a keyed send is not this.
async function deliverAtOnce(sql: SQL, to: string, m: Message, limit: number): Promise<Delivery> {
  const [r] = await sql`with ib as (insert into inboxes (agent) values (${to}) on conflict (agent) do nothing),
      load as (select inbox_load(${to}) as n),
      w as (insert into messages (agent, id, place, sender, body, size, sent_at, reply_to, thread, host, pid, attachments)
            select ${to}, ${m.id}, 'unread', ${m.from}, ${Buffer.from(m.body, "utf8")}, ${m.size}, ${m.sent_at}, ${m.reply_to},
                   ${namedThread(m) ?? null}, ${m.host}, ${m.pid}, ${m.attachments ? JSON.stringify(m.attachments) : null}::jsonb
            from load where load.n < ${limit} returning 1)
    select (select n from load) as n, (select count(*)::int from w) as written`;
  return r.written ? { kind: "delivered", message: m } : { kind: "full", unread: r.n };
}

export function pgMail(pg: PgClient, store: Store): MailStorage {
  const where = pg.target.where;
  let role: Promise<string> | undefined;
  const me = () => (role ??= pg.run("asking the server who we are", async (sql) => (await sql`select current_user as me`)[0].me as string));
  // Inboxes seen to exist: a policy's read says so, and who we are, in its one statement, since a
  // send asks all three (its policy, its writer, whether the recipient is known) before its one
  // write. Only a typo's guess asks `has`; an inbox is never taken away under a running process
  // but by gc of an empty, unowned one, which at worst skips a guess.
  const inboxes = new Set<string>();
  // The row a claim of this process wrote, as the claim returned it: the read that follows a claim
  // (a receive's next step) is answered from it. Nobody but its claimer changes a claimed row's
  // record (a trigger keeps the words; only the place moves), so it is what a select would read.
  const justClaimed = new Map<string, Row>();

  const move = (sql: SQL, agent: string, id: string, from: At, to: Place | "bad") =>
    typeof from === "string"
      ? sql`update messages set place = ${to}, claim_host = null, claim_pid = null, claim_ms = null,
              arrived = case when ${to} = 'unread' then nextval('arrivals') else arrived end
            where agent = ${agent} and id = ${id} and place = ${from} returning 1`
      : sql`update messages set place = ${to}, claim_host = null, claim_pid = null, claim_ms = null,
              arrived = case when ${to} = 'unread' then nextval('arrivals') else arrived end
            where agent = ${agent} and id = ${id} and place = 'claimed'
              and claim_host = ${from.host} and claim_pid = ${from.pid} and claim_ms = ${from.ms} returning 1`;

  const policyOf = (agent: string, r: { record: string | null; writer: string | null; owner: string | null } | undefined): PolicyRead => {
    const owner = r?.owner == null ? {} : { owner: r.owner };
    if (!r || r.record === null) return { kind: "none", ...owner };
    if (r.owner !== null && r.owner !== r.writer) return { kind: "none", ...owner }; // not the agent's own: it does not speak for it
    let p: Policy | undefined;
    try {
      p = asPolicy(JSON.parse(r.record));
    } catch {
      p = undefined;
    }
    return p ? { kind: "ok", policy: { ...p, agent }, ...owner } : { kind: "invalid", where: `the policy of ${agent} in ${where} (schema ${pg.target.schema}, table policies)` };
  };

  return {
    open: (agent, own) => pg.run(`opening the inbox of ${agent}`, async (sql) => {
      if (!own) return void (await sql`insert into inboxes (agent) values (${agent}) on conflict (agent) do nothing`);
      const [r] = await sql`with mine as (insert into inboxes (agent, owner) values (${agent}, current_user)
                              on conflict (agent) do update set owner = coalesce(inboxes.owner, excluded.owner) where inboxes.owner is null
                              returning owner)
                            select coalesce((select owner from mine), (select owner from inboxes where agent = ${agent})) as owner,
                                   current_user as me, row_security_active('messages') as kept`;
      // Under row-level security another role's inbox would look empty: say why instead.
      if (r.kept && r.owner !== r.me) {
        throw new A2AError("EDENIED", `the inbox of ${agent} belongs to role ${r.owner}, and row-level security lets role ${r.me} read only the inboxes it owns: connect as ${r.owner} to read it`, {
          data: { agent, owner: r.owner, role: r.me },
        });
      }
    }),
    has: async (agent) => inboxes.has(agent) || pg.read(`reading the inbox of ${agent}`, async (sql) => (await sql`select 1 from inboxes where agent = ${agent}`).length > 0),
    agents: () => pg.read("listing inboxes", async (sql) => (await sql`select agent from inboxes`).map((r: { agent: string }) => r.agent)),
    writer: () => me(),
    deliver: (to, build, opts) => pg.run(`sending to ${to}`, async (sql) => {
      if (!opts.key) return deliverAtOnce(sql, to, build(opts.freshId), opts.limit);
      let unread = 0; // how many the inbox held when it was found full
      try {
        return await transaction(sql, async (tx) => {
          await tx`insert into inboxes (agent) values (${to}) on conflict (agent) do nothing`;
          const id = opts.freshId;
          const keyHash = opts.key && hashHex("sha256", opts.key.key);
          if (opts.key) {
            // Waits for a concurrent send of the same key to commit or roll back, then wins or not.
            const mine = await tx`insert into mail_keys (agent, sender, key, id) values (${to}, ${opts.key.from}, ${keyHash}, ${id})
                                  on conflict (agent, sender, key) do nothing returning id`;
            if (!mine.length) {
              // No row seen: row-level security hides another role's key (lib/pg/mail-trust.ts).
              const [first] = await tx`select k.id, k.writer, current_user as me from (select 1) one left join mail_keys k on k.agent = ${to} and k.sender = ${opts.key.from} and k.key = ${keyHash}`;
              if (first.writer !== first.me) {
                throw new A2AError("EIO", text`the key ${opts.key.key} of mail to ${to} was recorded by ${first.writer ? `role ${first.writer}` : "another role"}, not by you (${first.me}): a key record is its sender's; send with another ${arg("key")}`, {
                  data: { key: opts.key.key, to, user: first.writer ?? undefined },
                });
              }
              return { kind: "duplicate" as const, id: first.id as string };
            }
          }
          const [{ n }] = await tx`select inbox_load(${to}) as n`;
          if (n >= opts.limit) {
            unread = n;
            throw FULL;
          }
          const m: Message = build(id);
          await tx`insert into messages (agent, id, place, sender, body, size, sent_at, reply_to, thread, host, pid, attachments)
                   values (${to}, ${m.id}, 'unread', ${m.from}, ${Buffer.from(m.body, "utf8")}, ${m.size}, ${m.sent_at}, ${m.reply_to},
                           ${namedThread(m) ?? null},
                           ${m.host}, ${m.pid}, ${m.attachments ? JSON.stringify(m.attachments) : null}::jsonb)`;
          return { kind: "delivered" as const, message: m };
        });
      } catch (err) {
        // The transaction rolled back (the key too): nothing was delivered.
        if (err === FULL) return { kind: "full" as const, unread };
        throw err;
      }
    }),
    ids: (agent, place) => pg.read(`reading the inbox of ${agent}`, async (sql) =>
      (await sql`select id from messages where agent = ${agent} and place = ${place} order by id`).map((r: { id: string }) => r.id)),
    count: (agent, claims) => pg.read(`counting the mail of ${agent}`, async (sql) =>
      // The places written out, not an array parameter: Bun describes a statement with an array
      // parameter in a round trip of its own first (the unread note's count was 2, issue 34).
      (await (claims
        ? sql`select count(*)::int as n from messages where agent = ${agent} and place in ('unread', 'claimed')`
        : sql`select count(*)::int as n from messages where agent = ${agent} and place = 'unread'`))[0].n as number),
    claims: (agent) => pg.read(`reading the claims in the inbox of ${agent}`, async (sql) =>
      (await sql`select id, claim_host, claim_pid, claim_ms from messages where agent = ${agent} and place = 'claimed' order by id`).map(
        (r: Row): Claim => ({ id: r.id, host: r.claim_host!, pid: r.claim_pid!, ms: r.claim_ms! }),
      )),
    claim: (agent, id) => pg.run(`claiming message ${id}`, async (sql) => {
      const claim: Claim = { id, host: hostTag(store.host), pid: process.pid, ms: Date.now() };
      const got = (await sql`update messages set place = 'claimed', claim_host = ${claim.host}, claim_pid = ${claim.pid}, claim_ms = ${claim.ms}
                             where agent = ${agent} and id = ${id} and place = 'unread' returning *`) as Row[];
      if (!got.length) return undefined;
      if (justClaimed.size >= 64) justClaimed.clear();
      justClaimed.set(`${agent}/${id}`, got[0]);
      return claim;
    }),
    move: (agent, id, from, to) => pg.run(`moving message ${id}`, async (sql) => (await move(sql, agent, id, from, to)).length > 0),
    recover: (agent) => pg.run(`recovering the claims of ${agent}`, async (sql) => {
      let n = 0;
      const now = Date.now();
      for (const r of (await sql`select id, claim_host, claim_pid, claim_ms from messages where agent = ${agent} and place = 'claimed'`) as Row[]) {
        const c: Claim = { id: r.id, host: r.claim_host!, pid: r.claim_pid!, ms: r.claim_ms! };
        if (holderGone(store, c.host, c.pid, now - c.ms, store.claimLeaseMs) && (await move(sql, agent, c.id, c, "unread")).length) n++;
      }
      return n;
    }),
    read: (agent, id, at) => pg.read(`reading message ${id}`, async (sql): Promise<Found<Stored>> => {
      const mine = justClaimed.get(`${agent}/${id}`);
      justClaimed.delete(`${agent}/${id}`);
      const [r] = mine && typeof at === "object" && isAt(mine, at) ? [mine] : ((await sql`select * from messages where agent = ${agent} and id = ${id}`) as Row[]);
      return r && isAt(r, at) ? stored(r, Buffer.from(r.body).toString("utf8")) : "absent";
    }),
    heads: (agent, items, bodyChars) => pg.read(`listing the inbox of ${agent}`, async (sql): Promise<Found<Head>[]> => {
      if (!items.length) return [];
      // The first bytes of each body, enough for `bodyChars` UTF-16 units (at most 3 bytes a unit
      // in UTF-8), never the whole of a big one: a listing costs the messages' count, not their bytes.
      const rows = (await sql`select id, place, agent, sender, substring(body from 1 for ${bodyChars * 3}) as body, octet_length(body) as bytes,
                                     size, sent_at, reply_to, thread, host, pid, attachments, claim_host, claim_pid, claim_ms, writer
                              from messages where agent = ${agent} and id = any(${textArray(items.map((i) => i.id))}::text[])`) as (Row & { bytes: number })[];
      const byId = new Map(rows.map((r) => [r.id, r]));
      return items.map(({ id, at }) => {
        const r = byId.get(id);
        return r && isAt(r, at) ? headOf(r, bodyChars) : "absent";
      });
    }),
    locate: (id, bodyChars) => pg.read(`looking for message ${id}`, async (sql): Promise<Filed[]> =>
      ((await sql`select id, place, agent, sender, substring(body from 1 for ${bodyChars * 3}) as body, octet_length(body) as bytes,
                         size, sent_at, reply_to, thread, host, pid, attachments, claim_host, claim_pid, claim_ms, writer
                  from messages where id = ${id} and place <> 'bad' order by agent`) as (Row & { bytes: number })[]).map((r) => ({ agent: r.agent, at: atOf(r), message: headOf(r, bodyChars) }))),
    // The messages naming the thread, and the replies written before threads that answer them
    // (or answer the thread's first message, when it is not here), through any number of them.
    thread: (root, bodyChars) => pg.read(`reading thread ${root}`, async (sql): Promise<Filed[]> =>
      ((await sql`with recursive members as (
                    select agent, id from messages where thread = ${root} or (thread is null and reply_to = ${root})
                    union
                    select m.agent, m.id from messages m join members p on m.reply_to = p.id where m.thread is null)
                  select id, place, agent, sender, substring(body from 1 for ${bodyChars * 3}) as body, octet_length(body) as bytes,
                         size, sent_at, reply_to, thread, host, pid, attachments, claim_host, claim_pid, claim_ms, writer
                  from messages join members using (agent, id) where place <> 'bad' order by id`) as (Row & { bytes: number })[]).map((r) => ({ agent: r.agent, at: atOf(r), message: headOf(r, bodyChars) }))),
    arrival: (agent, id) => pg.read(`reading message ${id}`, async (sql) => {
      const [r] = await sql`select arrived::float8 as arrived from messages where agent = ${agent} and id = ${id} and place = 'unread'`;
      return r ? (r.arrived as number) : undefined;
    }),
    setAside: (agent, id, at) => pg.run(`setting message ${id} aside`, async (sql) =>
      (await move(sql, agent, id, at, "bad")).length ? `message ${id} of ${agent} in ${where} (schema ${pg.target.schema}, table messages, place bad)` : undefined),
    damaged: (agent) => pg.read(`reading the inbox of ${agent}`, async (sql) => ({
      count: (await sql`select count(*)::int as n from messages where agent = ${agent} and place = 'bad'`)[0].n as number,
      where: `${where} (schema ${pg.target.schema}, table messages, place bad)`,
    })),
    policy: (agent) => pg.read(`reading the policy of ${agent}`, async (sql) => {
      const [r] = await sql`select p.record, p.writer, i.owner, i.agent is not null as has, current_user as me from (select ${agent}::text as agent) a
                              left join policies p on p.agent = a.agent left join inboxes i on i.agent = a.agent`;
      role ??= Promise.resolve(r.me as string);
      if (r.has) inboxes.add(agent);
      return policyOf(agent, r);
    }),
    changePolicy: (agent, decide) => pg.run(`changing the policy of ${agent}`, (sql) =>
      transaction(sql, async (tx) => {
        const [inbox] = await tx`insert into inboxes (agent, owner) values (${agent}, current_user)
                                 on conflict (agent) do update set owner = coalesce(inboxes.owner, excluded.owner)
                                 returning owner, current_user as me`;
        if (inbox.owner !== inbox.me) {
          throw new A2AError("EDENIED", `the inbox of ${agent} belongs to role ${inbox.owner}, not to you (${inbox.me}): a policy you write would not be trusted; if ${agent} is yours, connect as ${inbox.owner}`, {
            data: { agent, owner: inbox.owner },
          });
        }
        const [r] = await tx`select p.record, p.writer, ${inbox.owner}::text as owner from policies p where p.agent = ${agent} for update`;
        const next = decide(policyOf(agent, r));
        await tx`insert into policies (agent, record) values (${agent}, ${JSON.stringify(next)})
                 on conflict (agent) do update set record = excluded.record`;
        return next;
      })),
  };
}
