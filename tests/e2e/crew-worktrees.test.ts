// `crew down` leaves no stray worktree (issue 36), through the compiled binary with a stand-in
// agent on PATH: the worktrees a2a made for its agent workers are removed when everything in
// them is committed (their branches stay: they hold the work), kept with one line when not; a
// worktree a2a did not make, beside them, is never touched; and nothing else is left: no
// process, no claim, no lease.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, exitWithin, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { GIT_ENV, sh, userRepo } from "./fixtures/crew";

setDefaultTimeout(120_000);

const js = async (args: string[], dir: string) => {
  const r = await a2a([...args, "--json"], { dir });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
  return JSON.parse(r.stdout);
};

function procsWith(marker: string): number[] {
  return readdirSync("/proc").filter((d) => {
    try {
      return /^\d+$/.test(d) && readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

// A stand-in `claude`: it leaves a file in its worktree, commits it when it is worker "neat",
// and then works on until stopped.
function standIn(root: string): string {
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "claude"), `#!/bin/sh
cat >/dev/null
echo "$A2A_AGENT" > "work-$A2A_AGENT.txt"
if [ "$A2A_AGENT" = neat ]; then git add work-neat.txt && git commit -q -m "neat's work"; fi
exec sleep 979.5
`);
  chmodSync(join(bin, "claude"), 0o755);
  return `${bin}:${process.env.PATH}`;
}

describe("crew down: no stray worktree", () => {
  test("a committed worktree is removed (its branch stays), one with changes kept with a line, the user's own untouched; no process, claim or lease left", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const crewDir = join(d.path, "app.crew");
    sh(["git", "worktree", "add", "-q", "-b", "mine", join(crewDir, "mine")], repo); // the user's own
    for (const p of ["one", "two"]) expect((await a2a(["task", "add", "q", p], { dir: store.path })).code).toBe(0);
    writeFileSync(join(repo, "..", "crew.toml"), 'name = "tidy"\n[[worker]]\nname = "neat"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n[[worker]]\nname = "messy"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n');
    const up = spawnA2A(["crew", "up", join(d.path, "crew.toml")], { dir: store.path, env: { ...GIT_ENV, PATH: standIn(d.path) } });
    const stderr = up.stderr as ReadableStream<Uint8Array>;
    try {
      await until(() => procsWith("979.5").length === 2, 60_000, "both workers at work");
      await until(() => sh(["git", "log", "--format=%s", "a2a/neat"], repo).includes("neat's work"), 30_000, "neat's commit");
      const down = await a2a(["crew", "down", "tidy"], { dir: store.path });
      expect(down).toEqual({ code: 0, stdout: "crew tidy is down\n", stderr: "" });
      expect(await exitWithin(up, 30_000)).toBe(0);
      const said = await readUntil(stderr, () => false, 5_000);
      expect(said).toContain(`a2a crew: neat: removed its worktree ${join(crewDir, "neat")}; the work is on branch a2a/neat\n`);
      expect(said).toContain(`a2a crew: messy: kept its worktree ${join(crewDir, "messy")}: it has changes not committed (its branch a2a/messy holds what was committed)\n`);
    } finally {
      if (up.exitCode === null) up.kill("SIGKILL");
    }
    expect(procsWith("979.5")).toEqual([]);
    expect(await js(["task", "list", "--state", "claimed"], store.path)).toEqual([]);
    expect(await js(["lease", "list"], store.path)).toEqual([]);
    // neat's worktree gone, its work on its branch; messy's kept as it was; the user's untouched.
    expect(existsSync(join(crewDir, "neat"))).toBe(false);
    expect(sh(["git", "show", "a2a/neat:work-neat.txt"], repo)).toBe("neat\n");
    expect(readFileSync(join(crewDir, "messy", "work-messy.txt"), "utf8")).toBe("messy\n");
    expect(existsSync(join(crewDir, "mine", "src", "api.ts"))).toBe(true);
    const listed = sh(["git", "worktree", "list", "--porcelain"], repo).split("\n").filter((l) => l.startsWith("branch ")).sort();
    expect(listed).toEqual(["branch refs/heads/a2a/messy", "branch refs/heads/main", "branch refs/heads/mine"]);
  });

  test("a worktree holding a git repository of its own (ignored, with commits only it has) is kept, naming it; one whose only leftovers are ignored build output is removed", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const crewDir = join(d.path, "app.crew");
    for (const p of ["one", "two"]) expect((await a2a(["task", "add", "q", p], { dir: store.path })).code).toBe(0);
    // Each worker commits a .gitignore on its branch, then leaves an ignored directory: "nest" a
    // repository with a commit of its own, "built" build output.
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh
cat >/dev/null
echo "out/" > .gitignore && git add .gitignore && git commit -q -m ignore
mkdir out
if [ "$A2A_AGENT" = nest ]; then git init -q out && (cd out && echo precious > p && git add p && git commit -q -m only-here); else echo built > out/app.js; fi
touch "$READY_DIR/$A2A_AGENT.ready"
exec sleep 979.5
`);
    chmodSync(join(bin, "claude"), 0o755);
    writeFileSync(join(d.path, "crew.toml"), 'name = "nests"\n[[worker]]\nname = "nest"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n[[worker]]\nname = "built"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n');
    const up = spawnA2A(["crew", "up", join(d.path, "crew.toml")], { dir: store.path, env: { ...GIT_ENV, READY_DIR: d.path, PATH: `${bin}:${process.env.PATH}` } });
    const stderr = up.stderr as ReadableStream<Uint8Array>;
    try {
      await until(() => existsSync(join(d.path, "nest.ready")) && existsSync(join(d.path, "built.ready")), 60_000, "both workers' leftovers");
      const down = await a2a(["crew", "down", "nests"], { dir: store.path });
      expect(down).toEqual({ code: 0, stdout: "crew nests is down\n", stderr: "" });
      expect(await exitWithin(up, 30_000)).toBe(0);
      const said = await readUntil(stderr, () => false, 5_000);
      expect(said).toContain(`a2a crew: nest: kept its worktree ${join(crewDir, "nest")}: it holds a git repository of its own, out (its branch a2a/nest holds what was committed)\n`);
      expect(said).toContain(`a2a crew: built: removed its worktree ${join(crewDir, "built")}; the work is on branch a2a/built\n`);
    } finally {
      if (up.exitCode === null) up.kill("SIGKILL");
    }
    expect(sh(["git", "log", "--format=%s"], join(crewDir, "nest", "out"))).toBe("only-here\n");
    expect(readFileSync(join(crewDir, "nest", "out", "p"), "utf8")).toBe("precious\n");
    expect(existsSync(join(crewDir, "built"))).toBe(false);
  });

  test("a worktree a2a kept, then deleted by hand (or left half-removed by a crash): the next crew up forgets git's record of it and makes it again on its branch, rather than refusing", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const path = join(d.path, "app.crew", "again");
    for (const p of ["one", "two"]) expect((await a2a(["task", "add", "q", p], { dir: store.path })).code).toBe(0);
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\necho wip > wip.txt\nexec sleep 979.6\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const file = join(d.path, "crew.toml");
    writeFileSync(file, 'name = "tidy"\n[[worker]]\nname = "again"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n');
    const env = { ...GIT_ENV, PATH: `${bin}:${process.env.PATH}` };
    for (const round of [1, 2]) {
      const up = spawnA2A(["crew", "up", file], { dir: store.path, env });
      try {
        await until(() => procsWith("979.6").length === 1 || up.exitCode !== null, 60_000, `round ${round}: the worker at work`);
        expect({ round, running: procsWith("979.6").length, exit: up.exitCode, stderr: up.exitCode === null ? "" : await new Response(up.stderr as ReadableStream).text() }).toEqual({ round, running: 1, exit: null, stderr: "" });
        expect(readFileSync(join(path, "wip.txt"), "utf8")).toBe("wip\n");
        expect((await a2a(["crew", "down", "tidy"], { dir: store.path })).code).toBe(0);
        expect(await exitWithin(up, 30_000)).toBe(0);
      } finally {
        if (up.exitCode === null) up.kill("SIGKILL");
      }
      expect(existsSync(path)).toBe(true); // kept: wip.txt is not committed
      rmSync(path, { recursive: true }); // the careless user
    }
    expect(sh(["git", "rev-parse", "--verify", "--quiet", "refs/heads/a2a/again"], repo)).toMatch(/^[0-9a-f]{40}\n$/);
  });

  test("a second bus's crew with a worker of the same name in the same repository is refused its worktree (one line, exit 2), never sharing it nor removing it under the first crew's worker", async () => {
    using d = tempDir();
    using one = testStore();
    using two = testStore();
    userRepo(d.path);
    const path = join(d.path, "app.crew", "dev");
    for (const s of [one, two]) expect((await a2a(["task", "add", "q", "x"], { dir: s.path })).code).toBe(0);
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    // Its work committed at once: the worktree is clean while the worker still runs.
    writeFileSync(join(bin, "claude"), `#!/bin/sh\ncat >/dev/null\necho work > bus.txt && git add bus.txt && git commit -q -m work\nexec sleep 979.8\n`);
    chmodSync(join(bin, "claude"), 0o755);
    const file = join(d.path, "crew.toml");
    writeFileSync(file, 'name = "dup"\n[[worker]]\nname = "dev"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n');
    const env = { ...GIT_ENV, PATH: `${bin}:${process.env.PATH}` };
    const first = spawnA2A(["crew", "up", file], { dir: one.path, env });
    const second = () => spawnA2A(["crew", "up", file], { dir: two.path, env });
    let other: ReturnType<typeof second> | undefined;
    try {
      await until(() => procsWith("979.8").length === 1 && existsSync(join(path, "bus.txt")), 60_000, "the first crew's worker at work");
      other = second();
      expect(await exitWithin(other, 30_000)).toBe(2);
      const said = await new Response(other.stderr as ReadableStream).text();
      expect(said).toMatch(new RegExp(`^a2a: ${path.replaceAll(".", "\\.")} is the worktree of worker dev of a crew on another bus \\(\\S+\\): rename this crew's worker, or stop that crew and remove the worktree; nothing was changed\n$`));
      expect(procsWith("979.8").length).toBe(1);
      expect(sh(["git", "log", "--format=%s", "-n", "2"], path)).toBe("work\nfirst\n"); // one run only: the first crew's
      expect((await a2a(["task", "list", "q", "--json"], { dir: two.path })).stdout).toContain('"state":"ready"');
      expect((await a2a(["crew", "down", "dup"], { dir: one.path })).code).toBe(0);
      expect(await exitWithin(first, 30_000)).toBe(0);
    } finally {
      for (const p of [first, other]) if (p && p.exitCode === null) p.kill("SIGKILL");
    }
    expect(existsSync(path)).toBe(false); // its own crew's down removed it: everything in it committed
  });

  test("Ctrl-C again while crew down removes a worktree (a terminal signals the whole process group) does not kill git halfway: the worktree is gone whole, with git's record of it", async () => {
    using d = tempDir();
    using store = testStore();
    const repo = userRepo(d.path);
    const path = join(d.path, "app.crew", "big");
    expect((await a2a(["task", "add", "q", "x"], { dir: store.path })).code).toBe(0);
    const bin = join(d.path, "bin");
    mkdirSync(bin);
    // Build output to remove: enough ignored files that git takes a while over them.
    writeFileSync(join(bin, "claude"), `#!/bin/sh
cat >/dev/null
echo "out/" > .gitignore && git add .gitignore && git commit -q -m ignore
mkdir -p out && cd out && seq 1 60000 | xargs touch && cd ..
touch "$READY_DIR/ready"
exec sleep 979.95
`);
    chmodSync(join(bin, "claude"), 0o755);
    writeFileSync(join(d.path, "crew.toml"), 'name = "big"\n[[worker]]\nname = "big"\nagent = "claude"\nqueues = ["q"]\ncwd = "app"\n');
    // Its own session and process group, as a terminal's foreground job.
    const up = spawnA2A(["crew", "up", join(d.path, "crew.toml")], { dir: store.path, prefix: ["setsid"], env: { ...GIT_ENV, READY_DIR: d.path, PATH: `${bin}:${process.env.PATH}` } });
    try {
      await until(() => existsSync(join(d.path, "ready")), 60_000, "the worker's build output");
      expect(up.exitCode).toBe(null);
      const down = spawnA2A(["crew", "down", "big"], { dir: store.path });
      const removing = () => readdirSync("/proc").some((p) => {
        try {
          return /^\d+$/.test(p) && readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").slice(0, 4).join(" ") === `git worktree remove ${path}`;
        } catch {
          return false;
        }
      });
      await until(removing, 60_000, "git removing the worktree");
      process.kill(-up.pid, "SIGINT");
      await exitWithin(up, 60_000);
      await exitWithin(down, 60_000);
    } finally {
      if (up.exitCode === null) up.kill("SIGKILL");
    }
    expect(existsSync(path)).toBe(false);
    expect(sh(["git", "worktree", "list", "--porcelain"], repo)).not.toContain("a2a/big");
  });
});
