// `bun run torture`: a program that tries hard to make a2a lose or corrupt data.
//
//   bun bench/torture.ts [--short] [--only crash,hostile,...] [--seed N] [--keep] [--verbose]
//
// --short is the CI form (under ~3 minutes on 2 cores); the default is the long form, run by
// hand. Each scenario prints what it tried, then PASS/FAIL/SKIP with its counts and figures;
// the exit status is 1 if any scenario failed. Verdicts never depend on timing: time limits
// are safety nets that report a hang. The binary under test is $A2A_BIN (default dist/a2a),
// built from the sources when it is missing or older than them. Scenarios needing root
// (tmpfs, bindfs, dropping privileges) print SKIP with the reason elsewhere.

import { mkdtempSync, rmSync } from "node:fs";
import { ensureBinary } from "../tests/build";
import { BIN } from "../tests/harness/run";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Ctx, Outcome } from "./torture/common";
import { crash } from "./torture/crash";
import { contention } from "./torture/contention";
import { clockSkew } from "./torture/clockskew";
import { diskFull } from "./torture/diskfull";
import { networkFs } from "./torture/netfs";
import { hostile } from "./torture/hostile";
import { hostileStore } from "./torture/hostile-store";
import { sharedStore } from "./torture/shared-store";
import { pgRoles } from "./torture/pg-roles";
import { mcp } from "./torture/mcp";
import { rewind } from "./torture/rewind";
import { tasks } from "./torture/tasks";
import { hostileMember } from "./torture/hostile-member";

const SCENARIOS: { name: string; what: string; run: (ctx: Ctx) => Promise<Outcome> }[] = [
  { name: "crash", what: "kill -9 writers (publish, start, append, a lib-level publish loop) at random points while a reader decodes every read", run: crash },
  { name: "contention", what: "8 processes doing compare-and-set read-modify-write on one slot; 8 processes starting, publishing, appending and clearing own and shared slots", run: contention },
  { name: "clockskew", what: "compare-and-set by writers whose clocks are 10 s apart (faketime), with a control; locks dated an hour ahead or left by a dead holder, met by a publish and by gc on skewed hosts", run: clockSkew },
  { name: "diskfull", what: "a store on a 1 MiB tmpfs: publish, start, append when the disk fills", run: diskFull },
  { name: "netfs", what: "one store through two bindfs views (NFS stand-in): writer on one, auto-mode waiter and a raw reader on the other; writers on both", run: networkFs },
  { name: "hostile", what: "fuzzed names and payloads, garbage and foreign files in the store, wrong permissions", run: hostile },
  { name: "hostile-store", what: "publishers, waiters, mail, topics and task workers at work while a planter plants symlinks out of the store, FIFOs, devices, dirs for files, files for dirs, garbage, sparse giants and foreign owners at the names a2a is about to use", run: hostileStore },
  { name: "shared-store", what: "three OS users on a store made with init --shared, one hostile: she renames inboxes, new/, topics and their parents away, deletes and appends to others' files, replaces and plants policies and session records, and forges senders while the others mail, publish and run their prompt hooks", run: sharedStore },
  { name: "pg-roles", what: "a member role on a PostgreSQL store, with and without row-level security, deletes, rewrites, appends to and plants blobs, swaps attachments and deletes send keys while another mails attachments with keyed retries; then runs gc two hours ahead", run: pgRoles },
  { name: "rewind", what: "a waiter chasing with --after-version across a clear and across a TTL expiry (versions must never go backwards)", run: rewind },
  { name: "tasks", what: "8 task workers under kill -9 and SIGSTOP/SIGCONT on a task graph added by an adder killed mid-way: done exactly once, dead letters exactly the exhausted, dependency order, fencing", run: tasks },
  { name: "hostile-member", what: "a member against another's attachments and edit guards: blobs deleted, replaced, planted and gc'd on a shared directory store; every side door of the edit guards (links, link/.., nested repositories under A2A_REPO, big input, patch headers, origins, merge, cherry-pick, push)", run: hostileMember },
  { name: "mcp", what: "malformed JSON-RPC, unknown tools, wrong argument types, disconnect mid-wait, fds and RSS over many waits", run: mcp },
];

const ROOT = join(import.meta.dir, "..");

function parseArgs(argv: string[]) {
  const o = { short: false, only: undefined as string[] | undefined, seed: Date.now() % 1_000_000, keep: false, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--short") o.short = true;
    else if (a === "--keep") o.keep = true;
    else if (a === "--verbose" || a === "-v") o.verbose = true;
    else if (a === "--only") o.only = (argv[++i] ?? "").split(",");
    else if (a === "--seed") o.seed = Number(argv[++i]);
    else {
      console.log(`usage: bun bench/torture.ts [--short] [--only ${SCENARIOS.map((s) => s.name).join(",")}] [--seed N] [--keep] [--verbose]`);
      process.exit(a === "--help" || a === "-h" ? 0 : 2);
    }
  }
  for (const n of o.only ?? []) {
    if (!SCENARIOS.some((s) => s.name === n)) {
      console.error(`torture: unknown scenario ${JSON.stringify(n)}: use ${SCENARIOS.map((s) => s.name).join(", ")}`);
      process.exit(2);
    }
  }
  return o;
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const bin = BIN;
  ensureBinary(bin, console.log);
  const work = mkdtempSync(join(tmpdir(), "a2a-torture-"));
  const ctx: Ctx = {
    bin, repo: ROOT, short: o.short, seed: o.seed, work,
    isRoot: process.getuid?.() === 0,
    verbose: o.verbose,
    log: (line) => console.log(line),
  };
  const version = Bun.spawnSync([bin, "--version"]).stdout.toString().trim();
  console.log(`a2a torture, ${o.short ? "short" : "long"} form: binary ${bin} (${version}), seed ${o.seed} (--seed ${o.seed} replays the same choices), scratch ${work}`);
  const results: { name: string; outcome: Outcome; secs: number }[] = [];
  for (const s of SCENARIOS) {
    if (o.only && !o.only.includes(s.name)) continue;
    console.log(`\n== ${s.name}: ${s.what}`);
    const t0 = performance.now();
    let outcome: Outcome;
    try {
      outcome = await s.run(ctx);
    } catch (err) {
      outcome = { status: "FAIL", summary: "the scenario itself threw", figures: [], failures: [String((err as Error)?.stack ?? err)] };
    }
    const secs = (performance.now() - t0) / 1000;
    results.push({ name: s.name, outcome, secs });
    console.log(`${outcome.status} ${s.name}: ${outcome.summary} (${secs.toFixed(1)} s)`);
    for (const [k, val] of outcome.figures) console.log(`    ${k}: ${val}`);
    for (const f of outcome.failures) console.log(`    ! ${f}`);
  }
  console.log("\n== summary");
  for (const r of results) console.log(`${r.outcome.status.padEnd(4)}  ${r.name.padEnd(10)}  ${r.secs.toFixed(1).padStart(6)} s  ${r.outcome.summary}`);
  const failed = results.some((r) => r.outcome.status === "FAIL");
  if (o.keep || failed) console.log(`scratch kept for inspection: ${work}`);
  else rmSync(work, { recursive: true, force: true });
  return failed ? 1 : 0;
}

process.exit(await main());
