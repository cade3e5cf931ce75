// In-process wake measurements: a waiter process (C inotify, bare fs.watch, or lib's
// waitSlots) and a publisher process (bench/fixtures/publisher.ts), both long-lived, on one
// fresh store per run. One trial:
//
//   1. the waiter reports "armed" (watch registered, check done, nothing pending);
//   2. the bench sleeps a random gap (so publishes do not land in phase with anything);
//   3. it tells the publisher to publish; the publisher takes T0 (CLOCK_MONOTONIC) right
//      before the timed step and reports it;
//   4. the waiter takes T1 once the content is in hand and reports it; sample = T1 - T0.
//
// The bench process itself only relays lines outside the timed interval. The first `warmup`
// trials of every run are dropped (the first wake of a fresh process is the cold path; its
// latency is kept separately as `cold`).

import { join } from "node:path";
import { Child } from "./proc";
import { makeStore, removeStore, slotsOf } from "./fixture";
import { randBetween } from "./stats";

const BENCH = join(import.meta.dir, "..");
export const FIXTURES = join(BENCH, "fixtures");

export type WaiterKind = "c" | "bare" | "ino" | "lib";

export interface WakeConfig {
  waiter: WaiterKind;
  publisher: "raw" | "lib";
  slots?: number; // records already in the store
  anyOf?: number; // lib waiter waits on this many names at once (--any); one is published
  waiterMode?: string; // lib waiter's mode other than "lib" (bench/fixtures/waiter.ts)
  env?: Record<string, string>; // extra env of the waiter (A2A_WATCH, A2A_POLL_MS)
  gapMs: [number, number]; // random pause between "armed" and the publish
}

export interface RunResult {
  samples: number[];
  publishMs: number[]; // T1 - T0 inside the publisher: what the timed step itself cost
  cold: number; // latency of the very first trial of the run
}

export interface Ctx {
  base: string; // where stores are created
  cWaiter?: string; // compiled inotify_wait, when gcc exists
  env: Record<string, string>; // clean environment for children (no A2A_*)
}

export function spawnWaiter(ctx: Ctx, kind: WaiterKind, root: string, args: string[] = [], extraEnv: Record<string, string> = {}): Child {
  const env = { ...ctx.env, ...extraEnv };
  if (kind === "c") {
    if (!ctx.cWaiter) throw new Error("no C waiter (gcc missing)");
    return new Child([ctx.cWaiter, slotsOf(root)], { env, label: "inotify_wait" });
  }
  const mode = kind === "bare" || kind === "ino" ? kind : args[0] ?? "lib";
  return new Child([process.execPath, join(FIXTURES, "waiter.ts"), mode, root, ...args.slice(1)], { env, label: `waiter ${mode}` });
}

export function spawnPublisher(ctx: Ctx, root: string): Child {
  return new Child([process.execPath, join(FIXTURES, "publisher.ts"), root], { env: ctx.env, label: "publisher" });
}

export async function wakeRun(ctx: Ctx, cfg: WakeConfig, trials: number, warmup: number): Promise<RunResult> {
  const root = makeStore(ctx.base, cfg.slots ?? 0, cfg.waiter);
  const waiterArgs = cfg.anyOf ? ["any", String(cfg.anyOf)] : cfg.waiterMode ? [cfg.waiterMode] : [];
  const waiter = spawnWaiter(ctx, cfg.waiter, root, waiterArgs, cfg.env);
  const pub = spawnPublisher(ctx, root);
  const res: RunResult = { samples: [], publishMs: [], cold: NaN };
  try {
    await pub.expect("ready");
    await waiter.expect("armed");
    for (let i = 0; i < trials + warmup; i++) {
      const name = cfg.anyOf ? `t${i}_${Math.floor(Math.random() * cfg.anyOf)}` : `w${i}`;
      await Bun.sleep(randBetween(cfg.gapMs[0], cfg.gapMs[1]));
      pub.send(`${cfg.publisher} ${name} ${i}`);
      const [, seq, t0, t1, bytes, ts] = await pub.expect("pub");
      const [, got, tw, info] = await waiter.expect("got");
      await waiter.expect("armed");
      const gotName = got.replace(/\.json$/, "");
      if (Number(seq) !== i || (gotName !== name && gotName !== String(i)) || (info !== "ok" && info !== bytes)) {
        throw new Error(`trial ${i}: published ${name} (${bytes} bytes), waiter reported ${got} ${info}`);
      }
      const lat = Number(tw) - Number(t0);
      if (i === 0) res.cold = lat;
      if (i >= warmup) {
        res.samples.push(lat);
        res.publishMs.push(Number(t1) - Number(ts)); // the whole publish: raw write + fsync + rename, or publishSlot()
      }
    }
  } finally {
    await Promise.all([waiter.stop(), pub.stop()]);
    removeStore(root);
  }
  return res;
}

// Waiter blocked on `names` names at once (all of them); the publisher renames all of them in
// one burst. Sample = from just before the last publish began to the waiter having all.
export async function burstAllRun(ctx: Ctx, names: number, trials: number, warmup: number): Promise<RunResult> {
  const root = makeStore(ctx.base, 0, "all");
  const waiter = spawnWaiter(ctx, "lib", root, ["all", String(names)]);
  const pub = spawnPublisher(ctx, root);
  const res: RunResult = { samples: [], publishMs: [], cold: NaN };
  try {
    await pub.expect("ready");
    for (let i = 0; i < trials + warmup; i++) {
      await waiter.expect("armed", 60_000);
      await Bun.sleep(randBetween(5, 15));
      pub.send(`burst raw a${i}_ ${names}`);
      const [, first, last] = await pub.expect("burst", 60_000);
      const [, seq, tw, info] = await waiter.expect("got", 60_000);
      if (Number(seq) !== i || info !== "ok") throw new Error(`burst trial ${i}: waiter reported ${seq} ${info}`);
      const lat = Number(tw) - Number(last);
      if (i === 0) res.cold = lat;
      if (i >= warmup) {
        res.samples.push(lat);
        res.publishMs.push(Number(last) - Number(first));
      }
      pub.send(`clean a${i}_ ${names}`);
      await pub.expect("cleaned", 60_000);
    }
  } finally {
    await Promise.all([waiter.stop(), pub.stop()]);
    removeStore(root);
  }
  return res;
}

export interface ThroughputResult {
  sent: number;
  received: number;
  bad: number;
  writerPerSec: number; // publishes/s as the writer saw them
  endToEndPerSec: number; // first publish start -> last wake
  latencies: number[]; // per message: publish start -> wake
}

// One writer publishing `count` slots back to back; a lib waiter waiting for each in order.
export async function throughputRun(ctx: Ctx, how: "raw" | "rawsync" | "lib", count: number): Promise<ThroughputResult> {
  const root = makeStore(ctx.base, 0, "tput");
  const waiter = spawnWaiter(ctx, "lib", root, ["seq", "b", String(count)]);
  const pub = spawnPublisher(ctx, root);
  try {
    await pub.expect("ready");
    await waiter.expect("armed");
    await Bun.sleep(20);
    pub.send(`burst ${how} b ${count}`);
    const [, first, , end] = await pub.expect("burst", 120_000);
    const [, json] = (await waiter.line(120_000)).split(/ (.*)/s);
    const d = JSON.parse(json) as { wakes: number[]; sent: number[]; bad: number };
    const lastWake = d.wakes[d.wakes.length - 1];
    return {
      sent: count,
      received: d.wakes.length,
      bad: d.bad,
      writerPerSec: count / ((Number(end) - Number(first)) / 1000),
      endToEndPerSec: count / ((lastWake - Number(first)) / 1000),
      latencies: d.wakes.map((w, i) => w - d.sent[i]),
    };
  } finally {
    await Promise.all([waiter.stop(), pub.stop()]);
    removeStore(root);
  }
}
