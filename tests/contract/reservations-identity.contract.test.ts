// A repository's identity (docs/PROTOCOL.md, "Reservations on paths", The repository), on every
// engine through the Bus: one repository reached by several URLs is one set of reservations, and
// a repository whose identity source changes (an origin added, A2A_REPO set) keeps the
// reservations made under the old identity: seen, refused to others, blocking edits, released by
// their holder.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../harness/run";
import { enginesFor } from "./engines";
import { codeOf, perTest, refusal } from "./support";

setDefaultTimeout(60_000);

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
};

function repo(parent: string, name: string, config = ""): string {
  const dir = join(parent, name);
  mkdirSync(join(dir, "src"), { recursive: true });
  git(parent, "init", "-q", dir);
  if (config) writeFileSync(join(dir, ".git", "config"), config, { flag: "a" });
  return dir;
}

for (const engine of enginesFor("reservations")) {
  describe(`${engine.name}: a repository's identity`, () => {
    const t = perTest(engine);

    test("https://host/Org/Repo.git, git@host:org/repo.git, a quoted url and an origin in a second [remote] section are one repository", async () => {
      using d = tempDir();
      const a = repo(d.path, "a", '[remote "origin"]\n\turl = https://github.com/Org/Repo.git\n');
      const b = repo(d.path, "b", '[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[core]\n\tquotepath = false\n[remote "origin"]\n\turl = git@github.com:org/repo.git\n');
      const c = repo(d.path, "c", '[remote "origin"]\n\turl = "ssh://git@github.com/org/repo"  # quoted\n');
      expect((await t.bus.reservations.reserve(["src/api.ts"], { as: "alice", cwd: a })).kind).toBe("done");
      for (const cwd of [b, c]) {
        const e = await refusal(t.reopen().reservations.reserve(["src/api.ts"], { as: "bob", cwd }));
        expect({ cwd, code: codeOf(e) }).toEqual({ cwd, code: { code: "ECONFLICT", exit: 4 } });
        const l = await t.bus.reservations.list({ cwd });
        expect({ cwd, repo: l.repo, held: l.reservations.map((r) => [r.pattern, r.holder]) }).toEqual({ cwd, repo: "git:github.com/org/repo", held: [["src/api.ts", "alice"]] });
      }
    });

    test("adding an origin, then setting A2A_REPO, hides nothing: the old reservations are listed, refused to others, block edits, and their holder releases them", async () => {
      using d = tempDir();
      const r = repo(d.path, "r");
      expect((await t.bus.reservations.reserve(["src/a.ts"], { as: "alice", cwd: r })).kind).toBe("done");
      git(r, "remote", "add", "origin", "git@example.com:team/app.git");
      expect((await t.bus.reservations.reserve(["src/b.ts"], { as: "carol", cwd: r })).kind).toBe("done");
      for (const bus of [t.bus, t.reopen({ A2A_REPO: "team-app" })]) {
        const l = await bus.reservations.list({ cwd: r });
        expect(l.reservations.map((x) => [x.pattern, x.holder])).toEqual([["src/a.ts", "alice"], ["src/b.ts", "carol"]]);
        for (const p of ["src/a.ts", "src/b.ts"]) expect(codeOf(await refusal(bus.reservations.reserve([p], { as: "bob", cwd: r })))).toEqual({ code: "ECONFLICT", exit: 4 });
        const blocked = await bus.reservations.blockers([join(r, "src", "a.ts"), join(r, "src", "b.ts")], { as: "bob", cwd: r });
        expect(blocked.map((b) => [b.path, b.by.holder])).toEqual([["src/a.ts", "alice"], ["src/b.ts", "carol"]]);
      }
      // Renewing moves alice's reservation to the current identity; releasing ends it everywhere.
      const renewed = await t.bus.reservations.reserve(["src/a.ts"], { as: "alice", cwd: r });
      expect(renewed.kind === "done" && renewed.value!.map((x) => [x.repo, x.pattern])).toEqual([["git:example.com/team/app", "src/a.ts"]]);
      expect((await t.bus.reservations.list({ cwd: r })).reservations.map((x) => [x.pattern, x.holder])).toEqual([["src/a.ts", "alice"], ["src/b.ts", "carol"]]);
      expect(await t.bus.reservations.release(["src/b.ts"], { as: "carol", cwd: r })).toEqual(["src/b.ts"]);
      expect(await t.bus.reservations.release("all", { as: "alice", cwd: r })).toEqual(["src/a.ts"]);
      expect((await t.bus.reservations.list({ cwd: r })).reservations).toEqual([]);
      expect((await t.bus.reservations.reserve(["src/a.ts"], { as: "bob", cwd: r })).kind).toBe("done");
    });

    test("one blockers call over files of two repositories, one with reservations under an alias and the current identity: each file's blockers, each reservation once, the holder's own left out", async () => {
      using d = tempDir();
      const a = repo(d.path, "a");
      const b = repo(d.path, "b");
      expect((await t.bus.reservations.reserve(["src/x.ts"], { as: "alice", cwd: a })).kind).toBe("done");
      expect((await t.bus.reservations.reserve(["src/**"], { as: "carol", cwd: b })).kind).toBe("done");
      git(a, "remote", "add", "origin", "git@example.com:team/a.git");
      expect((await t.bus.reservations.reserve(["src/y.ts"], { as: "dave", cwd: a })).kind).toBe("done");
      expect((await t.bus.reservations.reserve(["src/z.ts"], { as: "bob", cwd: a })).kind).toBe("done");
      const files = [join(a, "src", "x.ts"), join(a, "src", "y.ts"), join(a, "src", "z.ts"), join(b, "src", "q.ts"), join(d.path, "nowhere.ts")];
      const blocked = await t.reopen().reservations.blockers(files, { as: "bob", cwd: a });
      expect(blocked.map((x) => [x.path, x.by.holder, x.by.pattern])).toEqual([["src/x.ts", "alice", "src/x.ts"], ["src/y.ts", "dave", "src/y.ts"], ["src/q.ts", "carol", "src/**"]]);
      expect(await t.reopen().reservations.blockers([join(a, "README"), join(b, "README")], { as: "bob", cwd: b })).toEqual([]);
    });
  });
}
