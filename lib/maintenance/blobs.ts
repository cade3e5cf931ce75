// gc's sweep of blobs (§19): a blob no live record names (a message in any place of any inbox,
// a slot's published result, a task's result) is removed once it is older than the grace
// period, counted from its newest put. Written once above the engines, through each room's
// storage interface; what an upload left unfinished is the engine's to sweep.
//
// Why the grace period is enough: a record names a blob only right after a put of it (send,
// publish and task done store their files first, which moves an existing blob's time to now),
// and the check just before the record is written moves it again (lib/blobs/room.ts
// checkAttachments), so a blob older than the grace period that no record names now is named by
// no record being written either, as long as the grace period is longer than that check-to-write
// step plus any difference between the clocks stamping and judging blob times: hence a floor,
// BLOB_GRACE_FLOOR_MS, below which gc refuses to run (gc --blob-grace 0 once lost attachments
// of sends it raced).

import type { Store } from "../core/config";
import { A2AError, arg, text } from "../core/errors";
import type { Attachment } from "../blobs/attachment";
import { BLOB_GRACE_FLOOR_MS, blobStorage } from "../blobs/storage";
import { mailStorage, type At, type Place } from "../mail/storage";
import { slotStorage } from "../slots/storage";
import { taskStorage } from "../tasks/storage";

export const BLOB_GRACE_MS = 60 * 60 * 1000;
export { BLOB_GRACE_FLOOR_MS };

// EUSAGE for a grace period under the floor, before gc removes anything.
export function checkBlobGrace(graceMs: number): void {
  if (!(graceMs >= BLOB_GRACE_FLOOR_MS)) {
    throw new A2AError("EUSAGE", text`a blob grace period of ${String(Math.round(graceMs / 1000))}s is under the floor of 10 minutes: a send stores its files before its record names them, and gc must not remove them in between; give ${arg("blobGrace", "10m")} or more`, {
      data: { grace_ms: graceMs, floor_ms: BLOB_GRACE_FLOOR_MS },
    });
  }
}
const BATCH = 500;

// The digests every live record names.
async function named(store: Store): Promise<Set<string>> {
  const refs = new Set<string>();
  const add = (list: readonly Attachment[] | undefined) => list?.forEach((a) => refs.add(a.digest));
  const slots = slotStorage(store);
  for (const r of await slots.readMany(await slots.names())) if (r.kind === "ok") add(r.record.attachments);
  const mail = mailStorage(store);
  for (const agent of await mail.agents()) {
    const items: { id: string; at: At }[] = (await mail.claims(agent)).map((c) => ({ id: c.id, at: c }));
    for (const place of ["unread", "read", "held"] as Place[]) for (const id of await mail.ids(agent, place)) items.push({ id, at: place });
    for (let i = 0; i < items.length; i += BATCH) {
      for (const h of await mail.heads(agent, items.slice(i, i + BATCH), 0)) if (typeof h === "object") add(h.attachments);
    }
  }
  const tasks = taskStorage(store);
  for (const queue of await tasks.queues()) add((await tasks.records(queue, await tasks.ids(queue))).flatMap((r) => r.attachments ?? []));
  return refs;
}

// Removes the blobs no record names that are older than `graceMs`, and unfinished uploads as
// old; how many blobs.
export async function sweepBlobs(store: Store, graceMs = BLOB_GRACE_MS, now = Date.now()): Promise<number> {
  const blobs = blobStorage(store);
  const before = now - graceMs;
  await blobs.sweep(before);
  const old = (await blobs.list()).filter((b) => b.at < before);
  if (!old.length) return 0;
  const refs = await named(store);
  let removed = 0;
  for (const b of old) if (!refs.has(`sha256:${b.hex}`) && (await blobs.remove(b.hex, before))) removed++;
  return removed;
}
