// Network filesystem stand-in: one backing directory mounted twice with bindfs (default
// caching: 1 s attribute and entry cache), "machine A" and "machine B" (see
// ../shared/notes/network-fs.md). A watch on one view never sees writes made through the
// other, and a reader can get a replaced file's new content cut to its old cached size: the
// NFS situation. Root only (bindfs, fuse3).
//
// 1. Lockstep: A publishes version i, B's `a2a wait --after-version i-1` (auto mode, which
//    must detect FUSE and poll) must return exactly version i with exactly its content.
// 2. Chase: A publishes back to back; B chases with --after-version, every version B returns
//    must carry exactly the content A wrote for it, and B must reach A's last version. A raw
//    reader on B counts the reads that fail a2a's record checks (caught torn reads) and the
//    ones that pass them but are wrong inside (corruption a2a would hand out: must be 0).
// 3. Writers on both views: A and B publish in turn; each publish must get the version after
//    the one the other just wrote (a writer that reads a stale or torn record under the lock
//    and writes on top of it loses an update).

import { existsSync, mkdirSync, rmdirSync, statfsSync } from "node:fs";
import { join } from "node:path";
import {
  a2a, type Ctx, commandExists, msLine, type Outcome, readerLine, scenarioDir, short, skip, startReader, stderrProblem,
  Verdict,
} from "./common";
import { makePayload, payloadCrc, rng } from "./payload";

const FUSE_MAGIC = 0x65735546;

export async function networkFs(ctx: Ctx): Promise<Outcome> {
  if (!ctx.isRoot) return skip("needs root for FUSE mounts (apt-get install -y bindfs fuse3; bindfs BACKING VIEW)");
  // Installing packages is the machine's owner's call (.ci/run does it), not a test run's.
  if (!commandExists("bindfs") || !commandExists("fusermount3")) return skip("bindfs or fusermount3 is not installed (Debian: apt-get install -y bindfs fuse3; .ci/run installs them)");
  if (!existsSync("/dev/fuse")) return skip("no /dev/fuse in this machine: FUSE mounts impossible");
  const dir = scenarioDir(ctx, "netfs");
  const backing = join(dir, "backing"), va = join(dir, "machineA"), vb = join(dir, "machineB");
  for (const d of [backing, va, vb]) mkdirSync(d, { recursive: true });
  const mounted: string[] = [];
  try {
    for (const view of [va, vb]) {
      const m = Bun.spawnSync(["bindfs", "--no-allow-other", backing, view], { stderr: "pipe" });
      if (m.exitCode !== 0) return skip(`bindfs failed: ${m.stderr.toString().trim()}`);
      mounted.push(view);
    }
    if (Number(statfsSync(vb).type) >>> 0 !== FUSE_MAGIC) return skip("the bindfs view does not report FUSE in statfs");
    return await overTwoViews(ctx, join(va, "store"), join(vb, "store"));
  } finally {
    for (const view of mounted) {
      if (Bun.spawnSync(["fusermount3", "-u", view]).exitCode !== 0) Bun.spawnSync(["fusermount3", "-uz", view]);
    }
    for (const d of [va, vb]) {
      try {
        rmdirSync(d);
      } catch {
        // still busy: left in the scratch directory
      }
    }
  }
}

async function overTwoViews(ctx: Ctx, storeA: string, storeB: string): Promise<Outcome> {
  const v = new Verdict();
  const r = rng(ctx.seed ^ 0x4e4653);
  const onA = (args: string[]) => a2a(ctx, args, { dir: storeA, limitMs: 60_000 });
  const onB = (args: string[]) => a2a(ctx, args, { dir: storeB, limitMs: 60_000 });
  const judged = (label: string, res: Awaited<ReturnType<typeof onA>>) => {
    const prob = stderrProblem(res);
    if (prob) v.fail("bad stderr", `${label}: ${prob}`);
    return res;
  };

  // 1. Lockstep handoffs.
  const lockRounds = ctx.short ? 12 : 150;
  const seenMs: number[] = [];
  let version = 0, handoffs = 0;
  for (let i = 1; i <= lockRounds; i++) {
    const payload = makePayload(r, `lock${i}`, 600);
    const waiter = onB(["wait", "n", "--after-version", String(version), "--json", "--timeout", "45"]);
    const pub = judged("publish on A", await onA(["publish", "n", payload, "--json"]));
    const t0 = performance.now();
    if (pub.code !== 0) {
      v.fail("publish failed", `exit ${pub.code}: ${short(pub.stderr)}`);
      await waiter;
      break;
    }
    const w = judged("wait on B", await waiter);
    seenMs.push(performance.now() - t0);
    const want = JSON.parse(pub.stdout).version;
    if (!v.check(w.code === 0, "publish not seen", () => `version ${want}: wait exit ${w.code}: ${short(w.stderr)}`)) break;
    const rec = JSON.parse(w.stdout);
    v.check(rec.version === want && rec.result === payload, "wrong record handed over", () => `expected version ${want} with its payload, got version ${rec.version}: ${short(rec.result)}`);
    version = want;
    handoffs++;
  }

  // 2. Chase: A publishes back to back, B follows; a raw reader on B watches for torn reads.
  const chaseN = ctx.short ? 40 : 400;
  const reader = startReader(ctx, storeB, ["n"], { monotonic: true, tag: "netfs" });
  const written = new Map<number, string>();
  let lastWritten = version, writerDone = false;
  const writer = (async () => {
    for (let i = 1; i <= chaseN; i++) {
      const payload = makePayload(r, `chase${i}`, 600);
      const pub = judged("publish on A", await onA(["publish", "n", payload, "--json"]));
      if (pub.code !== 0) {
        v.fail("publish failed", `exit ${pub.code}: ${short(pub.stderr)}`);
        break;
      }
      lastWritten = JSON.parse(pub.stdout).version;
      written.set(lastWritten, payloadCrc(payload));
    }
    writerDone = true;
  })();
  const seen: { version: number; crc: string }[] = [];
  let last = version;
  while (!writerDone || last < lastWritten) {
    const w = judged("wait on B", await onB(["wait", "n", "--after-version", String(last), "--json", "--timeout", "45"]));
    if (!v.check(w.code === 0, "chase stalled", () => `after version ${last}: exit ${w.code}: ${short(w.stderr)}`)) break;
    const rec = JSON.parse(w.stdout);
    v.check(rec.version > last, "wait returned an old version", () => `after ${last} got ${rec.version}`);
    seen.push({ version: rec.version, crc: payloadCrc(rec.result) });
    last = Math.max(last, rec.version);
  }
  await writer;
  const rs = await reader.stop();
  for (const s of seen) {
    v.check(written.get(s.version) === s.crc, "wrong content for a version", () => `version ${s.version}: B got content A did not write for it`);
  }
  v.check(rs.bad === 0, "a torn or wrong record passed a2a's checks", () => rs.samples.join(" | "));
  // A raw reader seeing an older version after a newer one is the cache's doing, not a2a's
  // (a2a's waiter above must never go back: that is checked); reported, not judged.

  // 3. Writers on both views, in turn: every publish must build on the other's.
  const turns = ctx.short ? 20 : 200;
  let lost = 0, expectVersion = last;
  const gotVersions: number[] = [];
  for (let i = 0; i < turns; i++) {
    const side = i % 2 ? "B" : "A";
    const pub = judged(`publish on ${side}`, await (side === "A" ? onA : onB)(["publish", "n", makePayload(r, `turn${i}`, 600), "--json"]));
    if (!v.check(pub.code === 0, "publish failed", () => `${side}: exit ${pub.code}: ${short(pub.stderr)}`)) continue;
    const got = JSON.parse(pub.stdout).version;
    gotVersions.push(got);
    expectVersion++;
    if (got !== expectVersion) {
      lost++;
      v.fail("lost update across machines", `publish ${i + 1} on ${side} got version ${got}, the other machine had just written ${expectVersion - 1}`);
      expectVersion = got;
    }
  }

  return v.outcome(
    `${handoffs}/${lockRounds} lockstep handoffs seen exactly; chase saw ${seen.length} of ${chaseN} versions up to the last; ${turns - lost}/${turns} alternating cross-view publishes built on the other's`,
    [
      ["lockstep: publish returned -> waiter on the other view returned", msLine(seenMs)],
      ["chase", `A wrote ${chaseN} versions back to back, B's waiter returned ${seen.length} of them (the others overwritten before B looked: allowed), every one with A's exact content`],
      ["raw reader on B", `${readerLine(rs)} (reads failing a2a's checks are the torn reads a2a retries)`],
      ["alternating writers", `versions ${gotVersions.slice(0, 12).join(",")}${gotVersions.length > 12 ? ",…" : ""}`],
    ],
  );
}
