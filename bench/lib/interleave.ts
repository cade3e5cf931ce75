// Runs measurement methods in interleaved rounds, so slow drifts of a shared, noisy machine
// (other jobs starting, thermal or host throttling) spread over every method alike instead of
// landing on whichever ran last. Each round visits every method once, in a fresh random
// order, and asks it for a block of trials; a method's samples are the union of its blocks.
// A method that throws is reported and skipped from then on; the others go on.

import { shuffle } from "./stats";

export interface Block {
  series: Record<string, number[]>; // named sample series (ms), warm-up already dropped
  cold?: number; // the first trial of the block, when it is a fresh process's first wake
}

export interface Method {
  id: string;
  n: number; // samples wanted in total
  block(trials: number): Promise<Block>;
}

export interface Collected {
  series: Record<string, number[]>; // key: "<method id>" for the main series, "<id>:<name>" for others
  cold: Record<string, number[]>;
  errors: Record<string, string>;
}

export async function interleave(methods: Method[], rounds: number, out: Collected, log: (s: string) => void): Promise<void> {
  const done = new Map<string, number>();
  for (let r = 0; r < rounds; r++) {
    for (const m of shuffle(methods)) {
      if (out.errors[m.id]) continue;
      const have = done.get(m.id) ?? 0;
      const want = Math.ceil((m.n - have) / (rounds - r));
      if (want <= 0) continue;
      try {
        const b = await m.block(want);
        for (const [name, xs] of Object.entries(b.series)) {
          const key = name === "main" ? m.id : `${m.id}:${name}`;
          (out.series[key] ??= []).push(...xs);
        }
        if (b.cold !== undefined && Number.isFinite(b.cold)) (out.cold[m.id] ??= []).push(b.cold);
        done.set(m.id, have + (b.series.main?.length ?? want));
      } catch (e) {
        out.errors[m.id] = (e as Error).message.split("\n")[0];
        log(`  ! ${m.id} failed: ${out.errors[m.id]}`);
      }
    }
    log(`  round ${r + 1}/${rounds} done`);
  }
}
