// Rewind: a consumer that chases a slot with `a2a wait NAME --after-version V` (the documented
// way to wait for the next publish, also agent_wait's after_version) must see the next publish
// whatever happened to the slot in between. A clear or an expiry must not rewind the version
// (docs/PROTOCOL.md §4: they leave a tombstone carrying it), or a publish after either
// would carry a version the chaser has "already seen" and its wait would miss it.
//
//   1. publish x twice (version 2); a waiter with --after-version 2; clear x; publish x.
//   2. publish y twice with --ttl 1s (version 2); a waiter with --after-version 2; the record
//      expires; publish y.
// Each waiter has an 8 s safety limit; a correct store wakes it at the publish.

import { join } from "node:path";
import { a2a, type Ctx, finish, type Outcome, scenarioDir, short, spawnA2A, Verdict } from "./common";

export async function rewind(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const store = join(scenarioDir(ctx, "rewind"), "store");
  const run = (args: string[]) => a2a(ctx, args, { dir: store });
  const tried: string[] = [];

  const chase = async (label: string, name: string, setup: string[][], between: () => Promise<void>) => {
    for (const args of setup) await run(args);
    const waiter = spawnA2A(ctx, ["wait", name, "--after-version", "2", "--timeout", "8", "--json"], { dir: store });
    const waiting = finish(waiter, performance.now(), 30_000);
    await between();
    const pub = await run(["publish", name, `after ${label}`, "--json"]);
    const w = await waiting;
    const pv = pub.code === 0 ? JSON.parse(pub.stdout).version : undefined;
    const got = w.code === 0 ? JSON.parse(w.stdout) : undefined;
    tried.push(`${label}: publish got version ${pv}, the waiter (after version 2) ${got ? `woke with ${short(got.result)}` : `exited ${w.code}`}`);
    v.check(got?.result === `after ${label}`, "publish missed by an --after-version waiter", () =>
      `after ${label} the publish got version ${pv}, not above the 2 the waiter had seen; the waiter ${w.code === 124 ? "timed out" : `exited ${w.code}`} (the version went backwards after ${label})`);
  };

  await chase("clear", "x", [["publish", "x", "one"], ["publish", "x", "two"]], async () => {
    await run(["clear", "x"]);
  });
  await chase("expiry", "y", [["publish", "y", "one", "--ttl", "1s"], ["publish", "y", "two", "--ttl", "1s"]], async () => {
    await Bun.sleep(1200); // the condition is time itself: the record's TTL running out
    const st = await run(["status", "y", "--json"]);
    v.check(st.stdout.trim() === "[]", "setup", () => `y not expired after its TTL: ${short(st.stdout)}`);
  });
  return v.outcome(`${tried.length} chases across a clear and an expiry`, [["tried", tried.join("; ")]]);
}
