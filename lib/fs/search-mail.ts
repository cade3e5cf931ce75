// The mail part of the search index's catch-up (lib/fs/search.ts): each inbox directory whose
// mtime moved since its last reading is listed and compared with the ids the index holds at
// that place, so one new message among 10,000 costs a listing and a set lookup per name, not
// 10,000 rows read back from the index nor 10,000 names parsed and sorted.
//
// Invariants:
// - a message's text never changes, only where it lies: an id new to the index is read (its
//   head), an id the index has at another place gets its new place, an id gone from every
//   place read is removed;
// - the places are read in the order messages move (held -> new -> claim -> cur): a message
//   moving during the reading is met twice rather than missed; a message missed all the same
//   moved after its new place's mtime was taken, so the next search reads that place again;
// - a place this user may not list keeps what the index held of it; a message it may not read
//   stays out alone (readHeads), never with the other new ones read with it.

import type { Database } from "bun:sqlite";
import { sep } from "node:path";
import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { entries } from "./io";
import { claimDir, curDir, heldDir, idOfFile, inboxesDir, newDir } from "./paths";
import type { At, Head, MailStorage } from "../mail/storage";
import { fileMail } from "./mail";
import type { Doc } from "./search-index";

const PLACES = [
  ["held", heldDir],
  ["unread", newDir],
  ["claimed", claimDir],
  ["read", curDir],
] as const;

const MANY = 256;

export interface MailChanges {
  add: Doc[];
  drop: number[];
  moved: { id: number; place: string }[];
  forget: string[]; // directories of inboxes gone: their notes in dirs go
}

// `read`: the directories read before (dirs' paths); `unchanged(dir)`: whether a directory is as
// it was at its last reading (noting it as read now when not).
export async function mailChanges(store: Store, db: Database, read: Iterable<string>, unchanged: (dir: string) => boolean, out: MailChanges): Promise<void> {
  const mail = fileMail(store);
  const agents = await mail.agents();
  const here = new Set(agents);
  // An inbox that was read before (its new/ noted in dirs) and is gone now: its rows go.
  const inboxes = inboxesDir(store) + sep;
  for (const path of read) {
    const agent = path.startsWith(inboxes) && path.endsWith(`${sep}new`) ? path.slice(inboxes.length, -4) : undefined;
    if (agent === undefined || here.has(agent)) continue;
    for (const r of db.query("select id from docs where agent = ?").all(agent) as { id: number }[]) out.drop.push(r.id);
    for (const [, dir] of PLACES) out.forget.push(dir(store, agent));
  }
  // The file names the index has at a place (ID.json; a claim's ID alone, its file name holding
  // its holder too): compared whole with a listing, no name parsed or sliced but the new ones.
  const indexed = db.query("select group_concat(substr(key, ?) || ?, char(10)) as names from docs where agent = ? and place = ?");
  const row = db.query("select id, place from docs where key = ?");
  const all = db.query("select key, id, place from docs where agent = ?");
  for (const agent of agents) {
    const arrived = new Map<string, { at: At; place: string }>(); // found where the index does not have it
    const gone: string[] = []; // indexed at a place read, not found there (file names)
    for (const [place, dirOf] of PLACES) {
      const dir = dirOf(store, agent);
      if (unchanged(dir)) continue;
      const claims = place === "claimed";
      const r = indexed.get(agent.length + 2, claims ? "" : ".json", agent, place) as { names: string | null } | null;
      const had = new Set(r?.names ? r.names.split("\n") : []);
      try {
        if (claims) {
          for (const c of await mail.claims(agent)) if (!had.delete(c.id)) arrived.set(c.id, { at: c, place });
        } else {
          // dot files included: idOfFile refuses them, and leaving them out would cost a pass over every name
          for (const f of entries(store, dir, true)) {
            if (had.delete(f)) continue;
            const id = idOfFile(f);
            if (id) arrived.set(id, { at: place, place });
          }
        }
      } catch (err) {
        if (!(err instanceof A2AError)) throw err;
        continue; // a place this user may not list: what the index held of it stays out of reach
      }
      for (const f of had) gone.push(claims ? f : f.slice(0, -5));
    }
    // Where the index has what moved or went: a lookup each, or, when many (a first reading),
    // the inbox's rows at once.
    let lookup = (key: string) => row.get(key) as { id: number; place: string } | null;
    if (arrived.size + gone.length > MANY) {
      const rows = new Map((all.all(agent) as { key: string; id: number; place: string }[]).map((r) => [r.key, r]));
      lookup = (key) => rows.get(key) ?? null;
    }
    const fresh: { id: string; at: At; place: string }[] = [];
    for (const [id, a] of arrived) {
      const k = lookup(`${agent}/${id}`);
      if (!k) fresh.push({ id, ...a });
      else if (k.place !== a.place) out.moved.push({ id: k.id, place: a.place });
    }
    for (const id of gone) {
      if (arrived.has(id)) continue; // moved: it has its new place
      const k = lookup(`${agent}/${id}`);
      if (k) out.drop.push(k.id);
    }
    if (!fresh.length) continue;
    (await readHeads(mail, agent, fresh, store.maxBytes)).forEach((h, i) => {
      if (typeof h === "string") return; // moved on since the listing (read again next time), corrupt, or not ours to read
      out.add.push({ kind: "message", key: `${agent}/${h.id}`, ref: h.id, author: h.from, user: h.user, time: h.sent_at, agent, place: fresh[i].place, version: null, body: h.body });
    });
  }
}

// The heads of `items`, one message at a time when a read of them all fails: a message this
// user may not read (a member's file of mode 000 among the others) stays out alone, and is
// tried again when its place next changes; it must not keep every other new one out with it,
// at each search, for as long as it lies there.
async function readHeads(mail: MailStorage, agent: string, items: { id: string; at: At }[], bodyChars: number): Promise<(Head | string)[]> {
  try {
    return await mail.heads(agent, items, bodyChars);
  } catch (err) {
    if (!(err instanceof A2AError)) throw err;
  }
  const heads: (Head | string)[] = [];
  for (const item of items) {
    try {
      heads.push(...(await mail.heads(agent, [item], bodyChars)));
    } catch (err) {
      if (!(err instanceof A2AError)) throw err;
      heads.push("unreadable");
    }
  }
  return heads;
}
