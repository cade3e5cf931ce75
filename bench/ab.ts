// `bun bench/ab.ts OLD NEW [--runs N] [--dir STORE] -- ARGS...`: a paired A/B of two a2a binaries
// on one command, for a change whose cost is smaller than the spread between two bench runs:
// the two are spawned alternately (so a busy moment hits both alike), N times each after a
// warm-up, and the medians of wall time and CPU time (user + system) are printed side by side.
// The store is --dir (e.g. one filled with 10,000 slots), else a fresh empty one.
//
//   git worktree add /tmp/old REV && (cd /tmp/old && bun run build) && bun run build
//   bun bench/ab.ts /tmp/old/dist/a2a dist/a2a -- status --json

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep < 2) {
  console.error("usage: bun bench/ab.ts OLD NEW [--runs N] [--dir STORE] -- ARGS...");
  process.exit(2);
}
const [oldBin, newBin, ...opts] = argv.slice(0, sep).map((a, i) => (i < 2 ? resolve(a) : a));
const cmd = argv.slice(sep + 1);
const opt = (name: string) => (opts.includes(name) ? opts[opts.indexOf(name) + 1] : undefined);
const runs = Number(opt("--runs") ?? 300);
const dir = opt("--dir") ?? mkdtempSync(join(tmpdir(), "a2a-ab-"));
const env = { ...process.env, A2A_DIR: dir };

function once(bin: string): [number, number] {
  const t0 = performance.now();
  const r = Bun.spawnSync([bin, ...cmd], { env, stdout: "ignore", stderr: "ignore" });
  const cpu = r.resourceUsage ? (Number(r.resourceUsage.cpuTime.user) + Number(r.resourceUsage.cpuTime.system)) / 1000 : NaN;
  return [performance.now() - t0, cpu];
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const bins = [oldBin, newBin];
for (let i = 0; i < Math.min(10, runs); i++) bins.forEach(once);
const wall: number[][] = [[], []];
const cpu: number[][] = [[], []];
for (let i = 0; i < runs; i++) {
  bins.forEach((b, j) => {
    const [w, c] = once(b);
    wall[j].push(w);
    cpu[j].push(c);
  });
}
const ratio = (j: number, xs: number[][]) => (median(xs[j]) / median(xs[0])).toFixed(3);
console.log(`a2a ${cmd.join(" ")}  (${runs} alternated runs each, store ${dir})`);
for (const [j, b] of bins.entries()) {
  console.log(`  ${j ? "new" : "old"} ${b}: wall p50 ${median(wall[j]).toFixed(2)} ms (${ratio(j, wall)}x), CPU p50 ${median(cpu[j]).toFixed(2)} ms (${ratio(j, cpu)}x)`);
}
