// Crash: kill -9 writers at random points and prove nothing is lost or mangled.
//
// Two slots: "p" (publish only) and "s" (start / append / publish: a stream with chunks).
// Each round starts one writer and kills it with SIGKILL after a random delay:
//   - `a2a publish p`, `a2a publish s`, `a2a start s`, `a2a append s` (delay uniform over 2.5x
//     the command's measured run time, so kills land in start-up, lock, write and exit alike,
//     and some writers finish first);
//   - a lib-level writer looping publishSlot on "p" (killed 0-250 ms after it is loaded, so
//     the kill lands inside publishSlot nearly every time).
// A writer that exited 0 before the kill is a success: its version and content (or a later
// version) must be on disk from then on. After every kill, a recovery writer (not killed) must
// succeed; its time is the price of the dead writer's stale lock. A reader process decodes
// every read of both slots (and every chunk they count) during the whole run.
// At the end: leftovers in tmp/ and locks/ must belong to killed writers, and gc (after the
// files age past their stale limits) must leave both directories empty.

import { readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { chunkFile } from "../../lib/fs/paths";
import { openStore } from "../../lib/engine/open";
import {
  a2a, type Ctx, finish, listDir, ms, msLine, type Outcome, readerLine, readRecordFile, recordProblem, type RunResult,
  scenarioDir, short, spawnA2A, startReader, stderrProblem, Verdict,
} from "./common";
import { between, makePayload, payloadCrc, payloadTag, pick, rng, type Rand } from "./payload";

type Op = "publish-p" | "lib-p" | "publish-s" | "start-s" | "append-s";
const OPS: Op[] = ["publish-p", "publish-p", "publish-p", "lib-p", "lib-p", "publish-s", "start-s", "append-s", "append-s", "append-s", "append-s"];

interface SlotModel {
  okVersion: number; // highest version a success reported
  published: Map<number, string>; // version -> crc of a successful publish
  chunks: { startedAt: number; n: number; crc: string }[]; // successful appends
}

export async function crash(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const root = join(scenarioDir(ctx, "crash"), "store");
  const store = openStore({ dir: root, env: {} });
  const r = rng(ctx.seed ^ 0xc4a54);
  const rounds = ctx.short ? 40 : 1000;
  const model: Record<"p" | "s", SlotModel> = {
    p: { okVersion: 0, published: new Map(), chunks: [] },
    s: { okVersion: 0, published: new Map(), chunks: [] },
  };
  const killedPids = new Set<number>();
  const recoveryMs: number[] = [];
  let killed = 0, finishedFirst = 0, libAcks = 0, exit4 = 0;

  // Absorb a success: what it reported must be there from now on.
  const absorb = (slot: "p" | "s", op: string, out: string, payload: string) => {
    let rec: any;
    try {
      rec = JSON.parse(out);
    } catch {
      return v.fail("unparsable --json output", `${op}: ${short(out)}`);
    }
    const m = model[slot];
    m.okVersion = Math.max(m.okVersion, rec.version);
    if (op.startsWith("publish")) m.published.set(rec.version, payloadCrc(payload));
    if (op === "append") m.chunks.push({ startedAt: rec.started_at, n: rec.chunks, crc: payloadCrc(payload) });
  };

  // The slot file as it is now must hold every success so far, whole.
  const verify = (slot: "p" | "s", when: string) => {
    const got = readRecordFile(join(root, "slots", `${slot}.json`));
    if (got.kind !== "ok") return v.fail("slot unreadable", `${slot} ${when}: ${got.kind}`);
    const rec = got.record;
    const m = model[slot];
    const prob = recordProblem(rec, slot);
    if (prob) v.fail("corrupt record", `${slot} ${when}: ${prob}`);
    v.check(rec.version >= m.okVersion, "lost publish", () => `${slot} ${when}: on disk version ${rec.version}, but version ${m.okVersion} was reported written`);
    const crc = m.published.get(rec.version);
    if (crc !== undefined && rec.state === "done") {
      v.check(payloadCrc(rec.result ?? "") === crc, "wrong content", () => `${slot} ${when}: version ${rec.version} holds other content than the publish that reported it`);
    }
    for (let n = 1; n <= rec.chunks; n++) {
      const chunk = readRecordText(chunkFile(store, slot, n));
      if (chunk === undefined) {
        v.fail("counted chunk missing", `${slot} ${when}: record version ${rec.version} (${rec.state}) counts ${rec.chunks} chunks, chunk ${n} is gone`);
        break;
      }
      if (payloadTag(chunk) === undefined) v.fail("corrupt chunk", `${slot} chunk ${n}: ${short(chunk)}`);
    }
    for (const c of m.chunks) {
      if (c.startedAt !== rec.started_at || c.n > rec.chunks) continue;
      const chunk = readRecordText(chunkFile(store, slot, c.n));
      v.check(chunk !== undefined && payloadCrc(chunk) === c.crc, "lost chunk", () => `${slot} ${when}: chunk ${c.n} of the current run differs from the append that reported it`);
    }
  };

  // Seed both slots and measure how long an unkilled publish takes (kill points spread over it).
  const durations: number[] = [];
  for (let i = 0; i < 5; i++) {
    const text = makePayload(r, `seed.${i}`, 200);
    const res = await a2a(ctx, ["publish", i % 2 ? "s" : "p", text, "--json"], { dir: root });
    if (res.code !== 0) return v.fail("seeding failed", `exit ${res.code}: ${short(res.stderr)}`), v.outcome("could not seed", []);
    absorb(i % 2 ? "s" : "p", "publish", res.stdout, text);
    durations.push(res.ms);
  }
  const runMs = durations.sort((a, b) => a - b)[2];
  ctx.log(`  crash: ${rounds} rounds; an unkilled publish takes ~${ms(runMs)}, so CLI kills land at 0-${ms(runMs * 2.5)}`);

  const reader = startReader(ctx, root, ["p", "s"], { monotonic: true, tag: "crash" });
  for (let round = 1; round <= rounds; round++) {
    const op = pick(r, OPS);
    const slot = op.endsWith("-p") ? "p" : "s";
    let wasKilled: boolean;
    if (op === "lib-p") {
      const res = await killLibWriter(ctx, root, r, round);
      killedPids.add(res.pid);
      wasKilled = res.killed;
      if (res.error) v.fail("lib writer failed", res.error);
      for (const line of res.acks) {
        const [, ver, crc] = line.split(" ");
        model.p.okVersion = Math.max(model.p.okVersion, Number(ver));
        model.p.published.set(Number(ver), crc);
        libAcks++;
      }
    } else {
      const verb = op.split("-")[0];
      const payload = makePayload(r, `r${round}`, 400);
      const args = verb === "start" ? ["start", slot, `round ${round}`, "--json"] : [verb, slot, payload, "--json"];
      const p = spawnA2A(ctx, args, { dir: root });
      killedPids.add(p.pid);
      const t0 = performance.now();
      const delay = between(r, 0, runMs * 2.5);
      const timer = setTimeout(() => p.kill(9), delay);
      const res = await finish(p, t0);
      clearTimeout(timer);
      wasKilled = res.signal === "SIGKILL";
      if (!wasKilled) {
        if (res.code === 0) absorb(slot, verb, res.stdout, payload);
        else if (res.code === 4 && verb === "append") exit4++;
        else v.fail("writer failed on its own", `${args[0]} ${slot}: exit ${res.code ?? res.signal}: ${short(res.stderr)}`);
        const prob = stderrProblem(res);
        if (prob) v.fail("bad stderr", `${verb} ${slot}: ${prob}`);
      }
    }
    if (wasKilled) killed++;
    else finishedFirst++;
    if (ctx.verbose) ctx.log(`    round ${round}: ${op} ${wasKilled ? "killed" : "finished before the kill"}`);
    else if (round % 100 === 0) ctx.log(`  crash: ${round}/${rounds} rounds, ${killed} killed, ${v.failed ? "FAILURES so far" : "all intact so far"}`);
    verify(slot, `after round ${round} (${op}${wasKilled ? ", killed" : ""})`);
    if (!wasKilled) continue;

    // Recovery: the next writer must get through the dead writer's lock and leftovers.
    const before = readRecordFile(join(root, "slots", `${slot}.json`));
    const verb = slot === "p" || r() < 0.2 ? "publish" : "start";
    const payload = makePayload(r, `rec${round}`, 400);
    const res: RunResult = await a2a(ctx, verb === "start" ? ["start", slot, "recovery", "--json"] : ["publish", slot, payload, "--json"], { dir: root, limitMs: 90_000 });
    recoveryMs.push(res.ms);
    if (res.code !== 0) {
      v.fail("recovery writer failed", `${verb} ${slot} after round ${round}: ${res.hung ? "hung" : `exit ${res.code ?? res.signal}`}: ${short(res.stderr)}`);
      continue;
    }
    absorb(slot, verb, res.stdout, payload);
    const got = JSON.parse(res.stdout).version;
    if (before.kind === "ok") {
      v.check(got === before.record.version + 1, "version skipped", () => `${verb} ${slot} after round ${round}: version ${got}, the record before it was ${before.record.version}`);
    }
    verify(slot, `after recovery ${round}`);
  }
  const rs = await reader.stop();
  v.check(rs.torn === 0 && rs.bad === 0, "reader saw a partial or corrupt record", () => rs.samples.join(" | "));
  v.check(rs.regress === 0, "reader saw a version go back", () => rs.samples.join(" | "));
  v.check(rs.chunkMissing === 0, "reader saw a counted chunk missing", () => rs.samples.join(" | "));

  // Leftovers: temp files of killed writers only; gc removes them and stale locks once aged.
  const tmpLeft = listDir(join(root, "tmp"));
  const locksLeft = listDir(join(root, "locks"));
  for (const f of tmpLeft) {
    v.check(killedPids.has(Number(f.split(".")[0])), "temp file of a live or finished writer left", () => `tmp/${f}`);
  }
  const gc1 = await a2a(ctx, ["gc", "--json"], { dir: root });
  if (gc1.code !== 0) v.fail("gc failed", short(gc1.stderr));
  const afterGc1 = { tmp: listDir(join(root, "tmp")).length, locks: listDir(join(root, "locks")).length };
  const aged = Date.now() / 1000 - 2 * 3600;
  for (const d of ["tmp", "locks"]) for (const f of listDir(join(root, d))) utimesSync(join(root, d, f), aged, aged);
  const gc2 = await a2a(ctx, ["gc", "--json"], { dir: root });
  if (gc2.code !== 0) v.fail("gc failed", short(gc2.stderr));
  const tmpEnd = listDir(join(root, "tmp")), locksEnd = listDir(join(root, "locks"));
  v.check(tmpEnd.length === 0 && locksEnd.length === 0, "gc left files", () => `tmp: ${tmpEnd.join(" ")} locks: ${locksEnd.join(" ")}`);
  verify("p", "after gc");
  verify("s", "after gc");

  const slowRecoveries = recoveryMs.filter((x) => x > 1000).length;
  return v.outcome(
    `${rounds} rounds: ${killed} writers killed mid-run, ${finishedFirst} finished first; ${model.p.published.size + model.s.published.size} reported publishes and ${model.s.chunks.length} reported appends all intact`,
    [
      ["kills", `${killed} killed (lib writer acknowledged ${libAcks} publishes before its kills), ${finishedFirst} exited before the kill (${exit4} appends refused with exit 4: run already published)`],
      ["reader", readerLine(rs)],
      ["recovery writer after a kill", `${msLine(recoveryMs)}; ${slowRecoveries} waited out a stale lock (>1 s); worst ${ms(Math.max(0, ...recoveryMs))}`],
      ["leftovers", `after the run: ${tmpLeft.length} temp file(s) (all of killed writers), ${locksLeft.length} lock(s); gc at once left ${afterGc1.tmp} temp, ${afterGc1.locks} locks (temp files count as stale after 1 h); after ageing them 2 h, gc left ${tmpEnd.length} + ${locksEnd.length}`],
    ],
  );
}

function readRecordText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

// Runs the lib-level writer until it is loaded, lets it publish for 0-250 ms, kills it.
async function killLibWriter(ctx: Ctx, root: string, r: Rand, round: number): Promise<{ pid: number; killed: boolean; acks: string[]; error?: string }> {
  const p = Bun.spawn({
    cmd: ["bun", join(ctx.repo, "bench/torture/fixtures/lib-writer.ts"), root, "p", String(Math.floor(r() * 2 ** 31)), `lib${round}`],
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  let text = "";
  let readyAt: (() => void) | undefined;
  const ready = new Promise<void>((res) => (readyAt = res));
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value, { stream: true });
      if (text.includes("ready\n")) readyAt?.();
    }
    readyAt?.();
  })();
  const safety = setTimeout(() => p.kill(9), 60_000);
  await ready;
  await Bun.sleep(between(r, 0, 250));
  p.kill(9);
  await pump;
  await p.exited;
  clearTimeout(safety);
  const stderr = await new Response(p.stderr).text();
  const acks = text.split("\n").filter((l) => l.startsWith("ok "));
  const killed = p.signalCode === "SIGKILL";
  return { pid: p.pid, killed, acks, error: killed && stderr.trim() === "" ? undefined : `exit ${p.exitCode ?? p.signalCode}: ${short(stderr, 400)}` };
}
