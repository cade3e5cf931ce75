// A worker's log on the bus: one slot per worker (logName), so `a2a crew logs`, `a2a tail -f`
// and `a2a status` read it from any terminal, and on PostgreSQL from any machine. Each task
// starts the slot again (the previous task's output goes), its output is appended as it comes
// (what arrived within FLUSH_MS as one chunk), and its end is published. Bounded: at most
// LOG_MAX bytes of one task's output are kept (then one line says the rest was left out), and
// the slot expires LOG_TTL_SEC after its last task. A log that cannot be written never stops
// the worker. The attempt's secrets (its lease token, the store URL's password) never reach it:
// a worker's output may echo its prompt or environment, and any reader of the bus (another
// worker among them) reads the log, which would let it end a task it does not hold.

import type { Store } from "../core/config";
import { redact } from "../core/location";
import { appendChunk, publishSlot, startSlot } from "../slots/slot";

export const FLUSH_MS = 200;
export const LOG_MAX = 256 * 1024;
export const LOG_TTL_SEC = 7 * 86400;

export const logName = (crew: string, worker: string) => `crew.${crew}.${worker}`;

export interface Log {
  write(text: string): void;
  end(result: string): Promise<void>;
}

// What an attempt's output must not carry, each with what stands in its place: a text, or (a long
// session, whose tokens come as it claims) a pattern, global, of what it may be.
export type Secrets = [secret: string | RegExp, shown: string][];
const PATTERN_HOLD = 32; // a pattern's match may come split over two writes: at most this long

export function secretsOf(store: Store, token: string): Secrets {
  const out: Secrets = [[token, "[the task's token]"]];
  if (store.url && redact(store.url) !== store.url) out.push([store.url, redact(store.url)]);
  return out;
}

export const scrub = (text: string, secrets: Secrets): string => secrets.reduce((t, [s, shown]) => t.replaceAll(s, shown), text);

// `rolling` (a long session's log, which has no end to wait for): over the bound, the log starts
// again with what comes next, rather than leaving the rest out.
export async function openLog(store: Store, slot: string, task: string, secrets: Secrets = [], rolling = false): Promise<Log> {
  await startSlot(store, slot, task, { ttlSec: LOG_TTL_SEC }).catch(() => {});
  const limit = Math.min(LOG_MAX, store.maxBytes);
  let buf = "";
  let written = 0;
  let cut = false;
  let chain: Promise<unknown> = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // A secret may come split over two writes: the last (longest secret - 1) characters wait for
  // the next write, or the end.
  const hold = Math.max(0, ...secrets.map(([x]) => (typeof x === "string" ? x.length - 1 : PATTERN_HOLD)));
  const flush = (last = false) => {
    timer = undefined;
    const clean = scrub(buf, secrets);
    const upTo = last ? clean.length : Math.max(0, clean.length - hold);
    const chunk = clean.slice(0, upTo);
    buf = clean.slice(upTo);
    if (chunk) chain = chain.then(() => appendChunk(store, slot, chunk)).catch(() => {});
  };
  return {
    write(text: string) {
      if (cut) return;
      if (written + Buffer.byteLength(text) > limit && rolling) {
        clearTimeout(timer);
        flush(true);
        chain = chain.then(() => startSlot(store, slot, `${task}, continued (the earlier output was over ${limit} bytes)`, { ttlSec: LOG_TTL_SEC })).catch(() => {});
        written = 0;
      } else if (written + Buffer.byteLength(text) > limit) {
        cut = true;
        text = `\n[a2a crew: the rest of this task's output is left out of the log (over ${limit} bytes)]\n`;
      }
      written += Buffer.byteLength(text);
      buf += text;
      timer ??= setTimeout(flush, FLUSH_MS);
    },
    async end(result: string) {
      clearTimeout(timer);
      flush(true);
      await chain;
      await publishSlot(store, slot, result, { ttlSec: LOG_TTL_SEC }).catch(() => {});
    },
  };
}
