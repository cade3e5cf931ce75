// Shared store with a hostile member: three real OS users in one group on a store made with
// `a2a init --shared` (as root, as an administrator would). alice and bob work (mail both
// ways, topics, their prompt hooks) while mallory, a member like them, attacks with plain
// shell commands, over and over:
//
//   must fail    rename an inbox's new/ away (and make her own), rename an inbox, inbox/,
//                topics/, a topic or sessions/ away, delete or append to others' message
//                and topic files, rename a forged policy over alice's;
//   may land,    plant a policy where bob has none, plant session records for both, send
//   harmlessly   mail and topic messages claiming to be alice or bob.
//
// Verdicts (never timing):
// - every must-fail attack failed (a success is a hole, named);
// - 0 lost: every message alice or bob was told was sent is received exactly once by its
//   recipient with its body; every topic message they published is read back once, in order;
// - 0 misattributed: every message and topic message shows the OS user who wrote it, and no
//   mail claiming a name its recipient bound to another OS user is ever shown;
// - the planted records change nothing: bob's mail flows though his planted policy is
//   garbage, each prompt hook still announces new mail, and `a2a doctor` names the plants;
// - no stack trace, no undocumented exit code, no hang.

import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { asUser, canMakeUsers, makeUsers, shellAs } from "../../tests/harness/run";
import { a2a, type Ctx, type Outcome, type RunResult, scenarioDir, short, skip, stderrProblem, Verdict } from "./common";
import { between, pick, rng, seal } from "./payload";

const LIMIT_MS = 40_000;

export async function sharedStore(ctx: Ctx): Promise<Outcome> {
  if (!canMakeUsers) return skip("needs root with useradd, groupadd and setpriv (to make the OS users of a shared store)");
  const team = makeUsers(["alice", "bob", "mallory"] as const, "a2ax");
  try {
    return await attack(ctx, team.users, team.group);
  } finally {
    team.remove();
  }
}

async function attack(ctx: Ctx, U: { alice: string; bob: string; mallory: string }, GROUP: string): Promise<Outcome> {
  const v = new Verdict();
  const P = scenarioDir(ctx, "shared-store");
  chmodSync(ctx.work, 0o711); // the members reach the store; the store itself is the group's
  chmodSync(P, 0o755);
  const root = join(P, "store");
  const r = rng(ctx.seed ^ 0x5eed);
  const loadMs = ctx.short ? 6_000 : 60_000;
  const init = Bun.spawnSync([ctx.bin, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: root }, stdout: "pipe", stderr: "pipe" });
  if (init.exitCode !== 0) return { status: "FAIL", summary: "init --shared failed", figures: [], failures: [init.stderr.toString()] };
  mkdirSync(join(P, "m"), { mode: 0o777 });
  chmodSync(join(P, "m"), 0o777); // mallory's own scratch files

  let commands = 0, hangs = 0;
  const exits = new Map<string, number>();
  const run = async (user: string, args: string[], o: { ok?: number[]; stdin?: string; env?: Record<string, string> } = {}): Promise<RunResult> => {
    commands++;
    const res = await a2a(ctx, args, { dir: root, stdin: o.stdin, env: { HOME: "/nonexistent", ...o.env }, prefix: asUser(user, { initGroups: true, umask: "022" }), limitMs: LIMIT_MS });
    if (res.hung) hangs++;
    const who = user === U.mallory ? "mallory" : "member";
    const key = `${who} ${args[0]} ${res.code ?? res.signal}`;
    exits.set(key, (exits.get(key) ?? 0) + 1);
    const prob = stderrProblem(res);
    if (prob) v.fail(res.hung ? "hang" : "unclean failure", `${user}: a2a ${args.join(" ").slice(0, 80)}: ${prob}`);
    else if (user !== U.mallory && !(o.ok ?? [0]).includes(res.code!)) v.fail("member refused", `${user}: a2a ${args.join(" ").slice(0, 80)} -> exit ${res.code}: ${res.stderr.trim()}`);
    return res;
  };
  const lines = (s: string): any[] => s.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

  // Setup, as the README says: each agent reads its inbox first; alice binds bob's name to bob.
  await run(U.alice, ["recv", "--as", "alice", "--json"]);
  await run(U.bob, ["recv", "--as", "bob", "--json"]);
  await run(U.alice, ["allow", `bob@${U.bob}`, "--as", "alice"]);
  await run(U.alice, ["pub", "team.a", seal("alice.t0", "first"), "--as", "alice"]);
  await run(U.bob, ["pub", "team.b", seal("bob.t0", "first"), "--as", "bob"]);

  const t0 = performance.now();
  const until = () => performance.now() - t0 < loadMs;
  const members = [{ user: U.alice, name: "alice", peer: "bob" }, { user: U.bob, name: "bob", peer: "alice" }];
  const sent = new Map<string, { to: string; body: string; user: string }>(); // id -> what
  const received: { as: string; m: any }[] = [];
  const pubs: { topic: string; id: number; body: string; user: string }[] = [];
  const forgedMail = new Map<string, string>(); // id -> body: mallory's, accepted at send

  const sender = async (me: (typeof members)[number]) => {
    for (let n = 1; until(); n++) {
      const body = seal(`${me.name}.${n}`, `mail ${n} ${Math.floor(r() * 1e9)}`);
      const res = await run(me.user, ["send", me.peer, body, "--as", me.name, "--json"]);
      if (res.code === 0) sent.set(JSON.parse(res.stdout).id, { to: me.peer, body, user: me.user });
      if (n % 3 === 0) {
        const topic = me.name === "alice" ? "team.a" : "team.b";
        const tb = seal(`${me.name}.t${n}`, `news ${n}`);
        const p = await run(me.user, ["pub", topic, tb, "--as", me.name, "--json"]);
        if (p.code === 0) pubs.push({ topic, id: JSON.parse(p.stdout).id, body: tb, user: me.user });
      }
      await Bun.sleep(between(r, 0, 40)); // pacing of the load, never a wait for a condition
    }
  };
  const receiver = async (me: (typeof members)[number]) => {
    while (until()) {
      const res = await run(me.user, ["recv", "--as", me.name, "--all", "--wait", "--timeout", "1", "--json"], { ok: [0, 124] });
      if (res.code === 0) for (const m of lines(res.stdout)) received.push({ as: me.name, m });
    }
  };
  const hooks = async (me: (typeof members)[number]) => {
    while (until()) {
      await run(me.user, ["hook", "user-prompt-submit"], { stdin: JSON.stringify({ cwd: "/tmp" }), env: { A2A_AGENT: me.name } });
      await Bun.sleep(between(r, 100, 300));
    }
  };

  // mallory: each attack is one shell command; "must" ones must fail.
  const holes = new Map<string, number>();
  const tried = new Map<string, number>();
  const sh = (script: string) => shellAs(U.mallory, `cd '${root}' || exit 9; ${script}`);
  const must = (what: string, script: string) => {
    tried.set(what, (tried.get(what) ?? 0) + 1);
    if (sh(script) === 0) {
      holes.set(what, (holes.get(what) ?? 0) + 1);
      v.fail("hole", `mallory could ${what}`);
    }
  };
  const may = (what: string, script: string) => {
    tried.set(what, (tried.get(what) ?? 0) + 1);
    sh(script);
  };
  const forged = JSON.stringify({ a2a: 1, agent: "alice", mode: "open", allow: [], deny: [], updated_at: 1 });
  const silence = JSON.stringify({ a2a: 1, name: "NAME", announced: "9999999999999999-ffff-zz-ffffff", blocked: [], blocks: 0 });
  const mallory = async () => {
    for (let n = 0; until(); n++) {
      const V = pick(r, ["alice", "bob"]);
      const T = pick(r, ["team.a", "team.b"]);
      const attacks: [string, () => void][] = [
        ["rename an inbox's new/ away", () => must("rename an inbox's new/ away", `mv inbox/${V}/new inbox/${V}/new.m${n} && mkdir inbox/${V}/new`)],
        ["rename an inbox away", () => must("rename an inbox away", `mv inbox/${V} inbox/${V}.m${n} && mkdir inbox/${V}`)],
        ["rename inbox/ away", () => must("rename inbox/ away", `mv inbox inbox.m${n} && mkdir inbox`)],
        ["rename topics/ away", () => must("rename topics/ away", `mv topics topics.m${n} && mkdir topics`)],
        ["rename a topic away", () => must("rename a topic away", `mv topics/${T} topics/${T}.m${n} && mkdir topics/${T}`)],
        ["rename sessions/ away", () => must("rename sessions/ away", `mv sessions sessions.m${n} && mkdir sessions`)],
        ["delete another's mail", () => must("delete another's mail", `ok=1; for f in inbox/${V}/new/*.json inbox/${V}/cur/*.json; do [ -e "$f" ] && [ ! -O "$f" ] && rm "$f" 2>/dev/null && ok=0; done; exit $ok`)],
        ["append to another's mail", () => must("append to another's mail", `ok=1; for f in inbox/${V}/cur/*.json; do [ -O "$f" ] || { printf x >> "$f" 2>/dev/null && ok=0; break; }; done; exit $ok`)],
        ["delete another's topic message", () => must("delete another's topic message", `ok=1; for f in topics/${T}/*.json; do [ -O "$f" ] || { rm "$f" 2>/dev/null && ok=0; }; done; exit $ok`)],
        // Her own files are hers to remove, even in a sticky directory: a hole in a topic's
        // numbers that readers must pass over (lib/fs/topics.ts), not stop at.
        ["delete her own topic messages", () => may("delete her own topic messages", `for f in topics/${T}/*.json; do [ -O "$f" ] && rm "$f"; done`)],
        ["replace alice's policy", () => must("replace alice's policy", `printf '%s\\n' '${forged}' > ../m/p${n} && mv -f ../m/p${n} inbox/alice/policy.json`)],
        ["plant a policy for bob", () => may("plant a policy for bob", `printf garbage > inbox/bob/policy.json`)],
        ["plant a session record", () => may("plant a session record", `printf '%s\\n' '${silence.replace("NAME", V)}' > sessions/${V}.json`)],
      ];
      for (let k = 0; k < 3; k++) pick(r, attacks)[1]();
      if (n % 4 === 0) {
        const body = seal(`mallory.${n}`, "forged");
        const to = V === "alice" ? "bob" : "alice";
        const res = await run(U.mallory, ["send", to, body, "--as", V, "--json"]);
        tried.set("send as another", (tried.get("send as another") ?? 0) + 1);
        if (res.code === 0) forgedMail.set(JSON.parse(res.stdout).id, body);
        await run(U.mallory, ["pub", T, seal(`mallory.t${n}`, "forged"), "--as", V]);
      }
      await Bun.sleep(between(r, 0, 30));
    }
  };

  await Promise.all([...members.map(sender), ...members.map(receiver), ...members.map(hooks), mallory()]);
  const loadSecs = (performance.now() - t0) / 1000;

  // Drain: what is still unread.
  for (const me of members) {
    const res = await run(me.user, ["recv", "--as", me.name, "--all", "--json"]);
    for (const m of lines(res.stdout)) received.push({ as: me.name, m });
  }
  // Mail: once each, exact, with its writer; no forgery of a bound name shown.
  const seen = new Map<string, number>();
  let misattributed = 0;
  for (const { as, m } of received) {
    seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
    const mine = sent.get(m.id);
    const forgery = forgedMail.get(m.id);
    if (mine) {
      if (mine.to !== as || mine.body !== m.body) v.fail("altered", `message ${m.id} to ${mine.to}: read by ${as} as ${short(m.body)}`);
      if (m.user !== mine.user) { misattributed++; v.fail("misattributed", `message ${m.id} from ${mine.user} shown as OS user ${m.user}`); }
    } else if (forgery !== undefined) {
      if (m.user !== U.mallory) { misattributed++; v.fail("misattributed", `mallory's message ${m.id} shown as OS user ${m.user}`); }
      if (as === "alice" && m.from === "bob") v.fail("forgery shown", `mallory's "bob" reached alice, who bound bob to ${U.bob}`);
    } else v.fail("altered", `a message nobody reported sent was read by ${as}: ${short(JSON.stringify(m))}`);
  }
  let lost = 0;
  for (const [id, s] of sent) {
    const n = seen.get(id) ?? 0;
    if (n === 0) { lost++; v.fail("lost", `message ${id} to ${s.to} never read`); }
    else if (n > 1) v.fail("read twice", `message ${id} read ${n} times`);
  }
  // Topics: every member's message read back once, in order, with its writer.
  let topicLost = 0;
  const read = lines((await run(U.alice, ["sub", "team.>", "--from-start", "--json"])).stdout);
  for (const t of ["team.a", "team.b"]) {
    const ids = read.filter((m) => m.topic === t).map((m) => m.id);
    if (ids.some((id, i) => i > 0 && id <= ids[i - 1])) v.fail("topic order", `${t} read back as ids ${ids.slice(0, 20).join(",")}...`);
  }
  for (const m of read) {
    const pub = pubs.find((p) => p.topic === m.topic && p.id === m.id);
    const expected = pub ? pub.user : m.body.includes("~mallory.") ? U.mallory : m.id === 1 ? (m.topic === "team.a" ? U.alice : U.bob) : undefined;
    if (pub && pub.body !== m.body) v.fail("altered", `${m.topic} #${m.id}: ${short(m.body)}`);
    if (expected === undefined) v.fail("altered", `${m.topic} #${m.id} nobody reported: ${short(m.body)}`);
    else if (m.user !== expected) { misattributed++; v.fail("misattributed", `${m.topic} #${m.id} by ${expected} shown as OS user ${m.user}`); }
  }
  for (const p of pubs) if (!read.some((m) => m.topic === p.topic && m.id === p.id)) { topicLost++; v.fail("lost", `${p.topic} #${p.id} not read back`); }
  // The plants change nothing: a last message is announced to each; doctor names them.
  for (const me of members) {
    const other = members.find((o) => o.name === me.peer)!;
    const body = seal(`${other.name}.last`, "announce me");
    await run(other.user, ["send", me.name, body, "--as", other.name]);
    const h = await run(me.user, ["hook", "user-prompt-submit"], { stdin: JSON.stringify({ cwd: "/tmp" }), env: { A2A_AGENT: me.name } });
    if (!h.stdout.includes(body)) v.fail("silenced", `${me.name}'s prompt hook did not announce a new message: ${short(h.stdout)}`);
  }
  const doc = JSON.parse((await run(U.bob, ["doctor", "--json"], { ok: [0, 1] })).stdout);
  const owners = doc.checks.filter((c: any) => c.check === "owners" && c.level === "problem").map((c: any) => c.detail as string);
  if (tried.has("plant a policy for bob") && !owners.some((d: string) => d.includes("inbox/bob/policy.json"))) v.fail("not reported", `doctor did not name mallory's policy for bob: ${short(owners.join("; "))}`);

  const mustTried = [...tried].filter(([k]) => !["plant a policy for bob", "plant a session record", "send as another", "delete her own topic messages"].includes(k));
  const figures: [string, string][] = [
    ["load", `${loadSecs.toFixed(1)} s, ${commands} a2a processes by 3 OS users, hangs ${hangs}`],
    ["attacks", [...tried].sort().map(([k, n]) => `${k} ${n}${holes.has(k) ? ` (${holes.get(k)} LANDED)` : ""}`).join(", ")],
    ["mail", `${sent.size} sent by members, ${sent.size - lost} read exactly once, ${lost} lost; ${forgedMail.size} of mallory's accepted at send, each shown as hers`],
    ["topics", `${pubs.length} published by members, ${pubs.length - topicLost} read back, ${read.length} messages in all`],
    ["misattributed", String(misattributed)],
    ["doctor", `${owners.length} owner problems named`],
    ["exits", [...exits].sort().map(([k, n]) => `${k}: ${n}`).join(", ")],
  ];
  const landed = [...holes.values()].reduce((a, b) => a + b, 0);
  const summary = `${mustTried.reduce((a, [, n]) => a + n, 0)} attacks that must fail: ${landed} landed; mail lost ${lost}, topic messages lost ${topicLost}, misattributed ${misattributed}`;
  return v.outcome(summary, figures);
}
