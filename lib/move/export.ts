// a2a export: a whole store as JSON lines (lib/move/format.ts), read through the rooms' storage
// (lib/<room>/storage.ts) only, so it is one piece of code for every engine.
//
// Invariants:
// - nothing in the store is changed: only reads (a subscriber is read, never recorded);
// - the store is read a bounded batch at a time and each line handed to `write` as soon as it is
//   made: memory holds one batch (and one inbox's or queue's ids), never the store;
// - each record is whole as the store held it when it was read; a store in use meanwhile gives
//   a record per name as it was at its read (no snapshot across records); a record that fails
//   its checks (damage) is passed over and counted, never written out as something else;
// - a claim in flight is exported as unread (the claimer's hold does not move with the store).

import type { Store } from "../core/config";
import { damageOf } from "../core/errors";
import { RECORD_LIMIT } from "../core/record";
import { byName, isValidName } from "../core/names";
import { nowSec } from "../core/time";
import { blobStorage } from "../blobs/storage";
import { leaseStorage } from "../leases/storage";
import { mailStorage, type At } from "../mail/storage";
import { presenceStorage } from "../presence/storage";
import type { SlotRecord } from "../slots/record";
import { slotStorage, type SlotStorage } from "../slots/storage";
import type { DamagedChain } from "../tasks/state";
import { taskStorage } from "../tasks/storage";
import { checkTopic } from "../topics/log";
import { topicStorage } from "../topics/storage";
import { header, KINDS, type ExportRecord, type Kind } from "./format";

const BATCH = 500;
// A run's chunks are read this many at a time: each may be as large as a record.
const CHUNK_BATCH = 16;
// A topic is read this many messages a call: the file engine lists the topic's directory on
// every read, so a topic of 100,000 messages is 20 listings, not 200.
const TOPIC_BATCH = 5000;
// A head of this many characters is a whole message: no record is larger in bytes.
const WHOLE = RECORD_LIMIT;

export interface ExportReport {
  counts: { [K in Kind]: number };
  damaged: number; // records passed over: they failed their checks
}

const isTopic = (t: string) => {
  try {
    return checkTopic(t) === t;
  } catch {
    return false;
  }
};

const hasRun = (r: SlotRecord) => r.chunks > 0 && r.state !== "cleared";

// Whether any slot has a run's chunks to export (they make the export version 3).
async function anyRun(slots: SlotStorage, names: string[]): Promise<boolean> {
  for (let i = 0; i < names.length; i += BATCH) {
    for (const r of await slots.readMany(names.slice(i, i + BATCH))) {
      const record = r.kind === "ok" ? r.record : r.kind === "absent" ? r.last : undefined;
      if (record && hasRun(record)) return true;
    }
  }
  return false;
}

// Writes the export of `store` line by line (each with its "\n") to `write`.
export async function exportStore(store: Store, write: (line: string) => void | Promise<void>): Promise<ExportReport> {
  const counts = Object.fromEntries(KINDS.map((k) => [k, 0])) as ExportReport["counts"];
  let damaged = 0;
  const emit = async (r: ExportRecord) => {
    counts[r.kind]++;
    await write(JSON.stringify(r) + "\n");
  };
  const blobs = blobStorage(store);
  const stored = (await blobs.list()).sort((a, b) => byName(a.hex, b.hex));
  const slots = slotStorage(store);
  const names = (await slots.names()).filter(isValidName).sort(byName);
  const runs = await anyRun(slots, names);
  await write(JSON.stringify(header(store.engine.name, nowSec(), runs ? 3 : stored.length ? 2 : 1)) + "\n");

  // Blobs first, so that a record naming one finds it once imported. Each is read twice: once to
  // check it against its digest (a damaged blob is passed over and counted, never exported as
  // the blob), then to write it out.
  for (const b of stored) {
    const check = await blobs.read(b.hex);
    if (!check) continue; // removed meanwhile
    const hash = new Bun.CryptoHasher("sha256");
    let size = 0;
    for await (const piece of check) {
      hash.update(piece);
      size += piece.length;
    }
    if (hash.digest("hex") !== b.hex || size !== b.size) {
      damaged++;
      continue;
    }
    const bytes = await blobs.read(b.hex);
    if (!bytes) continue;
    const digest = `sha256:${b.hex}`;
    let n = 0;
    for await (const piece of bytes) await emit({ kind: "blob_part", digest, n: n++, data: Buffer.from(piece).toString("base64") });
    await emit({ kind: "blob", digest, size: b.size, parts: n });
  }

  for (let i = 0; i < names.length; i += BATCH) {
    const batch = names.slice(i, i + BATCH);
    const reads = await slots.readMany(batch);
    for (const r of reads) {
      const record = r.kind === "ok" ? r.record : r.kind === "absent" ? r.last : undefined;
      if (r.kind === "corrupt") damaged++;
      if (!record) continue;
      // A run's chunks, a line each, read a batch at a time: fewer than counted when a new run
      // dropped them meanwhile (a reader takes a missing chunk so too).
      await emit({ kind: "slot", record, chunks: [] });
      if (!hasRun(record)) continue;
      for (let after = 0; after < record.chunks; after += CHUNK_BATCH) {
        const got = await slots.chunks(record.name, after, Math.min(record.chunks, after + CHUNK_BATCH));
        for (const [i, text] of got.entries()) await emit({ kind: "slot_chunk", name: record.name, n: after + i + 1, text });
        if (got.length < Math.min(CHUNK_BATCH, record.chunks - after)) break;
      }
    }
  }

  const mail = mailStorage(store);
  for (const agent of (await mail.agents()).filter(isValidName).sort(byName)) {
    await emit({ kind: "inbox", agent });
    const p = await mail.policy(agent);
    if (p.kind === "ok") await emit({ kind: "policy", agent, policy: p.policy });
    else if (p.kind === "invalid") damaged++;
    const items: { id: string; at: At; place: "unread" | "read" | "held" }[] = [];
    for (const place of ["unread", "read", "held"] as const) for (const id of await mail.ids(agent, place)) items.push({ id, at: place, place });
    for (const c of await mail.claims(agent)) items.push({ id: c.id, at: c, place: "unread" });
    items.sort((a, b) => byName(a.id, b.id));
    for (let i = 0; i < items.length; i += BATCH) {
      const batch = items.slice(i, i + BATCH);
      const heads = await mail.heads(agent, batch, WHOLE);
      for (let j = 0; j < batch.length; j++) {
        const h = heads[j];
        const whole = typeof h === "object" && h.truncated ? await mail.read(agent, batch[j].id, batch[j].at) : h;
        if (whole === "corrupt") damaged++;
        if (typeof whole !== "object") continue; // moved on meanwhile (read, released): exported where it was listed, or not at all
        const { a2a, id, from, to, body, sent_at, reply_to, thread, host, pid, attachments } = whole; // not its writer: the store vouches for that, not the file
        const size = Buffer.byteLength(body, "utf8");
        await emit({ kind: "message", agent, place: batch[j].place, message: { a2a, id, from, to, body, size, sent_at, reply_to, ...(thread === undefined ? {} : { thread }), host, pid, ...(attachments ? { attachments } : {}) } });
      }
    }
  }

  const topics = topicStorage(store);
  for (const topic of (await topics.topics()).filter(isTopic).sort(byName)) {
    for (let after = 0; ; ) {
      const got = await topics.read(topic, after, TOPIC_BATCH);
      if (!got.length) break;
      for (const { topic: t, id, from, body, sent_at } of got) await emit({ kind: "topic_message", message: { topic: t, id, from, body, sent_at } });
      after = got[got.length - 1].id;
    }
  }
  for (const name of (await topics.subscribers()).filter(isValidName).sort(byName)) {
    const s = await topics.subscription(name);
    const cursors = s.cursors.filter((c) => isTopic(c.topic)).sort((a, b) => byName(a.topic, b.topic));
    await emit({ kind: "subscriber", name, created_at: s.created_at ?? null, cursors });
  }

  const tasks = taskStorage(store);
  for (const queue of (await tasks.queues()).filter(isValidName).sort(byName)) {
    const ids = (await tasks.ids(queue)).sort(byName);
    for (let i = 0; i < ids.length; i += BATCH) {
      const bad: DamagedChain[] = [];
      for (const record of await tasks.records(queue, ids.slice(i, i + BATCH), bad)) await emit({ kind: "task", record });
      damaged += bad.length;
    }
  }

  const leases = leaseStorage(store);
  for (const name of (await leases.names()).filter(isValidName).sort(byName)) {
    try {
      const h = await leases.head(name);
      if (h.record) await emit({ kind: "lease", record: h.record });
    } catch (err) {
      if (!damageOf(err)) throw err;
      damaged++;
    }
  }

  const presence = presenceStorage(store);
  const ids = (await presence.identities()).sort((a, b) => byName(a.host, b.host) || byName(a.cwd, b.cwd));
  for (const { host, cwd, names } of ids) await emit({ kind: "names", host, cwd, names });

  await write(JSON.stringify({ kind: "end", records: KINDS.reduce((n, k) => n + counts[k], 0) }) + "\n");
  return { counts, damaged };
}
