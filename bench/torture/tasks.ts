// Tasks: a work queue under kill -9 and SIGSTOP/SIGCONT (lib/tasks, in-process workers).
//
// 1. Adder: one process adds the task graph (N tasks with keys, ~15% depending on one or two
//    earlier tasks, ~3% poison) and is killed (-9) at random moments and restarted until it
//    finishes: afterwards there must be exactly one task per key, each whole (a task is its
//    version 1, written by link: present whole or absent).
// 2. Workers: 8 processes claim (waiting, 1 s leases) and finish tasks; poison ones they fail
//    each attempt. Meanwhile a chaos loop kills workers (-9, then restarts them) and stops
//    them (SIGSTOP for 0.3 to 2.5 s, often past their lease, then SIGCONT), until every task
//    is done or dead.
// Verdicts, from the raw chains on disk (every version file of every task) and the workers'
// output, none from timing:
// - every task is done or dead; done exactly once: one "done" version per done task, its
//   result naming the attempt that was current, and no worker saw done land for any other;
// - dead letters are exactly the tasks that used up their attempts (every attempt of the
//   round failed or expired) or whose dependency died; poison tasks are never done;
// - dependency order: every claim version of a task is later than the done version of
//   each of its dependencies;
// - fencing: no version of a task follows from a token of an older attempt (each done/fail
//   version ends the claim that was current in the version before it).

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { listTasks } from "../../lib/tasks/query";
import type { TaskRecord } from "../../lib/tasks/record";
import { type Ctx, type Outcome, scenarioDir, Verdict } from "./common";
import { plan } from "./fixtures/task-worker";
import { between, rng } from "./payload";

const WORKERS = 8;
const LEASE_SEC = 1;
const QUEUE = "torture";
const FIXTURE = join(import.meta.dir, "fixtures", "task-worker.ts");

interface Proc {
  p: Subprocess<"ignore", "pipe", "pipe">;
  out: Promise<string>;
  err: Promise<string>;
}

function spawn(args: string[]): Proc {
  const p = Bun.spawn({ cmd: ["bun", FIXTURE, ...args], stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  return { p, out: new Response(p.stdout).text(), err: new Response(p.stderr).text() };
}

export async function tasks(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const root = join(scenarioDir(ctx, "tasks"), "store");
  const n = ctx.short ? 300 : 2000;
  const r = rng(ctx.seed ^ 0x7a5c);
  const t0 = performance.now();

  // 1. The adder, killed and restarted.
  let adderKills = 0;
  for (let round = 0; ; round++) {
    const a = spawn(["add", root, QUEUE, String(n), String(ctx.seed)]);
    if (round < 3) {
      await Bun.sleep(between(r, 150, 600)); // picks the kill point
      if (a.p.exitCode === null) {
        a.p.kill(9);
        adderKills++;
      }
    }
    await a.p.exited;
    const out = await a.out;
    if (out.includes(`added ${n}`)) break;
    if (a.p.signalCode !== "SIGKILL") {
      v.fail("adder failed", `exit ${a.p.exitCode}: ${(await a.err).slice(0, 300)}`);
      return v.outcome("the adder failed", []);
    }
  }
  const addSecs = (performance.now() - t0) / 1000;
  const store = openStore({ dir: root, env: {} });
  const graph = plan(n, ctx.seed);
  const listed = await listTasks(store, { queue: QUEUE });
  const byKey = new Map(listed.map((t) => [t.key, t]));
  v.check(listed.length === n && byKey.size === n, "tasks lost or doubled by a killed adder", () => `${listed.length} tasks, ${byKey.size} keys, ${n} wanted`);
  const idOf = (i: number) => byKey.get(`k${i}`)?.id;

  // 2. Workers under chaos.
  const outputs: string[] = [];
  const errors: string[] = [];
  const workers: Proc[] = [];
  const start = (w: number) => (workers[w] = spawn(["work", root, QUEUE, `w${w}.${outputs.length + w}`, String(LEASE_SEC)]));
  const collect = async (pr: Proc) => {
    outputs.push(await pr.out);
    const e = await pr.err;
    if (e.trim()) errors.push(e.trim().split("\n").slice(0, 3).join(" | "));
  };
  for (let w = 0; w < WORKERS; w++) start(w);
  let kills = 0, stops = 0, longStops = 0;
  const stopped = new Set<number>();
  const limitMs = ctx.short ? 120_000 : 900_000;
  let finalCount = 0;
  for (;;) {
    await Bun.sleep(between(r, 40, 140)); // the chaos rate, not a wait for a condition
    const views = await listTasks(store, { queue: QUEUE });
    finalCount = views.filter((t) => t.state === "done" || t.state === "dead").length;
    if (finalCount === n) break;
    if (performance.now() - t0 > limitMs) {
      v.fail("did not finish", `${finalCount}/${n} tasks final after ${limitMs / 1000} s; states: ${JSON.stringify(countStates(views))}`);
      break;
    }
    const w = Math.floor(r() * WORKERS);
    if (stopped.has(w)) continue;
    const x = r();
    if (x < 0.2) {
      workers[w].p.kill(9);
      kills++;
      const old = workers[w];
      await old.p.exited;
      void collect(old);
      start(w);
    } else if (x < 0.6) {
      const ms = between(r, 300, 2500);
      if (ms > LEASE_SEC * 1000) longStops++;
      stops++;
      stopped.add(w);
      const pr = workers[w];
      pr.p.kill("SIGSTOP");
      setTimeout(() => {
        pr.p.kill("SIGCONT");
        stopped.delete(w);
      }, ms);
    }
  }
  // Let stopped workers resume, so a late write of theirs is part of what is judged.
  while (stopped.size) await Bun.sleep(50);
  await Bun.sleep(LEASE_SEC * 1000 + 200); // a resumed worker's late done/fail lands (or not) now
  for (const pr of workers) pr.p.kill(9);
  await Promise.all(workers.map(async (pr) => (await pr.p.exited, collect(pr))));
  await Promise.all(workers.map((pr) => pr.out));
  const runSecs = (performance.now() - t0) / 1000 - addSecs;
  for (const e of errors) v.fail("worker stderr", e);

  // Verdicts from the raw chains (and the derived states as lib reads them now).
  const finalViews = new Map((await listTasks(store, { queue: QUEUE })).map((t) => [t.key, t]));
  closeWatches(store);
  const lines = outputs.join("\n").split("\n").filter(Boolean).map((l) => l.split(" "));
  const doneSeen = new Map<string, string[]>(); // id -> attempts for which a worker saw done land
  let stale = 0, claimsSeen = 0;
  for (const [kind, id, attempt] of lines) {
    if (kind === "done") doneSeen.set(id, [...(doneSeen.get(id) ?? []), attempt]);
    if (kind === "stale") stale++;
    if (kind === "claimed") claimsSeen++;
  }
  const chains = new Map<string, TaskRecord[]>();
  const chain = (id: string) => {
    if (!chains.has(id)) {
      const dir = join(root, "tasks", QUEUE, id);
      const files = readdirSync(dir).filter((f) => /^\d{8}\.json$/.test(f)).sort();
      chains.set(id, files.map((f) => JSON.parse(readFileSync(join(dir, f), "utf8"))));
    }
    return chains.get(id)!;
  };
  let done = 0, deadPoison = 0, deadByDep = 0, deadByCrashes = 0, expiries = 0, versions = 0;
  const doneAt = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const id = idOf(i);
    if (!id) continue;
    for (const rec of chain(id)) if (rec.state === "done") doneAt.set(id, rec.updated_at);
  }
  for (let i = 0; i < n; i++) {
    const id = idOf(i);
    if (!id) continue;
    const c = chain(id);
    versions += c.length;
    const head = c[c.length - 1];
    const view = finalViews.get(`k${i}`)!;
    v.check(c.every((rec, k) => rec.version === k + 1), "chain not dense", () => `${id}: versions ${c.map((x) => x.version)}`);
    const dones = c.filter((rec) => rec.state === "done");
    const seen = doneSeen.get(id) ?? [];
    v.check(dones.length <= 1, "done twice", () => `${id}: ${dones.length} done versions`);
    v.check(seen.length <= 1, "two workers saw done land", () => `${id}: attempts ${seen}`);
    // Fencing: a version that ends a claim follows a version whose claim is that same attempt.
    for (let k = 1; k < c.length; k++) {
      const prev = c[k - 1], cur = c[k];
      if (prev.state === "claimed" && cur.state !== "claimed") {
        const endedBy = cur.state === "done" ? Number(cur.result!.split(":")[1]) : cur.attempts.at(-1)?.attempt;
        if (cur.state === "done" || cur.attempts.length > prev.attempts.length) {
          v.check(endedBy === prev.claim!.attempt, "an older attempt's token landed", () => `${id} v${cur.version}: ended attempt ${endedBy}, current was ${prev.claim!.attempt}`);
        }
      }
      if (cur.state === "claimed" && prev.state !== "claimed") {
        v.check(cur.attempt === prev.attempt + 1, "attempt numbers not consecutive", () => `${id} v${cur.version}`);
        for (const d of cur.after) {
          const at = doneAt.get(d.id);
          v.check(at !== undefined && at <= cur.updated_at, "dependency order violated", () => `${id} claimed at ${cur.updated_at}, dependency ${d.id} done at ${at}`);
        }
      }
    }
    expiries += head.attempts.filter((x) => x.outcome === "expired").length;
    if (head.state === "done") {
      done++;
      v.check(!graph[i].poison, "a poison task was done", () => id);
      const attempt = head.result!.split(":")[1];
      v.check(head.result!.startsWith(`${id}:`) && (seen.length === 0 || seen[0] === attempt), "result from the wrong attempt", () => `${id}: result ${head.result}, workers saw ${seen}`);
    } else if (view.state === "dead" || head.state === "dead") {
      const round = head.attempts.filter((x) => x.attempt > head.round_from);
      const exhausted = head.state === "dead" && round.length === head.max_attempts && round.every((x) => x.outcome === "failed" || x.outcome === "expired");
      const byDep = view.reason?.startsWith("dependency ") ?? false;
      v.check(exhausted || byDep, "dead without cause", () => `${id}: ${view.reason}`);
      v.check(seen.length === 0, "done seen on a dead task", () => id);
      if (byDep) {
        deadByDep++;
        v.check(graph[i].after.some((j) => { const d = finalViews.get(`k${j}`); return d?.state === "dead"; }), "dead by a dependency that is not dead", () => id);
      } else if (graph[i].poison) deadPoison++;
      else deadByCrashes++;
    } else v.fail("not final", `${id}: ${view.state}`);
    // Whoever used up its attempts is dead (not left ready or claimed).
    const spent = head.attempt - head.round_from >= head.max_attempts && head.state !== "done" && head.state !== "claimed";
    if (spent) v.check(head.state === "dead", "attempts used up but not dead", () => id);
  }
  const poison = graph.filter((t) => t.poison).length;
  const poisonDead = graph.filter((t, i) => t.poison && finalViews.get(`k${i}`)?.state === "dead").length;
  v.check(poisonDead === poison, "a poison task is not dead", () => `${poisonDead} of ${poison} dead`);
  return v.outcome(
    `${n} tasks: ${done} done once each, ${deadPoison + deadByDep + deadByCrashes} dead (${deadPoison} poison, ${deadByDep} by a dependency, ${deadByCrashes} by crashes); ${kills} kills, ${stops} stops`,
    [
      ["adder", `${adderKills} kill -9 and restarts; ${n} tasks, one per key, in ${addSecs.toFixed(1)} s`],
      ["workers", `${WORKERS} processes, ${LEASE_SEC} s leases; ${kills} kill -9, ${stops} SIGSTOP (${longStops} past the lease)`],
      ["claims", `${claimsSeen} claims reported, ${expiries} lease expiries settled, ${stale} stale tokens refused (ECONFLICT)`],
      ["chains", `${versions} versions over ${n} tasks (${(versions / n).toFixed(1)} a task)`],
      ["throughput under chaos", `${(n / runSecs).toFixed(0)} tasks/s final in ${runSecs.toFixed(1)} s`],
    ],
  );
}

function countStates(views: { state: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of views) out[t.state] = (out[t.state] ?? 0) + 1;
  return out;
}
