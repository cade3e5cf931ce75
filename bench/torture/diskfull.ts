// Disk full: a store on a 1 MiB tmpfs (root only: mount -t tmpfs -o size=1m).
//
// Sets up a published slot "keep", a published slot "stream" with three chunks and a running
// slot "run" with one chunk, then makes writes fail for want of space: a 1.5 MB publish on a
// nearly empty disk, and, with the disk filled to the last byte by a file outside the store,
// a small publish, a start (which drops a published run's chunks), an append, a publish to a
// new slot. Each must fail with exit 1 and one line naming the full disk, leave every store
// file byte for byte as it was, and leave nothing in tmp/. Reads (status, wait, tail) and gc
// must still work on the full disk; after space is freed the next publish must succeed.

import { mkdirSync, openSync, rmSync, writeFileSync, writeSync, closeSync } from "node:fs";
import { join } from "node:path";
import {
  a2a, type Ctx, diffSnapshots, listDir, type Outcome, type RunResult, scenarioDir, short, skip, snapshot, stderrProblem,
  Verdict,
} from "./common";
import { makePayload, payloadTag, rng, seal } from "./payload";

export async function diskFull(ctx: Ctx): Promise<Outcome> {
  if (!ctx.isRoot) return skip("needs root to mount a small tmpfs (mount -t tmpfs -o size=1m); run as root to include it");
  const dir = scenarioDir(ctx, "diskfull");
  const mnt = join(dir, "mnt");
  mkdirSync(mnt, { recursive: true });
  const m = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], { stderr: "pipe" });
  if (m.exitCode !== 0) return skip(`mount -t tmpfs failed (${m.stderr.toString().trim()}): no CAP_SYS_ADMIN here`);
  try {
    return await underFullDisk(ctx, dir, mnt);
  } finally {
    const u = Bun.spawnSync(["umount", mnt], { stderr: "pipe" });
    if (u.exitCode !== 0) Bun.spawnSync(["umount", "-l", mnt]);
  }
}

async function underFullDisk(ctx: Ctx, dir: string, mnt: string): Promise<Outcome> {
  const v = new Verdict();
  const root = join(mnt, "store");
  const env = { A2A_MAX_BYTES: String(4 * 1024 * 1024) }; // the disk, not the size limit, must refuse
  const r = rng(ctx.seed ^ 0xd15c);
  const run = (args: string[]) => a2a(ctx, args, { dir: root, env, limitMs: 60_000 });
  const must = async (args: string[]) => {
    const res = await run(args);
    if (res.code !== 0) v.fail("setup failed", `${args.join(" ").slice(0, 80)}: exit ${res.code}: ${short(res.stderr)}`);
    return res;
  };
  const keep = makePayload(r, "keep", 100);
  await must(["publish", "keep", keep]);
  await must(["start", "stream", "a run with chunks"]);
  for (let i = 1; i <= 3; i++) await must(["append", "stream", seal(`chunk${i}`, "x".repeat(50))]);
  await must(["publish", "stream", makePayload(r, "stream", 100)]);
  await must(["start", "run", "running"]);
  await must(["append", "run", seal("run1", "y")]);
  if (v.failed) return v.outcome("could not set up the store", []);

  const tried: string[] = [];
  // A write that the disk refuses: exit 1, one line naming the full disk, store unchanged.
  const refused = async (label: string, args: string[]) => {
    const before = snapshot(root);
    const res: RunResult = await run(args);
    tried.push(`${label}: exit ${res.code}`);
    const prob = stderrProblem(res);
    if (prob) v.fail("bad stderr", `${label}: ${prob}`);
    v.check(res.code === 1, "write not refused", () => `${label}: exit ${res.code}, stdout ${short(res.stdout)}`);
    v.check(/disk is full/.test(res.stderr), "message does not name the full disk", () => `${label}: ${short(res.stderr)}`);
    const changed = diffSnapshots(before, snapshot(root));
    v.check(changed.length === 0, "store changed by a failed write", () => `${label}: ${changed.join(", ")}`);
    const tmp = listDir(join(root, "tmp"));
    v.check(tmp.length === 0, "temp file left behind", () => `${label}: tmp/${tmp.join(" tmp/")}`);
  };

  // 1. One write bigger than the whole disk.
  const big = join(dir, "big.txt");
  writeFileSync(big, seal("big", "z".repeat(1536 * 1024)));
  await refused("publish 1.5 MB on a 1 MiB disk", ["publish", "keep", "--file", big]);

  // 2. The disk filled to the last byte by something else.
  const fill = openSync(join(mnt, "filler"), "w");
  let filled = 0;
  try {
    const block = Buffer.alloc(4096, 0x61);
    for (;;) filled += writeSync(fill, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fill);
  }
  await refused("publish on a full disk", ["publish", "keep", makePayload(r, "p", 200)]);
  await refused("publish --if-version on a full disk", ["publish", "keep", makePayload(r, "p", 200), "--if-version", "1"]);
  // The task is bigger than the chunks the start drops, so it cannot succeed even if it frees
  // them first; then the chunks must still be there (a start removes them only once its own
  // record is in place).
  await refused("start (64 KiB task) of a published run with 3 chunks", ["start", "stream", "t".repeat(64 * 1024)]);
  await refused("append on a full disk", ["append", "run", seal("run2", "w".repeat(100))]);
  await refused("publish to a new slot", ["publish", "fresh", makePayload(r, "f", 50)]);

  // 3. Reading still works on the full disk.
  const readOk = (label: string, res: RunResult, ok: boolean) => {
    tried.push(`${label}: exit ${res.code}`);
    const prob = stderrProblem(res);
    if (prob) v.fail("bad stderr", `${label}: ${prob}`);
    v.check(res.code === 0 && ok, "read failed on a full disk", () => `${label}: exit ${res.code}: ${short(res.stdout)} ${short(res.stderr)}`);
  };
  const wait = await run(["wait", "keep", "--timeout", "10"]);
  readOk("wait keep", wait, wait.stdout === keep);
  const status = await run(["status", "--json"]);
  readOk("status", status, status.code === 0 && JSON.parse(status.stdout).length === 3);
  const tail = await run(["tail", "stream"]);
  readOk("tail stream (3 chunks)", tail, [1, 2, 3].every((i) => tail.stdout.includes(seal(`chunk${i}`, "x".repeat(50)))));
  const gc = await run(["gc"]);
  readOk("gc", gc, true);

  // 4. Space freed: the next write goes through and the old record was intact all along.
  rmSync(join(mnt, "filler"));
  const after = makePayload(r, "after", 100);
  const pub = await run(["publish", "keep", after, "--json"]);
  tried.push(`publish after freeing space: exit ${pub.code}`);
  v.check(pub.code === 0 && JSON.parse(pub.stdout || "{}").version === 2 && payloadTag(JSON.parse(pub.stdout).result) === "after", "no recovery after space freed", () => `exit ${pub.code}: ${short(pub.stdout)} ${short(pub.stderr)}`);
  v.check(listDir(join(root, "tmp")).length === 0 && listDir(join(root, "locks")).length === 0, "leftovers", () => `tmp: ${listDir(join(root, "tmp"))} locks: ${listDir(join(root, "locks"))}`);

  return v.outcome(`${tried.length} operations on a 1 MiB tmpfs (filled with ${Math.round(filled / 1024)} KiB): failed writes refused cleanly, store unchanged, tmp/ empty, reads fine`, [["tried", tried.join("; ")]]);
}
