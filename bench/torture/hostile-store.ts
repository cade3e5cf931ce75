// Hostile store: real work through the compiled binary while a planter plants traps inside the
// live store, at random moments and at the places a2a is about to use.
//
//   load     slot publishers (start, append, publish, then read back their own version) and
//            slot waiters (--after-version); mail senders (some with --key) and receivers
//            (recv --wait); topic publishers and durable subscribers (sub --as --from-start);
//            a task adder (--key) and task workers (claim, done); a browser running status,
//            inbox, topics, peers, task list and gc. Every command is the compiled binary.
//   planter  a loop of this process planting, at names that do not exist yet (it never
//            replaces what a2a wrote: that would be the planter's loss, not a2a's): symlinks
//            (to a victim directory outside the store, to a file in it, to a passwd-like file,
//            to a 4 GiB sparse file, to /dev/zero, dangling), FIFOs, device nodes (as root;
//            else links to devices), directories where files belong (with a file inside) and
//            files where directories belong, random garbage and 8 GiB sparse files, and, as
//            root, some of them owned by nobody. Names are chosen like a2a's: the next record,
//            lock, chunk, topic message, inbox entry, key record (its real hash), policy, peer,
//            subscriber cursor, task version and marker, directories not made yet.
// Verdicts (never timing: limits are safety nets that count a hang):
// - nothing outside the store changes: the victim directory and everything beside the store
//   (type, size, mode, owner, mtime, ctime, content) are the same afterwards;
// - hangs 0: every a2a process ends within its bound (a kill by the net is a hang);
// - no stack trace, no undocumented exit code, one clean error line per failure;
// - nothing lost or altered: every message a sender was told was sent is received exactly
//   once with its exact body, or is still in the inbox (new/, held/, bad/, claim/); every
//   publish reported is read back byte for byte (its own read-back, a waiter, or the final
//   status), and no waiter ever sees a value nobody tried to publish; every topic message
//   reported is seen by each subscriber exactly once, in order, with its body; every task
//   added is done exactly once with its result, or dead with a reason.

import { createHash } from "node:crypto";
import { chownSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync, writeFileSync, ftruncateSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import { a2a, type Ctx, type Outcome, type RunResult, scenarioDir, short, stderrProblem, Verdict } from "./common";
import { between, pick, rng, seal, type Rand } from "./payload";

const NOBODY = 65534;

// Everything about a tree that "touching" it would change; atime is left out (reading is not
// touching, and the no-follow reads never get that far anyway).
function statTree(dir: string, exclude: string[]): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string) => {
    if (exclude.includes(p)) return;
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    const base = `${st.mode.toString(8)}:${st.uid}:${st.gid}:${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.nlink}`;
    if (st.isSymbolicLink()) out.set(p, `link:${base}:${readlinkSync(p)}`);
    else if (st.isFile()) out.set(p, `file:${base}:${st.size < 1 << 20 ? Bun.hash(readFileSync(p)).toString(16) : "big"}`);
    else if (st.isDirectory()) {
      out.set(p, `dir:${base}:${readdirSync(p).sort().join("/")}`);
      for (const f of readdirSync(p)) walk(join(p, f));
    } else out.set(p, `other:${base}`);
  };
  walk(dir);
  return out;
}

const sha32 = (s: string) => createHash("sha256").update(s).digest("hex").slice(0, 32);

interface Published { slot: string; version: number; body: string; readBack: boolean }
interface Sent { to: string; body: string }
interface TopicPub { topic: string; id: number; body: string }

export async function hostileStore(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const P = scenarioDir(ctx, "hostile-store");
  const root = join(P, "store");
  const victim = join(P, "victim");
  const home = join(P, "home");
  const r = rng(ctx.seed ^ 0x4057);
  const loadMs = ctx.short ? 9_000 : 90_000;
  const LIMIT_MS = 40_000; // far beyond any command's own bound: reaching it is a hang
  const SLOTS = ctx.short ? 3 : 5, SENDERS = 2, RECEIVERS = ctx.short ? 2 : 3, TOPICS = ["tp.a", "tp.b"], SUBS = 2, WORKERS = 2;

  // The victim: files a2a must never touch, reachable only through planted links.
  mkdirSync(join(victim, "sub", "deeper"), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(victim, "notes.txt"), "precious\n");
  writeFileSync(join(victim, "passwd"), "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/usr/sbin/nologin\n");
  writeFileSync(join(victim, "record.json"), '{"a2a":1,"name":"sl-0","state":"done","task":"","result":"stolen","size":6,"version":99,"started_at":1,"published_at":1,"updated_at":1,"expires_at":null,"chunks":0,"host":"x","pid":1}\n');
  writeFileSync(join(victim, "sub", "deeper", "key.pem"), "-----BEGIN NOTHING-----\n");
  const sparse = openSync(join(victim, "huge.bin"), "w");
  ftruncateSync(sparse, 4 * 2 ** 30);
  closeSync(sparse);
  const ourEntries = ["store", "victim", "home"];
  const env = { HOME: home, A2A_CLAIM_LEASE_MS: "60000" };
  Bun.spawnSync([ctx.bin, "init"], { env: { ...process.env, A2A_DIR: root, HOME: home }, stdout: "ignore", stderr: "ignore" });
  const outsideBefore = statTree(P, [root]);

  const exits = new Map<string, number>();
  let commands = 0, hangs = 0, cleanFailures = 0;
  const errorTexts = new Map<string, number>();
  const slowest = new Map<string, number>();
  const run = async (label: string, args: string[], ok: number[] = [0]): Promise<RunResult> => {
    commands++;
    const res = await a2a(ctx, args, { dir: root, env, cwd: P, limitMs: LIMIT_MS });
    if (res.hung) hangs++;
    const key = `${args[0] === "task" ? `task ${args[1]}` : args[0]} ${res.code ?? res.signal}`;
    exits.set(key, (exits.get(key) ?? 0) + 1);
    const prob = stderrProblem(res);
    if (prob) v.fail(res.hung ? "hang" : "unclean failure", `${label} (${args.join(" ").slice(0, 80)}): ${prob}`);
    else if (!ok.includes(res.code!)) {
      cleanFailures++;
      const why = `${key}: ${res.stderr.trim().replace(/\d{6,}[-\w]*/g, "N").slice(0, 150)}`;
      errorTexts.set(why, (errorTexts.get(why) ?? 0) + 1);
    }
    const slow = slowest.get(key) ?? 0;
    if (res.ms > slow) slowest.set(key, res.ms);
    return res;
  };
  const json = (s: string): any[] => s.split("\n").filter((l) => l.trim()).flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      v.fail("altered output", `not a JSON line: ${short(l)}`);
      return [];
    }
  });
  let stopping = false;
  const t0 = performance.now();
  const until = () => !stopping && performance.now() - t0 < loadMs;
  const pause = (ms: number) => Bun.sleep(ms); // pacing of the load, never a wait for a condition

  // ---- slots ------------------------------------------------------------------------------
  const published: Published[] = [];
  const attempted = new Map<string, Set<string>>(); // slot -> every body anyone tried to publish
  const slotNames = Array.from({ length: SLOTS }, (_, i) => `sl-${i}`);
  for (const s of slotNames) attempted.set(s, new Set());
  const slotPublisher = async (slot: string, rr: Rand) => {
    for (let n = 0; until(); n++) {
      if (rr() < 0.5) {
        await run("start", ["start", slot, `run ${n}`]);
        for (let c = Math.floor(rr() * 3); c > 0; c--) await run("append", ["append", slot, seal(`${slot}.c${n}`, String(c))]);
      }
      const body = seal(`${slot}.${n}`, `v${n} "x" \u00e9 ${Math.floor(rr() * 1e9)}`);
      attempted.get(slot)!.add(body);
      const p = await run("publish", ["publish", slot, body, "--json"]);
      if (p.code !== 0) continue;
      const rec = json(p.stdout)[0];
      if (!rec || rec.result !== body) {
        v.fail("altered", `publish ${slot} --json echoed ${short(p.stdout)}`);
        continue;
      }
      const pub: Published = { slot, version: rec.version, body, readBack: false };
      published.push(pub);
      const w = await run("read back", ["wait", slot, "--after-version", String(rec.version - 1), "--json", "--timeout", "5"]);
      if (w.code === 0) {
        const got = json(w.stdout)[0];
        // Only this loop writes this slot, so nothing can come between its publish and wait.
        if (got?.version === rec.version && got.result === body) pub.readBack = true;
        else v.fail("altered", `${slot} v${rec.version}: read back ${short(w.stdout)}`);
      }
      await pause(between(rr, 0, 60));
    }
  };
  const waiterSeen: { slot: string; version: number; body: string }[] = [];
  const slotWaiter = async (rr: Rand) => {
    const after = new Map(slotNames.map((s) => [s, 0]));
    while (until()) {
      const slot = pick(rr, slotNames);
      const w = await run("waiter", ["wait", slot, "--after-version", String(after.get(slot)), "--json", "--timeout", "1"], [0, 124]);
      if (w.code !== 0) continue;
      const got = json(w.stdout)[0];
      if (!got) continue;
      waiterSeen.push({ slot, version: got.version, body: got.result });
      after.set(slot, got.version);
    }
  };

  // ---- mail -------------------------------------------------------------------------------
  const sent = new Map<string, Sent>();
  const failedSends = new Map<string, string>(); // body -> what the failed send said
  const receivedCount = new Map<string, number>();
  const receivers = Array.from({ length: RECEIVERS }, (_, i) => `r-${i}`);
  const senders = Array.from({ length: SENDERS }, (_, i) => `s-${i}`);
  const mailKey = (from: string, n: number) => `key-${from}-${n}`;
  const receivedMail: { as: string; m: any }[] = [];
  const takeMail = (out: string, as: string) => {
    for (const m of json(out)) receivedMail.push({ as, m }); // judged at the end: a receiver can beat its sender's reply
  };
  const sender = async (from: string, rr: Rand) => {
    for (let n = 0; until(); n++) {
      const to = pick(rr, receivers);
      const body = seal(`${from}.${n}`, `mail ${n} ${Math.floor(rr() * 1e9)}`);
      const args = ["send", to, body, "--as", from, "--json"];
      if (n % 2 === 0) args.push("--key", mailKey(from, n));
      const res = await run("send", args);
      if (res.code === 0) {
        const id = json(res.stdout)[0]?.id;
        if (typeof id === "string") sent.set(id, { to, body });
        else v.fail("altered output", `send --json printed ${short(res.stdout)}`);
      } else failedSends.set(body, `exit ${res.code}: ${res.stderr.trim()}`);
      await pause(between(rr, 0, 60));
    }
  };
  const receiver = async (as: string) => {
    while (until()) {
      const res = await run("recv", ["recv", "--as", as, "--json", "--wait", "--timeout", "1"], [0, 124]);
      if (res.code === 0) takeMail(res.stdout, as);
    }
  };

  // ---- topics -----------------------------------------------------------------------------
  const topicPubs: TopicPub[] = [];
  const subscribers = Array.from({ length: SUBS }, (_, i) => `sub-${i}`);
  const subSeen = new Map<string, { topic: string; id: number; body: string }[]>(subscribers.map((s) => [s, []]));
  const takeSub = (out: string, as: string) => {
    for (const m of json(out)) subSeen.get(as)!.push({ topic: m.topic, id: m.id, body: m.body });
  };
  const topicPublisher = async (who: string, rr: Rand) => {
    for (let n = 0; until(); n++) {
      const topic = pick(rr, TOPICS);
      const body = seal(`${who}.${n}`, `topic ${n}`);
      const res = await run("pub", ["pub", topic, body, "--as", who, "--json"]);
      if (res.code === 0) {
        const m = json(res.stdout)[0];
        if (m?.topic === topic && m.body === body && Number.isInteger(m.id)) topicPubs.push({ topic, id: m.id, body });
        else v.fail("altered output", `pub --json printed ${short(res.stdout)}`);
      }
      await pause(between(rr, 0, 80));
    }
  };
  const subscriber = async (as: string, rr: Rand) => {
    while (until()) {
      const res = await run("sub", ["sub", "tp.>", "--as", as, "--json", "--from-start"]);
      if (res.code === 0) takeSub(res.stdout, as);
      await pause(between(rr, 50, 250));
    }
  };

  // ---- tasks ------------------------------------------------------------------------------
  const QUEUE = "tq";
  const added = new Map<string, string>(); // id -> payload
  const doneOk = new Map<string, number>();
  const taskKey = (n: number) => `task-${n}`;
  const adder = async (rr: Rand) => {
    for (let n = 0; until(); n++) {
      const payload = seal(`task.${n}`, `job ${n}`);
      const res = await run("task add", ["task", "add", QUEUE, payload, "--key", taskKey(n), "--json"]);
      if (res.code === 0) {
        const id = json(res.stdout)[0]?.id;
        if (typeof id === "string") added.set(id, payload);
      }
      await pause(between(rr, 0, 100));
    }
  };
  const resultOf = (payload: string) => `did ${payload}`;
  const work = async (as: string, wait: boolean): Promise<boolean> => {
    const args = ["task", "claim", QUEUE, "--as", as, "--json", "--lease", "60s"];
    if (wait) args.push("--wait", "--timeout", "1");
    const c = await run("task claim", args, [0, 3, 124]);
    if (c.code !== 0) return false;
    const claim = json(c.stdout)[0];
    if (!claim) return false;
    const want = added.get(claim.id);
    if (want !== undefined && claim.payload !== want) v.fail("altered", `task ${claim.id}: added ${short(want)}, claimed ${short(claim.payload)}`);
    const d = await run("task done", ["task", "done", claim.id, claim.token, resultOf(claim.payload)]);
    if (d.code === 0) doneOk.set(claim.id, (doneOk.get(claim.id) ?? 0) + 1);
    return true;
  };
  const worker = async (as: string) => {
    while (until()) await work(as, true);
  };

  // ---- the browser: readers and gc over the whole store ------------------------------------
  const browser = async (rr: Rand) => {
    const cmds = [["status", "--json"], ["status"], ["topics"], ["peers"], ["gc"], ["task", "list", "--json"], ["inbox", "--as", "r-0"], ["inbox", "--as", "r-1", "--held"], ["whoami", "--as", "r-0"]];
    while (until()) {
      await run("browse", pick(rr, cmds), [0]);
      await pause(between(rr, 50, 300));
    }
  };

  // ---- the planter ------------------------------------------------------------------------
  const planted = new Map<string, number>();
  let plantFailed = 0;
  const plantedPaths: string[] = [];
  const mailN = new Map(senders.map((s) => [s, 0]));
  const existing = (p: string) => {
    try {
      lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const listOr = (d: string) => {
    try {
      return readdirSync(d).filter((f) => !f.startsWith("."));
    } catch {
      return [];
    }
  };
  // Where a2a is about to look or write: a file name (or a directory name: `dir`).
  const target = (rr: Rand): { path: string; dirLike: boolean } => {
    const S = (...p: string[]) => join(root, ...p);
    const nextTopicId = (t: string) => Math.max(0, ...listOr(S("topics", t)).map((f) => parseInt(f, 10)).filter(Number.isFinite));
    const fakeMsgId = () => `${Math.floor(Date.now() * 1000 + rr() * 1e6)}-0bad-zz-${Math.floor(rr() * 0xffffff).toString(16).padStart(6, "0")}`;
    const taskDirs = listOr(S("tasks", QUEUE)).filter((f) => !f.startsWith("@"));
    const choices: (() => { path: string; dirLike: boolean })[] = [
      () => ({ path: S("slots", `${pick(rr, [...slotNames, "sl-new", "ghost"])}.json`), dirLike: false }),
      () => ({ path: S("locks", `${pick(rr, [...slotNames, `@policy.${pick(rr, receivers)}`])}.lock`), dirLike: false }),
      () => ({ path: S("locks", `${pick(rr, slotNames)}.lock.break`), dirLike: false }),
      () => {
        const slot = pick(rr, slotNames);
        const n = listOr(S("streams", slot)).length + 1 + Math.floor(rr() * 2);
        return { path: S("streams", slot, String(n).padStart(10, "0")), dirLike: false };
      },
      () => ({ path: S("streams", pick(rr, slotNames)), dirLike: true }),
      () => {
        const t = pick(rr, [...TOPICS, "tp.c"]);
        const far = rr() < 0.3;
        return { path: S("topics", t, String(nextTopicId(t) + (far ? 40 + Math.floor(rr() * 100) : 1 + Math.floor(rr() * 3))).padStart(12, "0") + ".json"), dirLike: false };
      },
      () => ({ path: S("topics", pick(rr, ["tp.c", "tp.d"])), dirLike: true }),
      () => ({ path: S("subs", pick(rr, [...subscribers, "sub-x", "sub-y"]), pick(rr, [...TOPICS, "tp.c"])), dirLike: false }),
      () => ({ path: S("subs", pick(rr, subscribers), "@subscriber.json"), dirLike: false }),
      () => ({ path: S("inbox", pick(rr, receivers), pick(rr, ["new", "cur", "held", "claim", "bad"]), `${fakeMsgId()}.json`), dirLike: false }),
      () => ({ path: S("inbox", pick(rr, receivers), pick(rr, ["new", "cur", "held", "claim", "bad", "keys"])), dirLike: true }),
      () => ({ path: S("inbox", pick(rr, [...receivers, "r-x", "r-y", "r-z", "r-w"]), "policy.json"), dirLike: false }),
      () => {
        const from = pick(rr, senders);
        const n = (mailN.get(from) ?? 0) + 2 * Math.floor(1 + rr() * 4); // a key this sender will use soon
        mailN.set(from, n);
        return { path: S("inbox", pick(rr, receivers), "keys", `${sha32(`${from}\n${mailKey(from, n)}`)}.json`), dirLike: false };
      },
      () => ({ path: S("peers", `${pick(rr, ["r-0", "s-0", "peer"])}.json`), dirLike: false }),
      () => ({ path: S("tmp", `${process.pid}.${Math.floor(rr() * 1e8).toString(16)}.tmp`), dirLike: false }),
      () => ({ path: S("tasks", QUEUE, "@keys", `${sha32(taskKey(added.size + 1 + Math.floor(rr() * 4)))}.json`), dirLike: false }),
      () => ({ path: S("tasks", QUEUE, pick(rr, ["@open", "@keys", "@claims"])), dirLike: true }),
      () => ({ path: S("tasks", QUEUE, "@open", `${Math.floor(Date.now() * 1000)}-${Math.floor(rr() * 0xffffffff).toString(16).padStart(8, "0")}`), dirLike: false }),
      () => {
        const id = taskDirs.length ? pick(rr, taskDirs) : "0000000000000000-deadbeef";
        const n = listOr(S("tasks", QUEUE, id)).filter((f) => /^\d+\.json$/.test(f)).length + 1;
        return { path: S("tasks", QUEUE, id, rr() < 0.5 ? `${String(n).padStart(8, "0")}.json` : "@bell"), dirLike: false };
      },
      () => ({ path: S("leases", "ghost"), dirLike: true }),
      () => ({ path: S("identities", `${sha32("x").slice(0, 16)}.json`), dirLike: false }),
    ];
    return pick(rr, choices)();
  };
  const KINDS = ["link-victim-dir", "link-victim-file", "link-passwd", "link-huge", "link-record", "link-dev-zero", "dangling", "fifo", "device", "dir", "file-garbage", "file-sparse"] as const;
  const plantOne = (rr: Rand) => {
    const { path, dirLike } = target(rr);
    if (existing(path)) return; // never replace what is there
    // Never plant through an earlier plant: a link planted where a directory belongs would
    // carry this one outside the store (the planter, not a2a, would have touched the victim).
    for (let d = join(path, ".."); d.length > root.length; d = join(d, "..")) {
      try {
        if (!lstatSync(d).isDirectory()) return;
      } catch {
        // missing: made below, as a real directory
      }
    }
    let kind: string = pick(rr, KINDS);
    if (dirLike && rr() < 0.5) kind = pick(rr, ["file-garbage", "fifo", "link-victim-dir", "dangling"]);
    try {
      mkdirSync(join(path, ".."), { recursive: false });
    } catch {
      // the parent exists (or cannot be made: the plant below fails and is counted)
    }
    try {
      switch (kind) {
        case "link-victim-dir": symlinkSync(victim, path); break;
        case "link-victim-file": symlinkSync(join(victim, "notes.txt"), path); break;
        case "link-passwd": symlinkSync(join(victim, "passwd"), path); break;
        case "link-huge": symlinkSync(join(victim, "huge.bin"), path); break;
        case "link-record": symlinkSync(join(victim, "record.json"), path); break;
        case "link-dev-zero": symlinkSync("/dev/zero", path); break;
        case "dangling": symlinkSync(join(P, "nowhere", "nothing"), path); break;
        case "fifo":
          if (Bun.spawnSync(["mkfifo", path]).exitCode !== 0) throw new Error("mkfifo");
          break;
        case "device":
          if (ctx.isRoot) {
            if (Bun.spawnSync(["mknod", path, "c", "1", pick(rr, ["3", "5"])]).exitCode !== 0) throw new Error("mknod");
          } else symlinkSync(pick(rr, ["/dev/null", "/dev/zero", "/dev/urandom"]), path);
          break;
        case "dir":
          mkdirSync(path);
          writeFileSync(join(path, "inside"), "x");
          break;
        case "file-garbage":
          writeFileSync(path, new Uint8Array(Array.from({ length: 1 + Math.floor(rr() * 300) }, () => Math.floor(rr() * 256))), { flag: "wx" });
          break;
        case "file-sparse": {
          const fd = openSync(path, "wx");
          ftruncateSync(fd, 8 * 2 ** 30);
          closeSync(fd);
          break;
        }
      }
      if (ctx.isRoot && rr() < 0.3) {
        Bun.spawnSync(["chown", "-h", `${NOBODY}:${NOBODY}`, path]);
        kind += "+nobody";
      }
      planted.set(kind, (planted.get(kind) ?? 0) + 1);
      plantedPaths.push(path);
    } catch {
      plantFailed++; // raced a2a to the name: fine, a2a got it first
    }
  };
  const planter = async (rr: Rand) => {
    while (until()) {
      plantOne(rr);
      await pause(between(rr, 10, 90));
    }
  };

  // ---- run --------------------------------------------------------------------------------
  const sub = (k: number) => rng(ctx.seed ^ (0x1000 + k * 7919));
  // Subscribers and receivers first, so their directories exist before anything is planted
  // under them (a plant can still take a name a2a makes later: that is part of the game).
  const loops: Promise<void>[] = [];
  loops.push(...slotNames.map((s, i) => slotPublisher(s, sub(i))));
  loops.push(slotWaiter(sub(20)), slotWaiter(sub(21)));
  loops.push(...senders.map((s, i) => sender(s, sub(30 + i))));
  loops.push(...receivers.map((a) => receiver(a)));
  loops.push(topicPublisher("tp-pub-0", sub(40)), topicPublisher("tp-pub-1", sub(41)));
  loops.push(...subscribers.map((s, i) => subscriber(s, sub(50 + i))));
  loops.push(adder(sub(60)), ...Array.from({ length: WORKERS }, (_, i) => worker(`w-${i}`)));
  loops.push(browser(sub(70)), planter(r));
  await Promise.all(loops);
  stopping = true;
  const loadSecs = (performance.now() - t0) / 1000;

  // ---- drain: every reader takes what is left ----------------------------------------------
  const refused = new Map<string, string>(); // reader -> the clean error its last read ended with
  for (const as of receivers) {
    for (let i = 0; i < 50; i++) {
      const res = await run("drain recv", ["recv", "--as", as, "--json", "--all"]);
      if (res.code !== 0) refused.set(as, res.stderr.trim());
      if (res.code !== 0 || !res.stdout.trim()) break;
      takeMail(res.stdout, as);
    }
  }
  for (const as of subscribers) {
    const res = await run("drain sub", ["sub", "tp.>", "--as", as, "--json", "--from-start"]);
    if (res.code === 0) takeSub(res.stdout, as);
    else refused.set(as, res.stderr.trim());
  }
  for (let i = 0; i < 10_000; i++) if (!(await work("w-drain", false))) break;
  const finalSlots = new Map<string, { version: number; result: string }>();
  for (const s of slotNames) {
    const res = await run("final status", ["status", s, "--json"], [0, 3]);
    const rec = res.code === 0 ? json(res.stdout).flat()[0] : undefined;
    if (rec) finalSlots.set(s, { version: rec.version, result: rec.result });
  }
  const listRes = await run("final task list", ["task", "list", QUEUE, "--json"], [0, 3]);
  const listed = listRes.code === 0 ? (JSON.parse(listRes.stdout || "[]") as any[]) : [];
  const unreadable = new Map<string, string>(); // task id -> why task show refused it
  // A chain holding a planted file is left out of the list (named in a warning): ask for each
  // task the list did not show, and keep why task show refuses it.
  const inList = new Set(listed.map((t) => t.id));
  for (const id of added.keys()) {
    if (inList.has(id)) continue;
    const res = await run("final task show", ["task", "show", id, "--json"], [0, 1]);
    if (res.code === 0) listed.push(JSON.parse(res.stdout));
    else unreadable.set(id, res.stderr.trim());
  }

  // ---- verdicts -----------------------------------------------------------------------------
  // Outside the store.
  const outsideAfter = statTree(P, [root]);
  const touched: string[] = [];
  for (const [p, sig] of outsideAfter) if (outsideBefore.get(p) !== sig) touched.push(`${outsideBefore.has(p) ? "changed" : "created"} ${p}`);
  for (const p of outsideBefore.keys()) if (!outsideAfter.has(p)) touched.push(`removed ${p}`);
  for (const t of touched) v.fail("touched outside the store", t);
  const beside = readdirSync(P).filter((f) => !ourEntries.includes(f));
  for (const f of beside) v.fail("touched outside the store", `new entry beside the store: ${f}`);

  // Slots.
  let slotLost = 0, slotRead = 0;
  for (const s of waiterSeen) {
    const rep = published.find((p) => p.slot === s.slot && p.version === s.version);
    if (rep) {
      if (rep.body !== s.body) v.fail("altered", `${s.slot} v${s.version}: published ${short(rep.body)}, a waiter saw ${short(s.body)}`);
      else rep.readBack = true;
    } else if (!attempted.get(s.slot)!.has(s.body)) v.fail("altered", `${s.slot} v${s.version}: a waiter saw ${short(s.body)}, which nobody published`);
  }
  for (const [s, f] of finalSlots) {
    const rep = published.find((p) => p.slot === s && p.version === f.version);
    if (rep && rep.body === f.result) rep.readBack = true;
    else if (rep) v.fail("altered", `${s} v${f.version}: status shows ${short(f.result)}, published ${short(rep.body)}`);
    const last = published.filter((p) => p.slot === s).at(-1);
    if (last && f.version < last.version) v.fail("lost", `${s}: last reported publish is v${last.version}, status shows v${f.version}`);
  }
  for (const p of published) {
    if (p.readBack) slotRead++;
    else {
      slotLost++;
      v.fail("lost", `${p.slot} v${p.version} reported published, never read back`);
    }
  }

  // Mail.
  const inboxFiles = new Map<string, string>(); // id -> where it sits
  for (const to of receivers) {
    for (const box of ["new", "held", "bad", "claim"]) {
      for (const f of listOr(join(root, "inbox", to, box))) inboxFiles.set(f.replace(/\.json$/, "").split(",")[0], `${to}/${box}`);
    }
  }
  for (const { as, m } of receivedMail) {
    const s = sent.get(m.id);
    receivedCount.set(m.id, (receivedCount.get(m.id) ?? 0) + 1);
    if (!s) v.fail("altered", `${as} received an id nobody reported sending: ${short(JSON.stringify(m))}${failedSends.has(m.body) ? `; its send said ${short(failedSends.get(m.body)!, 400)}` : ""}`);
    else if (s.body !== m.body || s.to !== as) v.fail("altered", `${m.id}: sent ${short(s.body)} to ${s.to}, ${as} received ${short(m.body)}`);
  }
  let mailOnce = 0, mailLeft = 0;
  const mailLeftWhere = new Map<string, number>();
  for (const [id, s] of sent) {
    const n = receivedCount.get(id) ?? 0;
    if (n === 1) mailOnce++;
    else if (n > 1) v.fail("duplicated", `${id} to ${s.to} received ${n} times`);
    else if (inboxFiles.has(id)) {
      mailLeft++;
      const w = inboxFiles.get(id)!.split("/")[1];
      mailLeftWhere.set(w, (mailLeftWhere.get(w) ?? 0) + 1);
      // Unread is fine when the receiver's last recv was refused with a clean error (its reason).
      if ((w === "new" || w === "claim") && !refused.has(s.to)) v.fail("lost", `${id} to ${s.to} still in ${inboxFiles.get(id)}, yet recv --all said nothing is left`);
    } else v.fail("lost", `${id} to ${s.to}: reported sent, never received, not in the inbox`);
  }

  // Topics.
  let topicUnread = 0;
  for (const as of subscribers) {
    const seen = subSeen.get(as)!;
    const byKey = new Map<string, number>();
    const lastId = new Map<string, number>();
    for (const m of seen) {
      const k = `${m.topic}#${m.id}`;
      byKey.set(k, (byKey.get(k) ?? 0) + 1);
      if ((lastId.get(m.topic) ?? 0) >= m.id) v.fail("out of order", `${as}: ${k} after #${lastId.get(m.topic)}`);
      lastId.set(m.topic, m.id);
    }
    for (const p of topicPubs) {
      const k = `${p.topic}#${p.id}`;
      const n = byKey.get(k) ?? 0;
      const got = seen.find((m) => m.topic === p.topic && m.id === p.id);
      if (n === 0 && refused.has(as)) topicUnread++; // still in the log; this reader is refused, with its reason
      else if (n === 0) v.fail("lost", `${as} never saw ${k} (${short(p.body, 40)}), yet its last sub ended well`);
      else if (n > 1) v.fail("duplicated", `${as} saw ${k} ${n} times`);
      else if (got!.body !== p.body) v.fail("altered", `${as}: ${k} published ${short(p.body)}, seen ${short(got!.body)}`);
    }
    const known = new Set(topicPubs.map((p) => `${p.topic}#${p.id}`));
    for (const k of byKey.keys()) if (!known.has(k)) v.fail("altered", `${as} saw ${k}, which no publisher reported`);
  }

  // Tasks.
  const byId = new Map(listed.map((t) => [t.id, t]));
  let tasksDone = 0, tasksDead = 0, tasksUnreadable = 0;
  for (const [id, payload] of added) {
    const t = byId.get(id);
    const n = doneOk.get(id) ?? 0;
    if (!t && unreadable.has(id)) {
      tasksUnreadable++; // its chain holds a planted file: task show refuses it, naming the file
      if (n > 1) v.fail("done not exactly once", `task ${id}: ${n} done calls succeeded`);
    } else if (!t) v.fail("lost", `task ${id} added, not listed`);
    else if (t.state === "done") {
      tasksDone++;
      if (n !== 1) v.fail("done not exactly once", `task ${id}: ${n} done calls succeeded`);
      if (t.result !== undefined && t.result !== resultOf(payload)) v.fail("altered", `task ${id} result ${short(t.result)}`);
    } else if (t.state === "dead") {
      tasksDead++;
      if (!t.reason) v.fail("dead without a reason", `task ${id}`);
    } else v.fail("lost", `task ${id} is ${t.state} after the drain`);

  }
  for (const [id, n] of doneOk) if (!added.has(id)) v.fail("altered", `task ${id} was claimed and done ${n}x, but nobody added it`);

  const plantLine = [...planted].sort().map(([k, n]) => `${k} ${n}`).join(", ");
  const exitLine = [...exits].sort().map(([k, n]) => `${k}: ${n}`).join(", ");
  const figures: [string, string][] = [
    ["load", `${loadSecs.toFixed(1)} s, ${commands} a2a processes, ${cleanFailures} clean failures (one line, documented exit)`],
    ["planted", `${plantedPaths.length} traps (${plantFailed} raced away): ${plantLine}`],
    ["outside the store", `${touched.length + beside.length} touched (victim and ${outsideBefore.size} entries beside the store snapshotted)`],
    ["hangs", String(hangs)],
    ["slots", `${published.length} publishes reported, ${slotRead} read back byte for byte, ${slotLost} lost; ${waiterSeen.length} waiter wake-ups`],
    ["mail", `${sent.size} sent, ${mailOnce} received exactly once, ${mailLeft} left with a reason (${[...mailLeftWhere].map(([k, n]) => `${k} ${n}`).join(", ") || "none"}; readers refused: ${[...refused.keys()].filter((k) => k.startsWith("r-")).join(" ") || "none"})`],
    ["topics", `${topicPubs.length} published, each for ${SUBS} subscribers: ${subscribers.map((s) => subSeen.get(s)!.length).join(" and ")} deliveries, ${topicUnread} unread by a refused subscriber`],
    ["tasks", `${added.size} added, ${tasksDone} done exactly once, ${tasksDead} dead with a reason, ${tasksUnreadable} in a chain with a planted file (refused by name)`],
    ["exits", exitLine],
  ];
  if (ctx.verbose) {
    figures.push(["slowest", [...slowest].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, t]) => `${k} ${Math.round(t)} ms`).join(", ")]);
    for (const [t, n] of [...errorTexts].sort((a, b) => b[1] - a[1]).slice(0, 25)) figures.push([`error x${n}`, t]);
  }
  const summary = `${commands} commands against ${plantedPaths.length} traps: outside touched ${touched.length + beside.length}, hangs ${hangs}, lost/altered ${v.failed ? "see failures" : 0}`;
  return v.outcome(summary, figures);
}
