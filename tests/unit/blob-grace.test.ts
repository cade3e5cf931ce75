// lib/maintenance/gc.ts and blobs.ts: no lib caller steps around gc's blob grace floor, neither
// with a grace period under it nor with a clock of its own (review 14a). Tests that need blobs
// older than the grace period run gc under faketime (tests/e2e/shared-hostile.test.ts).
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { putBlob, statBlob } from "../../lib/blobs/room";
import { gcStore } from "../../lib/maintenance/gc";
import { BLOB_GRACE_FLOOR_MS, sweepBlobs } from "../../lib/maintenance/blobs";

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) {
    closeWatches(s);
    rmSync(s.root, { recursive: true, force: true });
  }
});

async function storeWithBlob(): Promise<{ store: Store; digest: string }> {
  const store = openStore({ dir: mkdtempSync(join(tmpdir(), "a2a-grace-")), env: {} });
  stores.push(store);
  async function* one() {
    yield new TextEncoder().encode("no record names me\n");
  }
  return { store, digest: (await putBlob(store, one())).digest };
}

test("sweepBlobs refuses a grace period under the floor, as gc does, and removes nothing", async () => {
  const { store, digest } = await storeWithBlob();
  await expect(sweepBlobs(store, 0)).rejects.toMatchObject({ code: "EUSAGE" });
  expect((await statBlob(store, digest)).digest).toBe(digest);
});

test("gcStore takes no clock from its caller: a fresh blob survives whatever extra argument is passed", async () => {
  const { store, digest } = await storeWithBlob();
  const loose = gcStore as (...args: unknown[]) => ReturnType<typeof gcStore>;
  const report = await loose(store, undefined, BLOB_GRACE_FLOOR_MS, Date.now() + 24 * 3600_000);
  expect(report.blobs_removed).toBe(0);
  expect((await statBlob(store, digest)).digest).toBe(digest);
});
