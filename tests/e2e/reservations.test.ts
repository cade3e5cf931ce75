// Reservations on paths through the compiled binary (docs/PROTOCOL.md, "Reservations on paths"),
// on the engine under test (testStore()): racing processes, a real git repository with a
// subdirectory and a worktree, bad input, a crashed holder, --wait, and the MCP tools.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect, text } from "../harness/mcp";
import { a2a, collect, readUntil, spawnA2A, tempDir, testStore, treeListens, until } from "../harness/run";

setDefaultTimeout(120_000);

function git(cwd: string, ...args: string[]): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
}

// A git repository with a commit, src/api/ in it, and a second worktree beside it.
function repository() {
  const d = tempDir("a2a-resv-");
  const main = join(d.path, "main");
  mkdirSync(join(main, "src", "api"), { recursive: true });
  writeFileSync(join(main, "src", "api", "routes.ts"), "x\n");
  git(d.path, "init", "-q", "-b", "main", main);
  git(main, "add", ".");
  git(main, "commit", "-q", "-m", "one");
  const wt = join(d.path, "wt");
  git(main, "worktree", "add", "-q", "-b", "side", wt);
  return { d, main: realpathSync(main), wt: realpathSync(wt) };
}

const listed = async (dir: string, cwd: string) => JSON.parse((await a2a(["reservations", "--json"], { dir, cwd })).stdout).reservations.map((r: any) => [r.pattern, r.holder]);

describe("reservations through the binary", () => {
  test("two processes reserving overlapping patterns at once, round after round: exactly one wins, the other exits 4 naming it", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    for (let i = 0; i < 8; i++) {
      const [a, b] = await Promise.all([
        collect(spawnA2A(["reserve", `src/r${i}/**`, "--as", "alice"], { dir: s.path, cwd: r.main })),
        collect(spawnA2A(["reserve", `r${i}/a.ts`, "--as", "bob"], { dir: s.path, cwd: join(r.wt, "src") })),
      ]);
      expect([a.code, b.code].sort()).toEqual([0, 4]);
      const [winner, loser] = a.code === 0 ? ["alice", b] : ["bob", a];
      expect(loser.stderr).toMatch(new RegExp(`^a2a: cannot reserve as \\w+: .*: ${winner} holds src/r${i}/\\S+ \\(exclusive\\) until \\S+Z; nothing was reserved`));
      expect((await listed(s.path, r.main)).filter((x: string[]) => x[0].startsWith(`src/r${i}/`))).toEqual([[winner === "alice" ? `src/r${i}/**` : `src/r${i}/a.ts`, winner]]);
    }
  });

  test("from a subdirectory, by absolute path and from another worktree, one reservation is seen and refused alike", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    const taken = await a2a(["reserve", "api", "--as", "alice", "--reason", "splitting routes", "--json"], { dir: s.path, cwd: join(r.main, "src") });
    expect(taken.code).toBe(0);
    expect(JSON.parse(taken.stdout).map((x: any) => [x.pattern, x.holder, x.reason])).toEqual([["src/api", "alice", "splitting routes"]]);
    expect(await listed(s.path, r.wt)).toEqual([["src/api", "alice"]]);
    const covering = await a2a(["reservations", join(r.wt, "src", "api", "routes.ts")], { dir: s.path, cwd: r.wt });
    expect(covering.stdout).toMatch(/^PATTERN +HOLDER +KIND +UNTIL +REASON\nsrc\/api +alice +exclusive +\S+Z +splitting routes\n$/);
    for (const [cwd, p] of [[r.wt, "src/api/routes.ts"], [join(r.wt, "src", "api"), "routes.ts"], [r.main, join(r.main, "src", "api", "new.ts")]]) {
      const e = await a2a(["reserve", p, "--as", "bob"], { dir: s.path, cwd });
      expect({ p, code: e.code, says: e.stderr.includes("alice holds src/api (exclusive: splitting routes) until") }).toEqual({ p, code: 4, says: true });
    }
    expect((await a2a(["release", "src/api", "--as", "alice"], { dir: s.path, cwd: r.wt })).stdout).toBe("released src/api\n");
    expect(await listed(s.path, r.main)).toEqual([]);
  });

  test("bad input: a pattern escaping the repository, an empty one, a malformed glob: exit 2 with the reason, nothing reserved", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    const cases: [string[], RegExp][] = [
      [["ok", "../outside"], /^a2a: invalid pattern "\.\.\/outside": it is outside the repository at \S+\n$/],
      [["ok", "/etc/passwd"], /^a2a: invalid pattern "\/etc\/passwd": it is outside the repository/],
      [["ok", ""], /^a2a: invalid pattern "": it is empty\n$/],
      [["ok", "src/[a-"], /^a2a: invalid pattern "src\/\[a-": .*class/],
      [["ok", "--ttl", "0"], /^a2a: a TTL of 0 s is not a positive duration/],
    ];
    for (const [args, says] of cases) {
      const e = await a2a(["reserve", ...args, "--as", "alice"], { dir: s.path, cwd: r.main });
      expect({ args, code: e.code, stderr: e.stderr, stdout: e.stdout }).toEqual({ args, code: 2, stderr: expect.stringMatching(says), stdout: "" });
    }
    expect(await listed(s.path, r.main)).toEqual([]);
  });

  test("a crashed holder's reservation ends at its TTL: a waiter gets the path then, not before", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    // The holder reserves, then is killed outright while it still runs.
    const holder = Bun.spawn(["sh", "-c", `"$0" reserve db --ttl 2s --as alice --json && exec sleep 600`, process.env.A2A_BIN ?? join(import.meta.dir, "..", "..", "dist", "a2a")], {
      cwd: r.main, env: { ...process.env, A2A_DIR: s.path }, stdout: "pipe", stderr: "pipe",
    });
    const said = await readUntil(holder.stdout, (t) => t.includes("\n"));
    holder.kill("SIGKILL");
    await holder.exited;
    const alice = JSON.parse(said)[0];
    const bob = await a2a(["reserve", "db/schema.sql", "--as", "bob", "--wait", "--timeout", "60", "--json"], { dir: s.path, cwd: r.main });
    expect(bob.code).toBe(0);
    expect(JSON.parse(bob.stdout)[0].created_at).toBeGreaterThanOrEqual(alice.expires_at);
    expect(await listed(s.path, r.main)).toEqual([["db/schema.sql", "bob"]]);
  });

  test("--wait blocks until the holder releases, then reserves; --timeout ends it with 124 and nothing reserved", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    expect((await a2a(["reserve", "src", "--as", "alice"], { dir: s.path, cwd: r.main })).code).toBe(0);
    const late = await a2a(["reserve", "src/x", "--as", "bob", "--wait", "--timeout", "0"], { dir: s.path, cwd: r.main });
    expect({ code: late.code, stderr: late.stderr }).toEqual({ code: 124, stderr: "a2a: timed out waiting for src/x: nothing was reserved; raise --timeout or see a2a reservations\n" });
    const waiter = spawnA2A(["reserve", "src/**", "--as", "bob", "--wait", "--timeout", "60"], { dir: s.path, cwd: r.wt });
    await until(() => treeListens(waiter.pid), 20_000, "the waiter's watch");
    expect((await a2a(["release", "--all", "--as", "alice"], { dir: s.path, cwd: r.main })).code).toBe(0);
    const got = await collect(waiter);
    expect({ code: got.code, out: got.stdout }).toEqual({ code: 0, out: expect.stringMatching(/^reserved src\/\*\* \(exclusive\) as bob until \S+Z\n$/) });
    expect(await listed(s.path, r.main)).toEqual([["src/**", "bob"]]);
  });

  test("gc drops expired reservations, and only those", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    expect((await a2a(["reserve", "c", "--as", "bob"], { dir: s.path, cwd: r.main })).code).toBe(0);
    const short = await a2a(["reserve", "a", "b", "--ttl", "1ms", "--as", "alice", "--json"], { dir: s.path, cwd: r.main }); // the last change: nothing after it drops them
    const until = Math.max(...JSON.parse(short.stdout).map((x: any) => x.expires_at));
    while (Date.now() <= until * 1000) await Bun.sleep(Math.ceil(until * 1000 - Date.now()) + 1); // the TTL's own instant, no event marks it
    const gc = await a2a(["gc", "--json"], { dir: s.path });
    expect(JSON.parse(gc.stdout).reservations_removed).toBe(2);
    expect(await listed(s.path, r.main)).toEqual([["c", "bob"]]);
    expect(JSON.parse((await a2a(["gc", "--json"], { dir: s.path })).stdout).reservations_removed).toBe(0);
  });

  test("MCP: reserve_files, list_reservations and release_files in the files tool set, the holder being the session", async () => {
    using s = testStore();
    const r = repository();
    using _ = r.d;
    const [alice, bob] = await Promise.all([connect(s.path, { A2A_AGENT: "alice" }, { cwd: r.main, tools: "files" }), connect(s.path, { A2A_AGENT: "bob" }, { cwd: r.wt, tools: "default,files" })]);
    try {
      expect((await alice.client.listTools()).tools.map((t) => t.name)).toEqual(["reserve_files", "release_files", "list_reservations"]);
      const got = await alice.json("reserve_files", { paths: ["src/api/**"], reason: "routes", ttl: 600 });
      expect(got.reservations.map((x: any) => [x.pattern, x.holder, x.exclusive, x.reason])).toEqual([["src/api/**", "alice", true, "routes"]]);
      const refused = await bob.call("reserve_files", { paths: "src/api/routes.ts" });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(/cannot reserve as bob: src\/api\/routes\.ts: alice holds src\/api\/\*\* \(exclusive: routes\) until \S+Z; nothing was reserved\. Wait for them with wait, message them, or see list_reservations\(\) \(ECONFLICT\)$/);
      expect((await bob.json("list_reservations", { path: "src/api/routes.ts" })).reservations.map((x: any) => x.holder)).toEqual(["alice"]);
      expect(await alice.json("release_files", {})).toEqual({ ok: true, released: ["src/api/**"] });
      expect((await bob.json("reserve_files", { paths: ["src/api/routes.ts"], exclusive: false })).reservations.map((x: any) => [x.holder, x.exclusive])).toEqual([["bob", false]]);
      expect(await listed(s.path, r.main)).toEqual([["src/api/routes.ts", "bob"]]);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });
});
