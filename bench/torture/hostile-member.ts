// A hostile member against blobs and reservations (issue 32): what a member of a team can try
// against another's attachments and edit guards, with the store's own means and by hand. (The
// same member as a PostgreSQL role, with and without row-level security, is pg-roles.ts.)
//
// 1. Shared directory store (three OS users, `a2a init --shared`): alice sends bob mail with
//    attachments while mallory deletes, replaces, rewrites and chmods blobs and their
//    directories, plants wrong bytes, links and FIFOs under the digests of files alice is about
//    to attach, puts those files first herself and then removes or blanks her own copies, and
//    runs gc with the shortest grace she is allowed. bob fetches every attachment with `a2a get`
//    at the end, after every attack.
// 2. The edit guards: alice holds src/** of a repository; mallory's agent tries every side door
//    the review found (a symlinked path, a session outside the repository, a relative path
//    from a symlinked cwd, input over 1 MiB, apply_patch headers as Codex accepts them, an
//    origin added or spelled another way, a commit, a merge, pushes of a merge and of a
//    cherry-pick).
//
// Verdicts (never timing), each part counted as attempts, landed, lost:
// - every attack marked "must" fails (a success is a hole, named);
// - 0 lost: every message alice was told was sent reaches bob, and `a2a get` of its
//   attachment gives exactly alice's bytes; 0 planted bytes handed out;
// - every side door is denied (the hook) or refused (git); no stack trace, no hang.

import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canMakeUsers, makeUsers, shellAs, asUser } from "../../tests/harness/run";
import { a2a, type Ctx, type Outcome, type RunResult, scenarioDir, short, stderrProblem, Verdict } from "./common";
import { between, pick, rng } from "./payload";

const LIMIT_MS = 40_000;
const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const lines = (s: string): any[] => s.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

// What one part tried and what came of it.
interface Tally { attempts: number; landed: number; lost: number; notes: string[] }
const tally = (): Tally => ({ attempts: 0, landed: 0, lost: 0, notes: [] });
const line = (t: Tally) => `${t.attempts} attempts, ${t.landed} landed, ${t.lost} lost${t.notes.length ? ` (${t.notes.join("; ")})` : ""}`;

export async function hostileMember(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const figures: [string, string][] = [];
  const parts: string[] = [];
  const P = scenarioDir(ctx, "hostile-member");

  if (canMakeUsers) {
    const t = await sharedBlobs(ctx, v, P);
    figures.push(["shared directory store, blobs", line(t)]);
    parts.push(`shared dir ${t.landed}/${t.attempts} landed, ${t.lost} lost`);
  } else figures.push(["shared directory store, blobs", "skipped: needs root with useradd, groupadd and setpriv"]);

  const g = await sideDoors(ctx, v, P);
  figures.push(["edit guards, side doors", line(g)]);
  parts.push(`guards ${g.landed}/${g.attempts} landed`);
  return v.outcome(parts.join(", "), figures);
}

// ---- 1. a shared directory store ---------------------------------------------------------

async function sharedBlobs(ctx: Ctx, v: Verdict, P: string): Promise<Tally> {
  const team = makeUsers(["alice", "bob", "mallory"] as const, "a2ah");
  try {
    return await sharedAttack(ctx, v, P, team.users, team.group);
  } finally {
    team.remove();
  }
}

async function sharedAttack(ctx: Ctx, v: Verdict, P: string, U: { alice: string; bob: string; mallory: string }, GROUP: string): Promise<Tally> {
  const t = tally();
  const r = rng(ctx.seed ^ 0xb10b);
  chmodSync(ctx.work, 0o711);
  chmodSync(P, 0o755);
  const root = join(P, "store");
  const files = join(P, "files"); // alice's attachments, readable by all: mallory knows what alice will send
  const out = join(P, "bob-out");
  const scratch = join(P, "m");
  for (const d of [files, out, scratch]) {
    mkdirSync(d, { recursive: true });
    chmodSync(d, d === files ? 0o755 : 0o777);
  }
  const init = Bun.spawnSync([ctx.bin, "init", "--shared", GROUP], { env: { ...process.env, A2A_DIR: root }, stdout: "pipe", stderr: "pipe" });
  if (init.exitCode !== 0) {
    v.fail("setup", `init --shared: ${init.stderr.toString()}`);
    return t;
  }
  const run = async (user: string, args: string[], ok: number[] = [0]): Promise<RunResult> => {
    const res = await a2a(ctx, args, { dir: root, env: { HOME: "/nonexistent" }, prefix: asUser(user, { initGroups: true, umask: "022" }), limitMs: LIMIT_MS });
    const prob = stderrProblem(res);
    if (prob) v.fail(res.hung ? "hang" : "unclean failure", `${user}: a2a ${args.join(" ").slice(0, 80)}: ${prob}`);
    else if (user !== U.mallory && !ok.includes(res.code!)) v.fail("member refused", `${user}: a2a ${args.join(" ").slice(0, 80)} -> exit ${res.code}: ${res.stderr.trim()}`);
    return res;
  };
  // The file alice attaches n-th: known in advance, so mallory can plant under its digest.
  const content = (n: number) => `report ${n} ${ctx.seed}\n${"row,".repeat(50 + (n % 7) * 40)}\n`;
  const digestOf = (n: number) => sha256(content(n));

  await run(U.bob, ["recv", "--as", "bob", "--json"]);
  const loadMs = ctx.short ? 6_000 : 45_000;
  const t0 = performance.now();
  const until = () => performance.now() - t0 < loadMs;
  const sent = new Map<string, { n: number; digest: string }>(); // message id -> its attachment
  let refused = 0, next = 1;
  const got = new Map<string, "ok" | "wrong" | "failed">();

  const alice = async () => {
    while (until()) {
      const n = next++;
      const f = join(files, `a${n}.txt`);
      writeFileSync(f, content(n));
      chmodSync(f, 0o644);
      // Whatever mallory planted, alice's send goes through (she keeps her own copy): a refusal
      // is a member refused.
      const res = await run(U.alice, ["send", "bob", `report ${n}`, "--attach", f, "--as", "alice", "--json"]);
      if (res.code === 0) sent.set(JSON.parse(res.stdout).id, { n, digest: digestOf(n) });
      else refused++;
      await Bun.sleep(between(r, 0, 40)); // pacing of the load, never a wait for a condition
    }
  };
  const fetch = async (m: any) => {
    for (const a of m.attachments ?? []) {
      const dest = join(out, `${m.id}-${a.digest.slice(7, 19)}`);
      const res = await run(U.bob, ["get", a.digest, "-o", dest], [0, 1]);
      const want = sent.get(m.id);
      const bytes = res.code === 0 && existsSync(dest) ? readFileSync(dest, "utf8") : undefined;
      got.set(m.id, bytes === undefined ? "failed" : want && bytes === content(want.n) ? "ok" : "wrong");
      if (bytes !== undefined && bytes.startsWith("planted")) v.fail("planted bytes handed out", `bob's get of ${a.digest} gave mallory's bytes`);
    }
  };
  // bob reads his mail as it comes and fetches the attachments at the end, after every attack:
  // an attachment must last as long as the message naming it, not just until its first reader.
  const inbox: any[] = [];
  const bob = async () => {
    while (until()) {
      const res = await run(U.bob, ["recv", "--as", "bob", "--all", "--wait", "--timeout", "1", "--json"], [0, 124]);
      if (res.code === 0) inbox.push(...lines(res.stdout));
    }
  };
  // mallory: each attack one shell command; "must" ones must fail.
  const sh = (script: string) => shellAs(U.mallory, `cd '${root}' || exit 9; ${script}`);
  const must = (what: string, script: string) => {
    t.attempts++;
    if (sh(script) === 0) {
      t.landed++;
      v.fail("hole", `mallory could ${what}`);
    }
  };
  const others = `for f in blobs/sha256/*; do [ -f "$f" ] && [ ! -O "$f" ] && break; done`;
  const mallory = async () => {
    for (let k = 0; until(); k++) {
      const attacks: [string, () => void | Promise<void>][] = [
        ["delete another's blob", () => must("delete another's blob", `${others}; [ -f "$f" ] && rm -f "$f" 2>/dev/null && [ ! -e "$f" ]`)],
        ["replace another's blob", () => must("replace another's blob", `${others}; [ -f "$f" ] && printf planted > ../m/r${k} && mv -f ../m/r${k} "$f" 2>/dev/null`)],
        ["append to another's blob", () => must("append to another's blob", `${others}; [ -f "$f" ] && printf planted >> "$f" 2>/dev/null`)],
        ["chmod another's blob", () => must("chmod another's blob", `${others}; [ -f "$f" ] && chmod 0 "$f" 2>/dev/null`)],
        ["close blobs/sha256/", () => must("close blobs/sha256/", `chmod 2750 blobs/sha256 2>/dev/null`)],
        ["close blobs/", () => must("close blobs/", `chmod 2750 blobs 2>/dev/null`)],
        ["rename blobs/sha256/ away", () => must("rename blobs/sha256/ away", `mv blobs/sha256 blobs/s${k} 2>/dev/null && mkdir blobs/sha256`)],
        ["gc with no grace", async () => {
          t.attempts++;
          const res = await run(U.mallory, ["gc", "--blob-grace", "0"]);
          if (res.code === 0) { t.landed++; v.fail("hole", "mallory's gc --blob-grace 0 ran"); }
        }],
        ["gc", async () => void (t.attempts++, await run(U.mallory, ["gc", "-q"]))],
        // Put the right bytes first, under her own name, then take her file away (or make it
        // unreadable) once alice's message names it: alice's attachment must not depend on it.
        ["put a future attachment first", async () => {
          t.attempts++;
          const n = next + 1 + Math.floor(r() * 3);
          const f = join(scratch, `p${k}.txt`);
          writeFileSync(f, content(n));
          chmodSync(f, 0o644);
          await run(U.mallory, ["put", f]);
        }],
        ["take her own blobs away", () => void (t.attempts++, sh(`for f in blobs/sha256/*; do [ -O "$f" ] && rm -f "$f"; done; true`))],
        ["make her own blobs unreadable", () => void (t.attempts++, sh(`for f in blobs/sha256/*; do [ -O "$f" ] && chmod 0 "$f"; done; true`))],
        // Plant wrong bytes (or a link, or a FIFO) under the digest of a file alice attaches
        // soon: may land as a file; must never reach bob as alice's.
        ["plant under a future digest", () => {
          t.attempts++;
          const d = digestOf(next + 1 + Math.floor(r() * 3));
          const how = pick(r, [`printf planted-${k} > blobs/sha256/${d}`, `ln -s /etc/passwd blobs/sha256/${d}`, `mkfifo blobs/sha256/${d}`]);
          sh(`${how} 2>/dev/null`);
        }],
      ];
      await pick(r, attacks)[1]();
      await Bun.sleep(between(r, 0, 30));
    }
  };
  await Promise.all([alice(), bob(), mallory()]);
  // Drain what is still unread, then judge every message alice was told was sent.
  const rest = await run(U.bob, ["recv", "--as", "bob", "--all", "--json"]);
  for (const m of [...inbox, ...lines(rest.stdout)]) await fetch(m);
  for (const [id, s] of sent) {
    const g = got.get(id);
    if (g === "ok") continue;
    t.lost++;
    v.fail(g === "wrong" ? "altered attachment" : "lost attachment", `message ${id} (file ${s.n}, ${s.digest.slice(0, 12)}): ${g ?? "never read"}`);
  }
  // doctor names what mallory planted (it may exit 1: it found problems).
  const doc = await run(U.bob, ["doctor"], [0, 1]);
  t.notes.push(`${sent.size} sent with an attachment, ${refused} refused at send, doctor ${doc.code === 1 ? "named problems" : "found none"}`);
  return t;
}

// ---- 2. the edit guards' side doors -------------------------------------------------------

async function sideDoors(ctx: Ctx, v: Verdict, P: string): Promise<Tally> {
  const t = tally();
  const base = join(P, "guards");
  mkdirSync(base, { recursive: true });
  const store = join(base, "store");
  const repo = join(base, "repo");
  const git = (cwd: string, args: string[], env: Record<string, string> = {}) =>
    Bun.spawnSync(["git", "-c", "user.email=m@example.invalid", "-c", "user.name=m", "-c", "init.defaultBranch=main", ...args], { cwd, env: { ...process.env, A2A_DIR: store, ...env }, stdout: "pipe", stderr: "pipe" });
  mkdirSync(join(repo, "src"), { recursive: true });
  git(base, ["init", "-q", repo]);
  writeFileSync(join(repo, "src", "api.ts"), "export {};\n");
  writeFileSync(join(repo, "README"), "r\n");
  git(repo, ["add", "."]);
  git(repo, ["commit", "-q", "-m", "one"]);
  const res = await a2a(ctx, ["reserve", "src/**", "--as", "alice", "--reason", "api rework", "--ttl", "1h"], { dir: store, cwd: repo, limitMs: LIMIT_MS });
  if (res.code !== 0) {
    v.fail("setup", `reserve: ${res.stderr}`);
    return t;
  }
  const file = join(repo, "src", "api.ts");
  const hook = async (door: string, cwd: string, event: object, agent?: string, env: Record<string, string> = {}) => {
    t.attempts++;
    const r = await a2a(ctx, ["hook", "pre-tool-use", ...(agent ? ["--agent", agent] : [])], { dir: store, cwd, stdin: JSON.stringify({ cwd, hook_event_name: "PreToolUse", ...event }), env: { A2A_AGENT: "mallory", ...env }, limitMs: LIMIT_MS });
    let decision: string | undefined;
    try {
      decision = JSON.parse(r.stdout).hookSpecificOutput?.permissionDecision;
    } catch {}
    if (decision !== "deny") {
      t.landed++;
      v.fail("side door", `${door}: exit ${r.code}, stdout ${short(r.stdout)}, stderr ${short(r.stderr)}`);
    }
  };
  const edit = (path: string) => ({ tool_name: "Edit", tool_input: { file_path: path, old_string: "export {};", new_string: "x" } });
  const patch = (body: string) => ({ tool_name: "apply_patch", tool_input: { command: `*** Begin Patch\n${body}\n*** End Patch\n` } });

  const alias = join(base, "alias");
  symlinkSync(repo, alias);
  await hook("an edit through a symlinked directory", base, edit(join(alias, "src", "api.ts")));
  await hook("a relative path from a symlinked cwd", join(alias, "src"), edit("api.ts"));
  await hook("a session started outside the repository", base, edit(file));
  await hook("a Write of 1.1 MB", repo, { tool_name: "Write", tool_input: { file_path: file, content: "y".repeat(1_100_000) } });
  for (const body of [" *** Update File: src/api.ts\n@@\n-export {};\n+x", "\t*** Delete File: src/api.ts", "*** Update File: src/old.ts\n*** Move to: src/api.ts\n@@\n-a\n+b"]) {
    await hook(`a Codex patch ${short(body.split("\n")[0])}`, repo, patch(body), "codex");
  }
  // `..` after a link goes up from the link's target (x/ln -> src/deep: x/ln/../api.ts is src/api.ts).
  const x = join(base, "x");
  mkdirSync(join(repo, "src", "deep"), { recursive: true });
  mkdirSync(x, { recursive: true });
  symlinkSync(join(repo, "src", "deep"), join(x, "ln"));
  await hook("an absolute Write to link/../api.ts", x, { tool_name: "Write", tool_input: { file_path: `${x}/ln/../api.ts`, content: "x" } });
  await hook("a Codex patch of link/../api.ts", x, patch("*** Update File: ln/../api.ts\n@@\n-export {};\n+x"), "codex");
  // A nested repository's file under A2A_REPO (both repositories are name:proj; src/** is the outer one's).
  const nested = join(repo, "src", "nested");
  git(repo, ["init", "-q", nested]);
  writeFileSync(join(nested, "a.ts"), "a\n");
  await hook("a nested repository's file under A2A_REPO", repo, edit(join(nested, "a.ts")), undefined, { A2A_REPO: "proj" });
  // An origin added after the reservation, then the same repository spelled another way.
  for (const url of ["https://github.com/Org/Repo.git", "git@github.com:org/repo.git"]) {
    git(repo, ["remote", "remove", "origin"]);
    git(repo, ["remote", "add", "origin", url]);
    await hook(`an edit after origin became ${url}`, repo, edit(file));
  }
  git(repo, ["remote", "remove", "origin"]);

  // git: commit, merge, cherry-pick and push of reserved changes as mallory, the guard installed.
  const gi = await a2a(ctx, ["guard", "install"], { dir: store, cwd: repo, limitMs: LIMIT_MS });
  if (gi.code !== 0) {
    v.fail("setup", `guard install: ${gi.stderr}`);
    return t;
  }
  const asMallory = { A2A_AGENT: "mallory" };
  const refused = (door: string, r: { exitCode: number | null; stderr: Uint8Array }) => {
    t.attempts++;
    if (r.exitCode === 0) {
      t.landed++;
      v.fail("side door", `${door} went through the guard`);
    }
  };
  // A branch that changed src/api.ts, made with --no-verify (as another clone without the guard would).
  git(repo, ["checkout", "-q", "-b", "side"]);
  writeFileSync(file, "export const side = 1;\n");
  git(repo, ["commit", "-q", "--no-verify", "-am", "side change"]);
  git(repo, ["checkout", "-q", "main"]);
  writeFileSync(join(repo, "README"), "r2\n");
  git(repo, ["commit", "-q", "--no-verify", "-am", "main moves on"]);
  writeFileSync(file, "export const direct = 1;\n");
  refused("a commit of the reserved file", git(repo, ["commit", "-q", "-am", "direct"], asMallory));
  git(repo, ["checkout", "-q", "--", "src/api.ts"]);
  refused("a merge bringing the reserved change", git(repo, ["merge", "--no-ff", "-q", "-m", "merge side", "side"], asMallory));
  git(repo, ["merge", "--abort"]);
  git(repo, ["reset", "-q", "--hard", "HEAD"]);
  // A push of a merge made around the guard (--no-verify) to a bare remote: the push guard sees it.
  const bare = join(base, "remote.git");
  git(base, ["init", "-q", "--bare", bare]);
  git(repo, ["merge", "--no-ff", "--no-verify", "-q", "-m", "merge side", "side"]);
  refused("a push carrying a merge of the reserved change", git(repo, ["push", "-q", bare, "main"], asMallory));
  // The same change cherry-picked (no hook runs before a cherry-pick's commit: advisory there,
  // README says so), then pushed: the push guard sees what the push carries.
  git(repo, ["reset", "-q", "--hard", "HEAD~1"]);
  git(repo, ["cherry-pick", "side"]);
  refused("a push carrying a cherry-pick of the reserved change", git(repo, ["push", "-q", bare, "main"], asMallory));
  return t;
}
