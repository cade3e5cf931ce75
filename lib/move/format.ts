// The export format (a2a export / a2a import; docs/PROTOCOL.md "Export and import"): JSON lines,
// a header first, one record a line, an end line last. What each kind holds is what the rooms'
// storage keeps (lib/<room>/storage.ts), as it keeps it, so a record means the same in a store
// of either engine.
//
// Invariants:
// - the header names the format and its version; a reader refuses a version above its own;
// - every line is checked whole before anything is written from it: a name that is no valid
//   name, a record that fails its room's own checks (sizes, ids, states) is damage, named by its
//   line number, never written (a name is the only gate between a line and a path);
// - the end line counts the records, so an export cut short at a line boundary is told from
//   a whole one.

import { A2AError } from "../core/errors";
import { RECORD_LIMIT } from "../core/record";
import { checkName, isMessageId, isTaskId } from "../core/names";
import type { LeaseRecord } from "../leases/storage";
import { asMessage, type Message } from "../mail/message";
import type { Policy } from "../mail/policy";
import type { Place } from "../mail/storage";
import { decodeRecord, type SlotRecord } from "../slots/record";
import { taskDecoder, type TaskRecord } from "../tasks/record";
import { checkTopic } from "../topics/log";

// Version 2 added blobs (blob_part and blob lines), version 3 a stream's chunks on lines of their
// own (slot_chunk); an export is written in the lowest version that holds it (a store without
// blobs or running streams as version 1), so an older a2a reads it.
export const EXPORT_VERSION = 3;

// The longest line a2a export writes: one record (each within RECORD_LIMIT, which every writer
// checks: lib/core/record.ts fitRecord) and the few fields around it. A blob's part and a stream's
// chunk are lines of their own for that reason; an import refuses a longer line as it passes
// the bound (lib/move/lines.ts). An export of an a2a before version 3 holds a stream's whole
// run in its slot line: one over the bound is refused too (export the store again).
export const MAX_LINE_BYTES = RECORD_LIMIT + 1024 * 1024;

export interface Header {
  a2a: "export";
  version: number;
  engine: "file" | "postgres"; // the store it was taken from, for a person reading it
  exported_at: number; // unix seconds
}

export interface TopicEntry {
  topic: string;
  id: number;
  from: string;
  body: string;
  sent_at: number;
}

export type ExportRecord =
  | { kind: "slot"; record: SlotRecord; chunks: string[] } // chunks: the current run's, 1..record.chunks (before version 3; now [])
  | { kind: "slot_chunk"; name: string; n: number; text: string } // chunk n of the run of the slot line before it
  | { kind: "inbox"; agent: string }
  | { kind: "message"; agent: string; place: Place; message: Message } // a claim in flight is "unread"
  | { kind: "policy"; agent: string; policy: Policy }
  | { kind: "topic_message"; message: TopicEntry }
  | { kind: "subscriber"; name: string; created_at: number | null; cursors: { topic: string; id: number }[] }
  | { kind: "task"; record: TaskRecord }
  | { kind: "lease"; record: LeaseRecord }
  | { kind: "names"; host: string; cwd: string; names: string[] }
  // A blob: its bytes in order as parts of at most 1 MiB (base64), then the line that ends it.
  | { kind: "blob_part"; digest: string; n: number; data: string }
  | { kind: "blob"; digest: string; size: number; parts: number };

export type Kind = ExportRecord["kind"];
export const KINDS: Kind[] = ["blob_part", "blob", "slot", "slot_chunk", "inbox", "message", "policy", "topic_message", "subscriber", "task", "lease", "names"];

export interface End {
  kind: "end";
  records: number;
}

export const header = (engine: Header["engine"], now: number, version = EXPORT_VERSION): Header => ({ a2a: "export", version, engine, exported_at: now });

const damaged = (line: number, why: string) =>
  new A2AError("EUSAGE", `line ${line} of the export is damaged (${why}): nothing was written from it; repair the file or take a new export, then import again (what was imported before it is whole, and stays)`, {
    data: { line, why },
  });

// The header on line 1, or a refusal saying what the input is not.
export function parseHeader(text: string | undefined): Header {
  let h: any;
  try {
    h = text === undefined ? undefined : JSON.parse(text);
  } catch {
    h = undefined;
  }
  if (!h || typeof h !== "object" || h.a2a !== "export" || !Number.isInteger(h.version)) {
    const what = text === undefined ? "it is empty" : "its first line is not the header a2a export writes";
    throw new A2AError("EUSAGE", `this is not an a2a export (${what}): give a file a2a export wrote`, { data: { line: 1 } });
  }
  if (h.version > EXPORT_VERSION || h.version < 1) {
    throw new A2AError("EUSAGE", `the export is format version ${h.version}, which this a2a does not read (it reads versions 1 to ${EXPORT_VERSION}): import it with the a2a that exported it, or a newer one`, {
      data: { line: 1, version: h.version, known: EXPORT_VERSION },
    });
  }
  return h as Header;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const PART_CHARS = Math.ceil((1024 * 1024) / 3) * 4;

const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");
const PLACES: Place[] = ["unread", "read", "held"];

// Line `line` (2 and on) as a record or the end line; a refusal naming the line when it is
// neither, whole and valid.
export function parseLine(text: string, line: number): ExportRecord | End {
  let v: any;
  try {
    v = JSON.parse(text);
  } catch {
    throw damaged(line, text.trim() === "" ? "an empty line" : "not JSON: cut short, or not written by a2a export");
  }
  if (!v || typeof v !== "object" || typeof v.kind !== "string") throw damaged(line, "no record kind");
  const why = check(v);
  if (why) throw damaged(line, `${v.kind === "end" || KINDS.includes(v.kind) ? `a ${v.kind} record: ` : ""}${why}`);
  return v;
}

// Why `v` is not a valid record of its kind, or undefined when it is.
function check(v: any): string | undefined {
  const name = (n: unknown, what: string) => {
    try {
      checkName(n, what);
      return undefined;
    } catch (e) {
      return (e as A2AError).message;
    }
  };
  switch (v.kind) {
    case "end":
      return Number.isInteger(v.records) && v.records >= 0 ? undefined : "no record count";
    case "slot": {
      const r = v.record;
      if (!r || decodeRecord(JSON.stringify(r) + "\n") === undefined) return "not a whole slot record";
      if (!isStrings(v.chunks) || v.chunks.length > r.chunks) return "more chunks than its record counts";
      return name(r.name, "slot name");
    }
    case "slot_chunk":
      if (!Number.isSafeInteger(v.n) || v.n < 1 || typeof v.text !== "string") return "no chunk number and text";
      return name(v.name, "slot name");
    case "inbox":
      return name(v.agent, "agent name");
    case "message": {
      const m = v.message;
      if (!PLACES.includes(v.place)) return "no place (unread, read or held)";
      if (!isMessageId(m?.id) || !asMessage(m, m.id) || m.to !== v.agent || typeof m.host !== "string" || !Number.isInteger(m.pid)) return "not a whole message";
      return name(v.agent, "agent name");
    }
    case "policy": {
      const p = v.policy;
      const ok = p && p.a2a === 1 && (p.mode === "open" || p.mode === "allowlist") && isStrings(p.allow) && isStrings(p.deny) && p.agent === v.agent;
      return ok ? name(v.agent, "agent name") : "not a whole policy";
    }
    case "topic_message": {
      const m = v.message;
      if (!m || !Number.isSafeInteger(m.id) || m.id < 1 || typeof m.from !== "string" || typeof m.body !== "string" || !isNum(m.sent_at)) return "not a whole topic message";
      try {
        checkTopic(m.topic);
      } catch (e) {
        return (e as A2AError).message;
      }
      return undefined;
    }
    case "subscriber": {
      if (v.created_at !== null && !isNum(v.created_at)) return "no creation time";
      if (!Array.isArray(v.cursors) || !v.cursors.every((c: any) => c && typeof c.topic === "string" && Number.isSafeInteger(c.id) && c.id >= 0)) return "its positions are not topic and id pairs";
      for (const c of v.cursors) {
        try {
          checkTopic(c.topic);
        } catch (e) {
          return (e as A2AError).message;
        }
      }
      return name(v.name, "subscriber name");
    }
    case "task": {
      const r = v.record;
      if (!r || !isTaskId(r.id) || typeof r.queue !== "string" || !taskDecoder(r.id, r.queue)(r) || r.version < 1) return "not a whole task record";
      if (!r.after.every((d: any) => d && isTaskId(d.id) && name(d.queue, "queue name") === undefined)) return "a dependency that names no task";
      if (r.key !== null && typeof r.key !== "string") return "a key that is no text";
      return name(r.queue, "queue name");
    }
    case "lease": {
      const r = v.record;
      const ok = r && r.a2a === 1 && Number.isInteger(r.version) && r.version >= 1 && (r.holder === null || typeof r.holder === "string") && isNum(r.taken_at) && isNum(r.expires_at) && typeof r.host === "string" && Number.isInteger(r.pid);
      return ok ? name(r.name, "lease name") : "not a whole lease record";
    }
    case "names":
      return typeof v.host === "string" && typeof v.cwd === "string" && v.cwd.startsWith("/") && isStrings(v.names) ? undefined : "not a host, a directory and names";
    case "blob_part":
      if (!DIGEST.test(v.digest) || !Number.isSafeInteger(v.n) || v.n < 0) return "no digest and part number";
      return typeof v.data === "string" && BASE64.test(v.data) && v.data.length <= PART_CHARS ? undefined : "its data is not base64 of at most 1 MiB";
    case "blob":
      return DIGEST.test(v.digest) && Number.isSafeInteger(v.size) && v.size >= 0 && Number.isSafeInteger(v.parts) && v.parts >= 0 ? undefined : "no digest, size and part count";
    default:
      return `an unknown kind ${JSON.stringify(String(v.kind).slice(0, 40))}`;
  }
}

// How a person finds the record in the store.
export function nameOf(r: ExportRecord): string {
  switch (r.kind) {
    case "slot":
    case "task":
    case "lease":
      return r.kind === "task" ? `${r.record.queue}/${r.record.id}` : r.record.name;
    case "inbox":
    case "policy":
      return r.agent;
    case "message":
      return `${r.agent}/${r.message.id}`;
    case "topic_message":
      return `${r.message.topic}#${r.message.id}`;
    case "subscriber":
      return r.name;
    case "slot_chunk":
      return `${r.name} chunk ${r.n}`;
    case "names":
      return `${r.host}:${r.cwd}`;
    case "blob_part":
    case "blob":
      return r.digest;
  }
}
