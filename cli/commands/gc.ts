// `a2a gc`: every sweep of the store (lib/maintenance/gc.ts), on its own because it reaches every concept.

import type { Command } from "commander";
import { damagedWarning } from "../format";
import { durationMs, err } from "../io";
import { action, command, type Ctx } from "../run";

export const commands = {
  gc: (p: Command) =>
    command(p, "gc", {
      summary: "sweep expired slots, stale temp files, orphaned chunks, stale locks, dead readers' claims, old finished tasks, free leases and old topic messages",
      description: "Sweep what crashes and expiry leave behind: blobs (a2a put) that no message, slot result or task names once they are an hour old (--blob-grace), expired slots (tombstoned), old tombstones, abandoned temp files, chunk directories no slot counts, stale locks, messages claimed by readers that died (back to unread), tasks done for 7 days or dead for 30 days that no unfinished task depends on, lease chains free for a day, and topic messages older than A2A_TOPIC_KEEP (30 days unless set; forever keeps them; each topic's newest message stays, so numbering goes on). Safe to run at any time, from anywhere; files a2a did not create are left alone.",
      examples: ["a2a gc", "a2a gc --json", "a2a gc --blob-grace 10m"],
      json: "print the report as JSON",
      quiet: true,
    })
      .option("--blob-grace <duration>", "remove a blob no message, result or task names once it is this old (default 1h, at least 10m: a put just made is about to be named)")
      .action(action(async (c: Ctx, o: { blobGrace?: string }) => {
      const r = await c.bus.admin.gc(undefined, durationMs(o.blobGrace, "--blob-grace"));
      if (r.damaged.length) err(damagedWarning(r.damaged));
      c.confirm(r, `swept ${r.expired.length} expired slot(s); removed ${r.tombstones} old tombstone(s), ${r.temp_files} temp file(s), ${r.orphan_streams.length} orphaned stream(s), ${r.stale_locks.length} stale lock(s); returned ${r.claims_recovered} abandoned message claim(s) to unread; removed ${r.tasks_removed} old task(s), ${r.leases_removed} old lease(s), ${r.reservations_removed} expired reservation(s), ${r.topic_messages_removed} old topic message(s), ${r.blobs_removed} blob(s) nothing names`);
    })),
};
