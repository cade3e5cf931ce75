// Which repository a directory is in, and a path given from anywhere in it as the
// repository-relative pattern a reservation names (lib/reservations/repo.ts), with real git:
// a linked worktree shares its repository's identity; clones with one origin share it too.
import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { A2AError } from "../../lib/core/errors";
import { remoteUrl } from "../../lib/reservations/git-config";
import { fileRepos, normaliseRemote, relativePath, repoOf } from "../../lib/reservations/repo";
import { tempDir } from "../harness/run";

const git = (cwd: string, ...args: string[]) => {
  const r = Bun.spawnSync(["git", "-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr.toString()}`);
  return r.stdout.toString().trim();
};

describe("the repository of a directory", () => {
  test("a worktree and a subdirectory have the main work tree's identity; a clone with the same origin too; another host without origin not", () => {
    using d = tempDir();
    const main = join(d.path, "main");
    mkdirSync(join(main, "src", "api"), { recursive: true });
    git(main, "init", "-q");
    writeFileSync(join(main, "src", "api", "x.ts"), "x");
    git(main, "add", ".");
    git(main, "commit", "-qm", "one");
    const local = repoOf(main, "h1");
    expect(local).toEqual({ root: main, id: `dir:h1:${join(main, ".git")}`, aliases: [], git: true });
    git(main, "worktree", "add", "-q", join(d.path, "wt"));
    expect(repoOf(join(d.path, "wt"), "h1").id).toBe(local.id);
    expect(repoOf(join(d.path, "wt"), "h1").root).toBe(join(d.path, "wt"));
    expect(repoOf(join(main, "src", "api"), "h1").root).toBe(main);
    expect(repoOf(main, "h2").id).not.toBe(local.id);
    git(main, "remote", "add", "origin", "git@GitHub.com:org/app.git");
    git(d.path, "clone", "-q", main, "clone");
    git(join(d.path, "clone"), "remote", "set-url", "origin", "https://someone@github.com/org/app");
    expect(repoOf(main, "h1").id).toBe("git:github.com/org/app");
    expect(repoOf(join(d.path, "wt"), "h1").id).toBe("git:github.com/org/app");
    expect(repoOf(join(d.path, "clone"), "h2").id).toBe("git:github.com/org/app");
    expect(repoOf(main, "h1", { repoName: "team-app" }).id).toBe("name:team-app");
    // The identities its other sources give stay its own: the directory's, the origin's.
    expect(repoOf(main, "h1").aliases).toEqual([local.id]);
    expect(repoOf(main, "h1", { repoName: "team-app" }).aliases).toEqual(["git:github.com/org/app", local.id]);
    const outside = join(d.path, "plain");
    mkdirSync(outside);
    expect(repoOf(outside, "h1")).toEqual({ root: outside, id: `dir:h1:${outside}`, aliases: [], git: false });
  });

  test("remote URLs of one repository normalise alike", () => {
    for (const u of ["git@github.com:org/app.git", "https://github.com/org/app.git", "ssh://git@GITHUB.com:22/org/app", "https://u:p@github.com/org/app/"]) expect({ u, n: normaliseRemote(u) }).toEqual({ u, n: "github.com/org/app" });
    expect(normaliseRemote("/srv/git/app.git")).toBe("srv/git/app");
    // Forges fold letter case: https://github.com/Org/Repo.git and git@github.com:org/repo.git are one.
    expect(normaliseRemote("https://github.com/Org/Repo.git")).toBe(normaliseRemote("git@github.com:org/repo.git"));
  });

  test("the origin's URL as git reads the config: quoted, escaped, commented, in a second section, a key in capitals, insteadOf", () => {
    const cases: [string, string | undefined][] = [
      ['[remote "origin"]\n\turl = "https://github.com/org/app.git"\n', "https://github.com/org/app.git"],
      ['[remote "origin"]\n\turl = "git@github.com:org/a;pp.git" ; a comment\n', "git@github.com:org/a;pp.git"],
      ['[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[core]\n\tbare = false\n[remote "origin"]\n\tURL = git@github.com:org/app.git # mine\n', "git@github.com:org/app.git"],
      ['[Remote "origin"] url = ssh://git@github.com/org/app\n', "ssh://git@github.com/org/app"],
      ['[remote.origin]\n\turl = https://github.com/org/\\\napp\n', "https://github.com/org/app"],
      ['[remote "Origin"]\n\turl = https://github.com/org/app\n', undefined],
      ['[remote "origin"]\n\turl = https://github.com/org/one\n\turl = https://github.com/org/two\n', "https://github.com/org/one"],
      ['[url "git@github.com:"]\n\tinsteadOf = gh:\n[url "x"]\n\tinsteadOf = g\n[remote "origin"]\n\turl = gh:org/app\n', "git@github.com:org/app"],
    ];
    for (const [config, url] of cases) expect({ config, url: remoteUrl(config) }).toEqual({ config, url });
  });

  test("git itself agrees: each config's origin URL is what git config --get reads from it", () => {
    using d = tempDir();
    const configs = [
      '[remote "origin"]\n\turl = "https://github.com/org/a pp.git"\n',
      '[remote "origin"]\n\turl = git@github.com:org/app.git#frag\n',
      '[remote "origin"]\n\turl = "git@github.com:org/app.git#frag" ; c\n',
      '[remote "origin"]\n\turl =   spaced   out   \n',
      '[remote "origin"]\n\turl = a\\\n b\n',
      '[remote "origin"]\n\turl = x"y"z\\t\n',
      '[REMOTE "origin"] Url = inline\n',
      '[remote "or\\"igin"]\n\turl = esc\n[remote "origin"]\n\turl=tight\n',
      '[remote "origin"]\r\n\turl = crlf\r\n',
      '[remote "origin"]\n\turl = tab\there\n',
    ];
    configs.forEach((config, i) => {
      const file = join(d.path, `config${i}`);
      writeFileSync(file, config);
      const r = Bun.spawnSync(["git", "config", "--file", file, "--get", "remote.origin.url"], { stdout: "pipe" });
      expect({ config, url: remoteUrl(config) }).toEqual({ config, url: r.stdout.toString().replace(/\n$/, "") });
    });
  });
});

describe("a path given from anywhere in the repository", () => {
  test("from a subdirectory, absolute, with .. inside: the same pattern; outside (by .. or a symlink): refused; a symlink inside: its target", () => {
    using d = tempDir();
    const root = join(d.path, "r");
    mkdirSync(join(root, "src", "api"), { recursive: true });
    git(root, "init", "-q");
    writeFileSync(join(root, "src", "api", "x.ts"), "x");
    symlinkSync(join(root, "src", "api", "x.ts"), join(root, "link.ts"));
    symlinkSync(d.path, join(root, "escape"));
    const repo = repoOf(join(root, "src"), "h");
    const sub = join(root, "src");
    expect(relativePath(repo, sub, "api/x.ts")).toBe("src/api/x.ts");
    expect(relativePath(repo, sub, join(root, "src/api/x.ts"))).toBe("src/api/x.ts");
    expect(relativePath(repo, sub, "../docs/*.md")).toBe("docs/*.md");
    expect(relativePath(repo, sub, "api/**")).toBe("src/api/**");
    expect(relativePath(repo, root, "link.ts")).toBe("src/api/x.ts");
    expect(relativePath(repo, root, "src/new-file.ts")).toBe("src/new-file.ts"); // not there yet
    expect(relativePath(repo, root, "escape/r/src")).toBe("src"); // out through a link and back in
    for (const p of ["../../elsewhere", "/etc/passwd", "escape", "escape/other.txt"]) {
      let err: unknown;
      try {
        relativePath(repo, p.startsWith("../") ? sub : root, p);
      } catch (e) {
        err = e;
      }
      expect({ p, code: (err as A2AError)?.code, msg: /outside the repository/.test((err as Error)?.message) }).toEqual({ p, code: "EUSAGE", msg: true });
    }
    // Spelled through a link to the repository (a symlinked cwd): the same file, the same pattern.
    symlinkSync(root, join(d.path, "alias"));
    expect(relativePath(repo, join(d.path, "alias", "src"), "api/x.ts")).toBe("src/api/x.ts");
    expect(relativePath(repo, d.path, join(d.path, "alias", "src", "new.ts"))).toBe("src/new.ts");
    // `..` after a link goes up from its target, as the kernel does: escape/.. leaves the repository.
    symlinkSync(join(root, "src", "api"), join(root, "deep"));
    expect(relativePath(repo, root, "deep/../new.ts")).toBe("src/new.ts");
    expect(relativePath(repo, sub, `${root}/deep/../api/x.ts`)).toBe("src/api/x.ts");
    expect(() => relativePath(repo, root, "escape/../x")).toThrow(/outside the repository/);
    // (From a directory outside git the file is also in that directory's "repository".)
    expect(fileRepos(join(d.path, "alias", "link.ts"), d.path, "h")).toEqual([{ repo: repoOf(root, "h"), rel: "src/api/x.ts" }, { repo: repoOf(d.path, "h"), rel: "r/src/api/x.ts" }]);
    expect(fileRepos("/etc/passwd", root, "h")).toEqual([]);
    expect(fileRepos("api/x.ts", sub, "h").map((f) => f.rel)).toEqual(["src/api/x.ts"]);
    // A nested repository (a submodule's work tree): the file is its own and the session's.
    const nested = join(root, "vendor", "lib");
    mkdirSync(nested, { recursive: true });
    git(nested, "init", "-q");
    expect(fileRepos(join(nested, "y.ts"), root, "h").map((f) => [f.repo.root, f.rel])).toEqual([[nested, "y.ts"], [root, "vendor/lib/y.ts"]]);
  });
});
