// Giving back what its taker never received (lib/tasks/claim.ts unclaimTask, lib/leases/lease.ts
// untakeLeases), on real temporary stores: the task is ready again with its attempt not
// counted, the names free again (or their old expiry back), and neither can undo anything
// written after it: a later claim, a finish, a take by someone else. Lease expiry is awaited
// through claimTask's own wait, never a sleep.
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { addTask } from "../../lib/tasks/add";
import { claimTask, unclaimTask, type TaskClaim } from "../../lib/tasks/claim";
import { completeTask, renewTask } from "../../lib/tasks/holder";
import { listLeases, releaseLeases, takeLeases, takeLeasesUndoably, untakeLeases } from "../../lib/leases/lease";
import { showTask } from "../../lib/tasks/query";

setDefaultTimeout(60_000);

const stores: Store[] = [];
function fresh(): Store {
  const s = openStore({ dir: mkdtempSync(join(tmpdir(), "a2a-giveback-")) });
  stores.push(s);
  return s;
}
afterEach(() => {
  for (const s of stores.splice(0)) {
    closeWatches(s);
    rmSync(s.root, { recursive: true, force: true });
  }
});

const claim = async (s: Store, o: { leaseSec?: number; wait?: boolean } = {}) => (await claimTask(s, "q", { as: "w", timeoutMs: 20_000, ...o })).value as TaskClaim;

describe("unclaimTask", () => {
  test("the task is ready again, the attempt not counted; the unreceived token is dead; the next claim is the same attempt", async () => {
    const s = fresh();
    const { id } = await addTask(s, "q", "work", { maxAttempts: 1 });
    const c = await claim(s);
    expect((await unclaimTask(s, c))).toBe(true);
    expect((await showTask(s, id))).toMatchObject({ state: "ready", attempt: 0, attempts_left: 1, attempts: [] });
    await expect(renewTask(s, id, c.token)).rejects.toMatchObject({ code: "ECONFLICT" });
    const again = await claim(s);
    expect(again).toMatchObject({ id, attempt: 1 });
    expect(again.token).not.toBe(c.token);
    expect((await unclaimTask(s, c))).toBe(false); // fenced: the claim after it stays
    expect((await showTask(s, id))).toMatchObject({ state: "claimed", attempt: 1 });
  });

  test("never undoes what came after the claim: a settle and a later claim, or a finish", async () => {
    const s = fresh();
    const { id } = await addTask(s, "q", "work");
    const first = await claim(s, { leaseSec: 0.2 });
    const second = await claim(s, { wait: true }); // after the lease ran out: attempt 2
    expect(second.attempt).toBe(2);
    expect((await unclaimTask(s, first))).toBe(false);
    expect((await showTask(s, id))).toMatchObject({ state: "claimed", attempt: 2 });
    await completeTask(s, id, second.token, "ok");
    expect((await unclaimTask(s, second))).toBe(false);
    expect((await showTask(s, id))).toMatchObject({ state: "done", result: "ok" });
  });
});

describe("untakeLeases", () => {
  test("names taken are free again; a lease the taker already held gets its old expiry back", async () => {
    const s = fresh();
    const [mine] = (await takeLeases(s, ["a"], { as: "w", ttlSec: 60 })).value!;
    const t = (await takeLeasesUndoably(s, ["a", "b"], { as: "w", ttlSec: 3600 })).value!;
    expect(t.leases.find((l) => l.name === "a")!.expires_at).toBeGreaterThan(mine.expires_at);
    expect((await untakeLeases(s, t)).sort()).toEqual(["a", "b"]);
    expect(await listLeases(s)).toEqual([mine]);
  });

  test("never undoes a later take, by anyone", async () => {
    const s = fresh();
    const t = (await takeLeasesUndoably(s, ["a"], { as: "w" })).value!;
    await releaseLeases(s, ["a"], { as: "w" });
    const [other] = (await takeLeases(s, ["a"], { as: "v" })).value!;
    expect(await untakeLeases(s, t)).toEqual([]);
    expect(await listLeases(s)).toEqual([other]);
  });
});
