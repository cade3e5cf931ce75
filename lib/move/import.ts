// a2a import: loads an export (lib/move/format.ts) into a store of either engine, written
// through the rooms' storage (lib/<room>/storage.ts) only: one piece of code for every engine.
//
// Invariants:
// - a record is written whole or not at all, with the identity it had: a slot, task or lease
//   at its version, a message under its id and in its place, a topic message under its number,
//   a subscriber at its positions;
// - importing twice changes nothing: a record whose identity is there already is skipped and
//   counted "already there";
// - an import never replaces a record it did not bring: where the store holds a different
//   record under the same identity (versions of two stores say nothing about each other), the
//   store's is kept, counted "kept" and named in the report. Only `replaceOlder` lets an
//   export's record replace an older version of it, and even then versions never go back;
// - an input that can be read twice (a file) is checked whole first: a damaged one writes
//   nothing. From a pipe each line is checked before it is written, and a damaged line stops
//   the import there: the records before it are whole, and running the import again (on a
//   whole export) completes it, as it completes one that was killed;
// - memory holds one line, one inbox's ids and a batch of tasks (lib/move/tasks.ts), never the
//   export.

import type { Store } from "../core/config";
import { A2AError } from "../core/errors";
import { blobStorage } from "../blobs/storage";
import { leaseStorage } from "../leases/storage";
import type { Message } from "../mail/message";
import { HUMAN, IMPORTED_HUMAN } from "../mail/human";
import type { Policy } from "../mail/policy";
import { mailStorage, type MailStorage, type Place } from "../mail/storage";
import { presenceStorage } from "../presence/storage";
import { slotStorage } from "../slots/storage";
import { taskStorage } from "../tasks/storage";
import { topicStorage } from "../topics/storage";
import { blobSequence, blobWriter } from "./blobs";
import { slotSequence, slotWriter } from "./slots";
import { taskWriter } from "./tasks";
import { exportLines } from "./lines";
import { KINDS, nameOf, parseHeader, parseLine, type Header, type Kind, type ExportRecord, type TopicEntry } from "./format";

// The export to read: `open` gives its bytes from the start each time it is called; `again`:
// it can be opened twice (a file), so it is checked whole before anything is written.
export interface ImportInput {
  open(): AsyncIterable<Uint8Array>;
  again: boolean;
}

export type Verdict = "imported" | "already" | "kept";

export interface ImportReport {
  from: Header["engine"]; // the engine the export was taken from
  records: number;
  counts: { [K in Kind]: { [V in Verdict]: number } };
  kept: { kind: Kind; name: string }[]; // the records kept, the first KEPT_NAMED of them
}

export interface ImportOptions {
  // An export's record replaces the store's where the store's is an older version of it (a
  // lower version, a position behind, a policy changed earlier): for a store known to be a
  // copy of the export's source.
  replaceOlder?: boolean;
}

const KEPT_NAMED = 50;

export async function importStore(store: Store, input: ImportInput, opts: ImportOptions = {}): Promise<ImportReport> {
  if (input.again) await scan(input.open(), async () => {});
  const counts = Object.fromEntries(KINDS.map((k) => [k, { imported: 0, already: 0, kept: 0 }])) as ImportReport["counts"];
  const kept: ImportReport["kept"] = [];
  const count = (kind: Kind, v: Verdict, name: string) => {
    if (kind === "slot_chunk" && v === "kept") return; // its slot's verdict says it, once
    counts[kind][v]++;
    if (v === "kept" && kept.length < KEPT_NAMED) kept.push({ kind, name });
  };
  const into = importer(store, opts.replaceOlder === true, (kind, v, name) => count(kind, v, name));
  const { header, records } = await scan(input.open(), async (r, size) => {
    const v = await into.write(r, size);
    if (v) count(r.kind, v, nameOf(r));
  }).catch(async (err: unknown) => {
    // A damaged line stops the import there: what came before it goes in first (header).
    if (err instanceof A2AError && err.code === "EUSAGE") await into.finish();
    throw err;
  });
  await into.finish();
  return { from: header.engine, records, counts, kept };
}

// Reads the export line by line, checking each, and hands each record to `each` in order, with
// its line's length.
async function scan(bytes: AsyncIterable<Uint8Array>, each: (r: ExportRecord, size: number) => Promise<void>): Promise<{ header: Header; records: number }> {
  let n = 0;
  let header: Header | undefined;
  let ended = false;
  let records = 0;
  const blobs = blobSequence();
  const slotLines = slotSequence();
  for await (const text of exportLines(bytes)) {
    n++;
    if (n === 1) {
      header = parseHeader(text);
      continue;
    }
    if (ended) throw new A2AError("EUSAGE", `line ${n} of the export follows its end line: the file was joined or appended to; give one whole export`, { data: { line: n } });
    const r = parseLine(text, n);
    blobs.check(r, n);
    slotLines.check(r, n);
    if (r.kind === "end") {
      if (r.records !== records) {
        throw new A2AError("EUSAGE", `the export's end line (line ${n}) counts ${r.records} records but ${records} came before it: lines are missing; take a new export`, { data: { line: n } });
      }
      ended = true;
      continue;
    }
    records++;
    await each(r, text.length);
  }
  if (!header) return { header: parseHeader(undefined), records };
  if (!ended) {
    throw new A2AError("EUSAGE", `the export ends at line ${n} without its end line: it was cut short; take a whole export and import it (what this import wrote is whole, and importing again completes it)`, {
      data: { line: n },
    });
  }
  return { header, records };
}

// Stable text of a value: objects with their keys sorted, so two engines' records compare.
const canon = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
const same = (a: unknown, b: unknown) => canon(a) === canon(b);

// Writes any record into `store`, with the storages it needs: a verdict per line, but for a
// slot line, whose verdict goes to `counted` once the chunk lines after it are written, and a
// task line, whose verdict goes there once its batch is (`finish` after the last line).
function importer(store: Store, replaceOlder: boolean, counted: (kind: Kind, v: Verdict, name: string) => void): { write(r: ExportRecord, size: number): Promise<Verdict | undefined>; finish(): Promise<void> } {
  // What the store holds against a versioned record: undefined when it holds nothing (or, with
  // replaceOlder, an older version): write it; else the verdict.
  const against = (have: { version: number } | undefined, rec: { version: number }): Verdict | undefined =>
    !have || (replaceOlder && have.version < rec.version) ? undefined : have.version === rec.version && same(have, rec) ? "already" : "kept";

  const slots = slotWriter(slotStorage(store), against, (v, name) => counted("slot", v, name));
  const tasks = taskWriter(taskStorage(store), against, (v, rec) => counted("task", v, nameOf({ kind: "task", record: rec })));
  const mail = mailStorage(store);
  const topics = topicStorage(store);
  const leases = leaseStorage(store);
  const presence = presenceStorage(store);
  const inbox = inboxIndex(mail);
  const blob = blobWriter(blobStorage(store));

  const topicMessage = async (m: TopicEntry): Promise<Verdict> => {
    if (await topics.restore({ a2a: 1, ...m })) return "imported";
    const [have] = await topics.read(m.topic, m.id - 1, 1);
    return have?.id === m.id && have.from === m.from && have.body === m.body && have.sent_at === m.sent_at ? "already" : "kept";
  };

  // A subscriber: its record where it has none, each position where it has none (an import cut
  // short, completed) or, with replaceOlder, where the store's is behind. A subscriber of the
  // store's own (another start, another position) is kept whole.
  const subscriber = async (name: string, created: number | null, cursors: { topic: string; id: number }[]): Promise<Verdict> => {
    const have = await topics.subscription(name);
    const own = new Map(cursors.map((c) => [c.topic, c.id]));
    const differs = (have.created_at !== undefined && created !== null && have.created_at !== created) || have.cursors.some((c) => own.has(c.topic) && own.get(c.topic) !== c.id);
    if (differs && !replaceOlder) return "kept";
    let wrote = false;
    let kept = false;
    if (created !== null) {
      if (have.created_at === undefined) wrote = (await topics.restoreSubscriber(name, created)) || wrote;
      else kept ||= have.created_at !== created;
    }
    const at = new Map(have.cursors.map((c) => [c.topic, c.id]));
    for (const c of cursors) {
      const cur = at.get(c.topic);
      if (cur === undefined || cur < c.id) {
        await topics.setCursor(name, c.topic, c.id);
        wrote = true;
      } else kept ||= cur > c.id;
    }
    return wrote ? "imported" : kept ? "kept" : "already";
  };

  const policy = async (agent: string, p: Policy): Promise<Verdict> => {
    const cur = await mail.policy(agent);
    if (cur.kind === "ok" && same({ ...cur.policy, agent }, { ...p, agent })) return "already";
    // The store's own policy stays; with replaceOlder, only one changed at the export's time or later.
    const keeps = (c: typeof cur) => c.kind === "invalid" || (c.kind === "ok" && (!replaceOlder || (c.policy.updated_at ?? 0) >= (p.updated_at ?? 0)));
    if (keeps(cur)) return "kept";
    let v: Verdict = "imported";
    await mail.changePolicy(agent, (c) => {
      if (c.kind === "ok" && keeps(c)) {
        v = "kept";
        return c.policy;
      }
      return { ...p, agent };
    });
    return v;
  };

  const names = async (host: string, cwd: string, list: string[]): Promise<Verdict> => {
    const have = await presence.remembered(host, cwd);
    if (have.length) return same(have, list) ? "already" : "kept";
    await presence.remember(host, cwd, list);
    return "imported";
  };

  const write = async (r: ExportRecord, size: number): Promise<Verdict | undefined> => {
    if (r.kind !== "task") await tasks.flush();
    if (r.kind === "slot_chunk") return slots.chunk(r.n, r.text);
    await slots.finish();
    switch (r.kind) {
      case "slot":
        await slots.slot(r.record, r.chunks);
        return undefined;
      case "inbox":
        if (await mail.has(r.agent)) return "already";
        await mail.open(r.agent, false);
        return "imported";
      case "message":
        // The person's mark counts for the writer, here the importer: not carried over (lib/mail/human.ts).
        return inbox.put(r.agent, r.place, r.message.from === HUMAN ? { ...r.message, from: IMPORTED_HUMAN } : r.message);
      case "policy":
        return policy(r.agent, r.policy);
      case "topic_message":
        return topicMessage(r.message);
      case "subscriber":
        return subscriber(r.name, r.created_at, r.cursors);
      case "task":
        await tasks.task(r.record, size);
        return undefined;
      case "lease": {
        const h = await leases.head(r.record.name, true);
        const v = h.damaged ? "kept" : against(h.record, r.record);
        return v ?? ((await leases.restore(r.record)) ? "imported" : "kept");
      }
      case "names":
        return names(r.host, r.cwd, r.names);
      case "blob_part":
        return blob.part(r.digest, r.n, r.data);
      case "blob":
        return blob.end(r.digest, r.size);
    }
  };
  return { write, finish: async () => (await slots.finish(), await tasks.flush()) };
}

// Messages written into inboxes: where each id of the inbox being filled is (an export lists
// an inbox's messages together, so one inbox's index is held at a time).
function inboxIndex(mail: MailStorage) {
  let agent: string | undefined;
  let where = new Map<string, Place | "claimed">();
  const load = async (a: string) => {
    where = new Map();
    for (const place of ["unread", "read", "held"] as const) for (const id of await mail.ids(a, place)) where.set(id, place);
    for (const c of await mail.claims(a)) where.set(c.id, "claimed");
    agent = a;
  };
  return {
    // A message under its id: delivered (unread, with no limit: the inbox held it), then moved to
    // its place. One found unread that the export has read or held is an import cut short
    // between the two: it is moved on now. Anywhere else, it is there already.
    async put(to: string, place: Place, m: Message): Promise<Verdict> {
      if (agent !== to) await load(to);
      const at = where.get(m.id);
      if (at === undefined) {
        const d = await mail.deliver(to, () => m, { freshId: m.id, limit: Infinity });
        if (d.kind !== "delivered") return "already";
      } else if (!(at === "unread" && place !== "unread")) return "already";
      where.set(m.id, place);
      if (place !== "unread") await mail.move(to, m.id, "unread", place);
      return "imported";
    },
  };
}
