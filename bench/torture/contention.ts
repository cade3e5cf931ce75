// Contention: many processes on the same slots at once.
//
// A. Compare-and-set: 8 workers each loop "read the version (a2a status NAME --json), publish
//    the old value plus one new id with --if-version, retry on exit 4" on one slot. The value
//    is the list of every id that won, so a lost update is not just a count: the final list
//    must be exactly the ids of the successful calls, in the order of the versions they got,
//    and the final version must equal the number of successful calls.
// B. Mixed: 8 workers run random start / publish / append / clear / status / wait on a slot
//    of their own and on two shared slots. On its own slot a worker knows exactly what every
//    call must return (version, state, chunks); any difference is a lost or phantom update.
//    Every call must end with exit 0 or an expected one-line error; a reader decodes every
//    read meanwhile; afterwards nothing is left in tmp/ or locks/ (nobody was killed).
// C. Stalled lock holder: A holds a slot's lock through a 4 s synchronous stall (a stuck
//    fsync); B takes the lock over as stale at 2.5 s. When A's stall ends and A releases, B's
//    lock directory must still be there (A must not free a lock that is no longer its own).
//    If B could not enter before A released (a very loaded machine), it says so: not judged.
// D. Frozen lock holder (long form; reported, not judged): two lib-level writers publish in a
//    loop while one is stopped (SIGSTOP) for 2.5 s now and then, longer than the 2 s after
//    which lib/fs/lock.ts treats a lock as stale. lib/fs/lock.ts documents that such a holder's late
//    write can land on top of another's; this measures how often two publishes then report
//    the same version (a lost update). Not a verdict: where the stop lands is timing.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { chunkFile } from "../../lib/fs/paths";
import { openStore } from "../../lib/engine/open";
import {
  a2a, type Ctx, finish, listDir, msLine, type Outcome, readerLine, readRecordFile, recordProblem, scenarioDir, short,
  startReader, stderrProblem, Verdict,
} from "./common";
import { makePayload, payloadCrc, payloadTag, pick, rng, seal, unseal, type Rand } from "./payload";

const WORKERS = 8;

export async function contention(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const dir = scenarioDir(ctx, "contention");
  const a = await casRace(ctx, v, join(dir, "cas"), { perWorker: ctx.short ? 5 : 60 });
  const b = await mixed(ctx, v, join(dir, "mixed"));
  const c = await stalledHolder(ctx, v, join(dir, "stalled"));
  const d = ctx.short ? "long form only" : await frozenHolder(ctx, join(dir, "frozen"));
  return v.outcome(`${a.summary}; ${b.summary}; ${c}`, [...a.figures, ...b.figures, ["frozen lock holder (not judged)", d]]);
}

// `prefix`: what worker w's commands run through (bench/torture/clockskew.ts gives some of
// them another clock this way). `lost`: successful calls whose id the final value lacks.
export async function casRace(ctx: Ctx, v: Verdict, root: string, o: { perWorker: number; workers?: number; prefix?: (w: number) => string[] }) {
  const { perWorker, workers = WORKERS } = o;
  const wins: { id: string; version: number }[] = [];
  let attempts = 0, conflicts = 0, worstRetries = 0;
  const casMs: number[] = [];
  const worker = async (w: number) => {
    for (let k = 0; k < perWorker; k++) {
      for (let tries = 1; ; tries++) {
        attempts++;
        const st = await a2a(ctx, ["status", "counter", "--json"], { dir: root, prefix: o.prefix?.(w) });
        // Asked by name, an absent slot is exit 3 with an empty list: version 0.
        if (st.code !== 0 && !(st.code === 3 && st.stdout === "[]\n")) return v.fail("status failed", `exit ${st.code}: ${short(st.stderr)}`);
        const rec = JSON.parse(st.stdout)[0];
        const version = rec?.version ?? 0;
        const list: string[] = rec ? JSON.parse(unseal(rec.result)?.body ?? "null") : [];
        if (!Array.isArray(list)) return v.fail("counter value corrupt", short(rec.result));
        const id = `w${w}.${k}.${tries}`;
        const pub = await a2a(ctx, ["publish", "counter", seal("cas", JSON.stringify([...list, id])), "--if-version", String(version), "--json"], { dir: root, prefix: o.prefix?.(w) });
        casMs.push(pub.ms);
        const prob = stderrProblem(pub);
        if (prob) v.fail("bad stderr", `publish --if-version: ${prob}`);
        if (pub.code === 4) {
          conflicts++;
          continue;
        }
        if (pub.code !== 0) return v.fail("CAS publish failed", `exit ${pub.code ?? pub.signal}: ${short(pub.stderr)}`);
        const got = JSON.parse(pub.stdout).version;
        v.check(got === version + 1, "CAS version", () => `${id}: --if-version ${version} succeeded with version ${got}`);
        wins.push({ id, version: got });
        worstRetries = Math.max(worstRetries, tries);
        break;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
  const final = readRecordFile(join(root, "slots", "counter.json"));
  let finalVersion = -1;
  let lost = wins.length;
  if (final.kind !== "ok") v.fail("counter unreadable", final.kind);
  else {
    finalVersion = final.record.version;
    const list = JSON.parse(unseal(final.record.result ?? "")?.body ?? "[]") as string[];
    const expected = [...wins].sort((x, y) => x.version - y.version).map((x) => x.id);
    const kept = new Set(list);
    lost = wins.filter((x) => !kept.has(x.id)).length;
    v.check(finalVersion === wins.length, "lost update", () => `final version ${finalVersion}, successful CAS calls ${wins.length}`);
    v.check(new Set(wins.map((x) => x.version)).size === wins.length, "two CAS calls got one version", () => JSON.stringify(wins.slice(0, 20)));
    v.check(JSON.stringify(list) === JSON.stringify(expected), "lost update", () => `final value holds ${list.length} ids, ${wins.length} calls succeeded; first difference at ${list.findIndex((x, i) => x !== expected[i])}`);
  }
  return {
    wins: wins.length, finalVersion, lost,
    summary: `CAS: ${wins.length} successful calls, final version ${finalVersion}, ${lost} lost updates`,
    figures: [
      ["CAS race", `${workers} workers x ${perWorker} wins: ${attempts} attempts, ${conflicts} exit-4 conflicts, worst ${worstRetries} tries for one win`],
      ["CAS publish process time", msLine(casMs)],
    ] as [string, string][],
  };
}

// "cleared": the tombstone a clear leaves; absent to readers, but versions continue from it.
type Model = { state: "running" | "done" | "cleared"; version: number; chunks: string[]; crc?: string } | undefined;
type Verb = "start" | "publish" | "append" | "clear" | "status" | "wait";
const VERBS: Verb[] = ["start", "start", "publish", "publish", "publish", "append", "append", "append", "append", "clear", "status", "wait"];
const SHARED = ["sh0", "sh1"];

async function mixed(ctx: Ctx, v: Verdict, root: string) {
  const store = openStore({ dir: root, env: {} });
  const perWorker = ctx.short ? 20 : 250;
  const names = [...Array.from({ length: WORKERS }, (_, w) => `own${w}`), ...SHARED];
  const reader = startReader(ctx, root, names, { monotonic: false, tag: "mixed" });
  const models: Model[] = Array(WORKERS).fill(undefined);
  const exits = new Map<string, number>();
  let calls = 0;
  const worker = async (w: number, r: Rand) => {
    for (let k = 0; k < perWorker; k++) {
      const own = r() < 0.6;
      const name = own ? `own${w}` : pick(r, SHARED);
      const verb = pick(r, VERBS);
      const payload = makePayload(r, `w${w}.${k}`, 200);
      const args =
        verb === "start" ? ["start", name, `task ${w}.${k}`, "--json"]
        : verb === "publish" || verb === "append" ? [verb, name, payload, "--json"]
        : verb === "clear" ? ["clear", name]
        : verb === "status" ? ["status", name, "--json"]
        : ["wait", name, "--timeout", "0"];
      const res = await a2a(ctx, args, { dir: root });
      calls++;
      exits.set(`${verb} ${res.code}`, (exits.get(`${verb} ${res.code}`) ?? 0) + 1);
      const prob = stderrProblem(res);
      if (prob) v.fail("bad stderr", `${args.slice(0, 2).join(" ")}: ${prob}`);
      const allowed: Record<Verb, number[]> = { start: [0], publish: [0], append: [0, 4], clear: [0, 3], status: [0, 3], wait: [0, 124] };
      if (!v.check(res.code !== null && allowed[verb].includes(res.code), "unexpected exit", () => `${verb} ${name}: exit ${res.code ?? res.signal}: ${short(res.stderr)}`)) continue;
      if (own) checkOwn(v, models, w, verb, res.code!, res.stdout, payload);
      else if (res.code === 0 && verb === "wait") v.check(payloadTag(res.stdout) !== undefined, "wait printed a torn result", () => short(res.stdout));
    }
  };
  const r = rng(ctx.seed ^ 0x3c3c);
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w, rng(Math.floor(r() * 2 ** 31)))));
  const rs = await reader.stop();
  v.check(rs.torn === 0 && rs.bad === 0, "reader saw a partial or corrupt record", () => rs.samples.join(" | "));
  v.check(rs.chunkMissing === 0, "reader saw a counted chunk missing", () => rs.samples.join(" | "));

  // The store afterwards: own slots exactly as modelled, shared ones whole, no leftovers.
  for (let w = 0; w < WORKERS; w++) {
    const m = models[w];
    const got = readRecordFile(join(root, "slots", `own${w}.json`));
    if (!m) {
      v.check(got.kind === "absent", "final state", () => `own${w} should be absent, is ${got.kind}`);
      continue;
    }
    if (got.kind !== "ok") {
      v.fail("final state", `own${w} should be version ${m.version}, is ${got.kind}`);
      continue;
    }
    const rec = got.record;
    v.check(rec.version === m.version && rec.state === m.state && rec.chunks === m.chunks.length, "final state", () => `own${w}: expected v${m.version} ${m.state} ${m.chunks.length} chunks, found v${rec.version} ${rec.state} ${rec.chunks}`);
    if (m.crc) v.check(payloadCrc(rec.result ?? "") === m.crc, "final content", () => `own${w}: result differs from the last publish`);
    m.chunks.forEach((crc, i) => {
      const text = readText(chunkFile(store, `own${w}`, i + 1));
      v.check(text !== undefined && payloadCrc(text) === crc, "final chunk", () => `own${w} chunk ${i + 1} differs from its append`);
    });
  }
  for (const name of SHARED) {
    const got = readRecordFile(join(root, "slots", `${name}.json`));
    if (got.kind === "torn") v.fail("corrupt record", `${name}: ${short(got.text)}`);
    if (got.kind === "ok") {
      const prob = recordProblem(got.record, name);
      if (prob) v.fail("corrupt record", prob);
      for (let n = 1; n <= got.record.chunks; n++) {
        const text = readText(chunkFile(store, name, n));
        v.check(text !== undefined && payloadTag(text) !== undefined, "shared chunk", () => `${name} chunk ${n}: ${text === undefined ? "missing" : short(text)}`);
      }
    }
  }
  const left = [...listDir(join(root, "tmp")).map((f) => `tmp/${f}`), ...listDir(join(root, "locks")).map((f) => `locks/${f}`)];
  v.check(left.length === 0, "leftovers without any crash", () => left.join(" "));
  return {
    summary: `mixed: ${calls} calls by ${WORKERS} processes, own slots exactly as modelled`,
    figures: [
      ["mixed exits", [...exits].sort().map(([k, n]) => `${k}: ${n}`).join(", ")],
      ["mixed reader", readerLine(rs)],
    ] as [string, string][],
  };
}

// What a call on a worker's own slot must have returned, given everything before it.
function checkOwn(v: Verdict, models: Model[], w: number, verb: Verb, code: number, stdout: string, payload: string): void {
  const m0 = models[w];
  const m = m0?.state === "cleared" ? undefined : m0; // the live record, if any
  const base = m0?.version ?? 0; // versions never go backwards, not even across a clear
  const name = `own${w}`;
  const rec = verb === "start" || verb === "publish" || (verb === "append" && code === 0) ? JSON.parse(stdout) : undefined;
  const expect = (ok: boolean, what: string) => v.check(ok, "lost or phantom update", () => `${verb} ${name}: ${what} (model ${JSON.stringify(m && { ...m, chunks: m.chunks.length })}, got ${short(stdout)})`);
  switch (verb) {
    case "start":
      expect(rec.version === base + 1 && rec.chunks === 0, "version or chunks");
      models[w] = { state: "running", version: rec.version, chunks: [] };
      break;
    case "publish":
      expect(rec.version === base + 1 && rec.chunks === (m?.chunks.length ?? 0), "version or chunks");
      models[w] = { state: "done", version: rec.version, chunks: m?.chunks ?? [], crc: payloadCrc(payload) };
      break;
    case "append":
      if (m?.state === "done") return void expect(code === 4, "append to a published run was not refused");
      if (!expect(code === 0, `append to a ${m ? "running" : "absent"} slot refused`)) return;
      expect(rec.version === base + 1 && rec.chunks === (m?.chunks.length ?? 0) + 1, "version or chunks");
      models[w] = { state: "running", version: rec.version, chunks: [...(m?.chunks ?? []), payloadCrc(payload)] };
      break;
    case "clear":
      expect(code === (m ? 0 : 3), "clear exit");
      models[w] = m ? { state: "cleared", version: m.version + 1, chunks: [] } : m0;
      break;
    case "status": {
      const list = JSON.parse(stdout);
      expect(m ? list.length === 1 && list[0].version === m.version && list[0].state === m.state : list.length === 0, "status");
      break;
    }
    case "wait":
      if (m?.state === "done") expect(code === 0 && payloadCrc(stdout) === m.crc, "wait result");
      else expect(code === 124, "wait on an unpublished slot did not time out");
      break;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

export async function frozenHolder(ctx: Ctx, root: string): Promise<string> {
  const freezes = 20;
  const r = rng(ctx.seed ^ 0xf7);
  const writers = ["a", "b"].map((tag, i) => {
    const p = Bun.spawn({
      cmd: ["bun", join(ctx.repo, "bench/torture/fixtures/lib-writer.ts"), root, "frz", String(ctx.seed + i), tag],
      stdin: "ignore",
      stdout: "pipe",
      stderr: "ignore",
    });
    let text = "";
    let onReady = () => {};
    const ready = new Promise<void>((res) => (onReady = res));
    const out = (async () => {
      const dec = new TextDecoder();
      for await (const chunk of p.stdout) {
        text += dec.decode(chunk, { stream: true });
        if (text.includes("ready\n")) onReady();
      }
      onReady();
      return text;
    })();
    return { p, out, ready };
  });
  await Promise.race([Promise.all(writers.map((w) => w.ready)), Bun.sleep(60_000)]);
  for (let i = 0; i < freezes; i++) {
    await Bun.sleep(100 + r() * 500);
    writers[0].p.kill("SIGSTOP");
    await Bun.sleep(2500);
    writers[0].p.kill("SIGCONT");
  }
  for (const w of writers) w.p.kill(9);
  const acks = (await Promise.all(writers.map((w) => w.out))).flatMap((t) => t.split("\n").filter((l) => l.startsWith("ok ")));
  const versions = acks.map((l) => Number(l.split(" ")[1]));
  const dup = versions.length - new Set(versions).size;
  return `${freezes} stops of 2.5 s: ${acks.length} publishes reported, ${dup} of them with a version another publish also reported (lost updates)`;
}

export async function stalledHolder(ctx: Ctx, v: Verdict, root: string): Promise<string> {
  const t0 = Date.now() + 2000; // both processes loaded by then
  const run = (role: string) =>
    Bun.spawn({ cmd: ["bun", join(ctx.repo, "bench/torture/fixtures/stall-lock.ts"), role, root, String(t0)], stdout: "pipe", stderr: "pipe" });
  const procs = [run("A"), run("B")];
  const outs = await Promise.all(procs.map((p) => finish(p, performance.now(), 60_000)));
  const text = outs.map((o) => o.stdout).join("");
  const num = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  const released = num(/A released (\d+)/), entered = num(/B entered (\d+)/);
  if (!(entered < released)) {
    return `stalled holder: not exercised (B entered at ${entered} ms, A released at ${released} ms)${outs.some((o) => o.code !== 0) ? `: ${short(outs.map((o) => o.stderr).join(" "))}` : ""}`;
  }
  const present = /B lock present/.test(text);
  v.check(present, "a stalled lock holder freed its successor's lock", () => `B took the lock over at ${entered} ms, A released at ${released} ms, and B's lock directory was gone while B still held it`);
  return `stalled holder: B took over at ${entered} ms, A released at ${released} ms, B's lock ${present ? "kept" : "REMOVED"}`;
}
