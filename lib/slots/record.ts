// The slot record: its fields, its encoding, and the checks that make a torn read visible.
//
// On disk a record is one line of JSON followed by "\n", keys in the order below. A reader
// accepts it only if (1) the text ends in "\n", (2) it parses, (3) `a2a` is 1, and (4) `size`
// equals the UTF-8 byte length of `result`. A caching network filesystem can hand a reader new
// content cut to an old length; such a read fails one of these and is retried, never returned.
// Times are unix seconds with millisecond fractions.

import { attachmentsOf, type Attachment } from "../blobs/attachment";
import { nowSec } from "../core/time";
import { utf8Length } from "../core/utf8";

// "cleared" is a tombstone: the slot is absent, but its version lives on, so a version never
// repeats and `wait --after-version N` still sees the next publish after a clear or expiry.
export type SlotState = "running" | "done" | "cleared";

export interface SlotRecord {
  a2a: 1;
  name: string;
  state: SlotState;
  task: string;
  result: string | null;
  size: number; // UTF-8 bytes of result (0 while running)
  version: number; // 1 on first write, +1 on every change (clear and expiry included)
  started_at: number;
  published_at: number | null;
  updated_at: number;
  expires_at: number | null;
  chunks: number; // streamed chunks of the current run (see lib/slots/tail.ts)
  host: string;
  pid: number;
  attachments?: Attachment[]; // blobs published with the result (§19); only on a done record
}

export function encodeRecord(r: SlotRecord): string {
  const ordered: SlotRecord = {
    a2a: 1,
    name: r.name,
    state: r.state,
    task: r.task,
    result: r.result,
    size: r.result === null ? 0 : utf8Length(r.result),
    version: r.version,
    started_at: r.started_at,
    published_at: r.published_at,
    updated_at: r.updated_at,
    expires_at: r.expires_at,
    chunks: r.chunks,
    host: r.host,
    pid: r.pid,
    ...(r.state === "done" && r.attachments?.length ? { attachments: r.attachments } : {}),
  };
  return JSON.stringify(ordered) + "\n";
}

// Returns the record, or undefined when the text is not a complete, valid record.
export function decodeRecord(text: string): SlotRecord | undefined {
  if (!text.endsWith("\n")) return undefined;
  let r: any;
  try {
    r = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!r || typeof r !== "object" || r.a2a !== 1) return undefined;
  if (typeof r.name !== "string" || !["running", "done", "cleared"].includes(r.state)) return undefined;
  if (!Number.isInteger(r.version) || r.version < 1) return undefined;
  if (r.result !== null && typeof r.result !== "string") return undefined;
  if (r.size !== (r.result === null ? 0 : utf8Length(r.result))) return undefined;
  if (typeof r.task !== "string" || !Number.isInteger(r.chunks)) return undefined;
  if (r.attachments !== undefined && !attachmentsOf(r.attachments)) return undefined;
  return r as SlotRecord;
}

export const isExpired = (r: SlotRecord, now = nowSec()) => r.expires_at !== null && r.expires_at <= now;
