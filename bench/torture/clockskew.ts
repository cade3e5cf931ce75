// Clock skew: writers whose clocks disagree, on one store, as NFS clients whose clocks differ
// are. Made with faketime (Debian's faketime package): libfaketime shifts what a process
// reads of the clock, not the times the kernel (or a file server) stamps on files, which is
// what lib/fs/lock.ts must judge a lock's age by.
//
// 0. faketime works on the binary: a publish under `faketime -f +10s` records a time 10 s
//    ahead (else every figure below would prove nothing: FAIL, not PASS).
// A. Compare-and-set under skew: the race of contention.ts (A) with 4 workers, two of them
//    10 s ahead. The final value must list every successful call: 0 lost updates. The control
//    (the same race, no skew) runs first and is judged the same way.
// B. A lock from the future: the lock directory of a slot dated an hour ahead (its holder was
//    killed, then the clock was stepped back). A publish of that slot must succeed instead of
//    failing after 30 s ("stayed locked"); gc must remove such a lock of another slot.
// C. A host an hour ahead runs gc while a lock is fresh: gc must leave it (it is a live
//    holder's as far as anyone can tell). A writer an hour behind meets a lock its dead
//    holder left a minute ago: its publish must succeed.

import { existsSync, mkdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { a2a, type Ctx, type Outcome, scenarioDir, short, skip, stderrProblem, Verdict } from "./common";
import { casRace } from "./contention";

const AHEAD = ["faketime", "-f", "+10s"];

export async function clockSkew(ctx: Ctx): Promise<Outcome> {
  if (!Bun.which("faketime")) return skip("faketime is not installed (Debian package faketime; .ci/run installs it)");
  const v = new Verdict();
  const dir = scenarioDir(ctx, "clockskew");
  const probe = await a2a(ctx, ["publish", "probe", "x", "--json"], { dir: join(dir, "probe"), prefix: AHEAD });
  const shift = probe.code === 0 ? JSON.parse(probe.stdout).updated_at - Date.now() / 1000 : NaN;
  if (!v.check(shift > 8 && shift < 12, "faketime did not shift the binary's clock", () => `publish under faketime +10s recorded a time ${shift.toFixed(1)} s from ours: ${short(probe.stderr)}`)) {
    return v.outcome("faketime has no effect on the binary: nothing judged", []);
  }
  const perWorker = ctx.short ? 15 : 70;
  const control = await casRace(ctx, v, join(dir, "control"), { workers: 4, perWorker });
  const skewed = await casRace(ctx, v, join(dir, "skewed"), { workers: 4, perWorker, prefix: (w) => (w % 2 ? AHEAD : []) });
  const locks = await staleLocks(ctx, v, join(dir, "locks"));
  return v.outcome(`10 s skew: ${skewed.wins} successful CAS calls, ${skewed.lost} lost (control without skew: ${control.wins}, ${control.lost} lost); ${locks}`, [
    ["control, no skew", control.summary],
    ["two of four writers 10 s ahead", skewed.summary],
    ...skewed.figures,
  ]);
}

const HOUR = 3600;

// Makes slot `name`'s lock directory, dated `offsetSec` from now (as a dead holder leaves it).
function plantLock(root: string, name: string, offsetSec: number): string {
  const p = join(root, "locks", `${name}.lock`);
  mkdirSync(p, { recursive: true });
  const t = Date.now() / 1000 + offsetSec;
  utimesSync(p, t, t);
  return p;
}

async function staleLocks(ctx: Ctx, v: Verdict, root: string): Promise<string> {
  const init = await a2a(ctx, ["publish", "seed", "x"], { dir: root });
  v.check(init.code === 0, "setup", () => short(init.stderr));
  const publish = async (name: string, prefix: string[] = []) => {
    const r = await a2a(ctx, ["publish", name, "after"], { dir: root, prefix, limitMs: 60_000 });
    const prob = stderrProblem(r);
    if (prob) v.fail("bad stderr", `publish ${name}: ${prob}`);
    return r;
  };
  plantLock(root, "future", HOUR);
  const fut = await publish("future");
  v.check(fut.code === 0, "a lock from the future blocked a publish", () => `exit ${fut.code}: ${short(fut.stderr)}`);

  plantLock(root, "behind", -60);
  const behind = await publish("behind", ["faketime", "-f", "-1h"]);
  v.check(behind.code === 0, "a writer an hour behind waited out a dead holder's lock", () => `exit ${behind.code}: ${short(behind.stderr)}`);

  const gcFuture = plantLock(root, "gcfuture", HOUR);
  const fresh = plantLock(root, "fresh", 0);
  const gc = await a2a(ctx, ["gc"], { dir: root, prefix: ["faketime", "-f", "+1h"] });
  v.check(gc.code === 0, "gc failed", () => short(gc.stderr));
  v.check(!existsSync(gcFuture), "gc kept a lock from the future", () => gcFuture);
  v.check(existsSync(fresh), "gc on a host an hour ahead removed a fresh lock", () => fresh);
  return `lock an hour ahead: publish exit ${fut.code}, gc ${existsSync(gcFuture) ? "kept" : "removed"} it; writer an hour behind: exit ${behind.code}; gc an hour ahead ${existsSync(fresh) ? "left" : "REMOVED"} a fresh lock`;
}
