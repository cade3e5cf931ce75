// The PreToolUse hook's side doors (issue 32, items 5-7), through the compiled binary: an edit of
// a reserved file must be denied however the agent names the file (an apply_patch header in any
// form the agent's own parser accepts, a symlinked path, a path in another repository than the
// session's cwd) and whatever the size of the hook's input.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, tempDir, testStore } from "../harness/run";

setDefaultTimeout(60_000);

function gitRepo(parent: string, name = "repo"): string {
  const repo = join(parent, name);
  mkdirSync(join(repo, "src"), { recursive: true });
  const r = Bun.spawnSync({ cmd: ["git", "init", "-q", repo], stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git init: ${r.stderr}`);
  writeFileSync(join(repo, "src", "api.ts"), "export {};\n");
  return repo;
}

const reserve = async (store: string, cwd: string, patterns: string[]) => {
  const r = await a2a(["reserve", ...patterns, "--as", "alice", "-q"], { dir: store, cwd });
  if (r.code !== 0) throw new Error(`reserve: ${r.stderr}`);
};

const run = (store: string, cwd: string, event: object, agent = "claude") =>
  a2a(["hook", "pre-tool-use", "--agent", agent], { dir: store, cwd, stdin: JSON.stringify(event), env: { A2A_AGENT: "bob" } });

const claudeEdit = (cwd: string, file: string) => ({ cwd, hook_event_name: "PreToolUse", tool_name: "Edit", tool_input: { file_path: file, old_string: "a", new_string: "b" } });

const denied = (stdout: string): string | undefined => {
  if (!stdout) return undefined;
  const v = JSON.parse(stdout);
  return v.hookSpecificOutput?.permissionDecisionReason ?? v.deny;
};

describe("apply_patch headers, as each agent's parser reads them", () => {
  const wrap = (body: string) => `*** Begin Patch\n${body}\n*** End Patch\n`;

  test("Codex: a marker line with leading or trailing blanks, a Move to after an Update, CRLF lines: the file is seen and the patch denied", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, ["src/api.ts"]);
    const forms = [
      " *** Update File: src/api.ts\n@@\n-export {};\n+export const a = 1;",
      "\t*** Update File: src/api.ts\n@@\n-export {};\n+export const a = 1;",
      "*** Delete File: src/api.ts  ",
      "*** Add File: src/new.ts\n+x\n  *** Delete File: src/api.ts",
      "*** Update File: src/old.ts\n*** Move to: src/api.ts\n@@\n-a\n+b",
      "*** Update File: src/api.ts\r\n@@\r\n-export {};\r\n+export const a = 1;\r",
    ];
    for (const body of forms) {
      const r = await run(s.path, repo, { cwd: repo, hook_event_name: "PreToolUse", tool_name: "apply_patch", tool_input: { command: wrap(body) } }, "codex");
      expect({ body, code: r.code, stderr: r.stderr }).toEqual({ body, code: 0, stderr: "" });
      expect({ body, why: denied(r.stdout) }).toEqual({ body, why: expect.stringMatching(/^a2a: src\/api\.ts is reserved by alice/) });
    }
    // A free file in the same forms: nothing said.
    const free = await run(s.path, repo, { cwd: repo, tool_name: "apply_patch", tool_input: { command: wrap(" *** Update File: src/free.ts\n@@\n-a\n+b") } }, "codex");
    expect(free).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  test("opencode: a header without the space after the colon, a Move to (spaced or not) after an Update: the file is seen and the patch denied", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, ["src/api.ts"]);
    const forms = [
      "*** Update File:src/api.ts\n@@\n-export {};\n+export const a = 1;",
      "*** Delete File:src/api.ts",
      "*** Add File:\tsrc/api.ts\n+x",
      "*** Update File: src/old.ts\n*** Move to:src/api.ts\n@@\n-a\n+b",
      "*** Update File:src/old.ts\n*** Move to: src/api.ts\n@@\n-a\n+b",
    ];
    for (const body of forms) {
      const r = await run(s.path, repo, { cwd: repo, tool: "apply_patch", args: { patchText: wrap(body) } }, "opencode");
      expect({ body, code: r.code, stderr: r.stderr }).toEqual({ body, code: 0, stderr: "" });
      expect({ body, why: denied(r.stdout) }).toEqual({ body, why: expect.stringMatching(/^a2a: src\/api\.ts is reserved by alice/) });
    }
  });
});

describe("the file's own repository, its links resolved", () => {
  test("a reserved file reached through a symlinked directory, relative from a symlinked cwd, or from a session whose cwd is a parent directory or another repository: denied", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    const other = gitRepo(d.path, "other");
    await reserve(s.path, repo, ["src/api.ts"]);
    const alias = join(d.path, "alias");
    symlinkSync(repo, alias);
    const cases: [string, string, string][] = [
      ["a symlinked path", repo, join(alias, "src", "api.ts")],
      ["relative, from a symlinked cwd", alias, "src/api.ts"],
      ["relative, from a symlinked subdirectory", join(alias, "src"), "api.ts"],
      ["a session started in the parent directory", d.path, join(repo, "src", "api.ts")],
      ["relative from the parent directory", d.path, "repo/src/api.ts"],
      ["a session in another repository", other, join(repo, "src", "api.ts")],
      ["another repository's path through the alias", other, join(alias, "src", "api.ts")],
    ];
    for (const [what, cwd, file] of cases) {
      const r = await run(s.path, cwd, claudeEdit(cwd, file));
      expect({ what, code: r.code, stderr: r.stderr }).toEqual({ what, code: 0, stderr: "" });
      expect({ what, why: denied(r.stdout) }).toEqual({ what, why: expect.stringMatching(/^a2a: \S*api\.ts is reserved by alice/) });
    }
    // The other repository's own src/api.ts is not the reserved one.
    expect(await run(s.path, repo, claudeEdit(repo, join(other, "src", "api.ts")))).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});

describe("`..` after a symlink goes up from the link's target, as the kernel does (review finding 3)", () => {
  test("link/../api.ts where link -> src/deep: an absolute Write from outside, a relative Edit, and a Codex patch header are denied; the same spelled through a plain directory is not the reserved file", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    mkdirSync(join(repo, "src", "deep"));
    mkdirSync(join(repo, "plain"));
    mkdirSync(join(d.path, "x"));
    symlinkSync(join(repo, "src", "deep"), join(d.path, "x", "link"));
    symlinkSync(join(repo, "src", "deep"), join(repo, "link"));
    await reserve(s.path, repo, ["src/api.ts"]);
    const outside = join(d.path, "x");
    const cases: [string, string, object, string?][] = [
      ["an absolute Write through an outside link", outside, { tool_name: "Write", tool_input: { file_path: `${outside}/link/../api.ts`, content: "x" } }],
      ["an absolute Write through a link in the repository", repo, { tool_name: "Write", tool_input: { file_path: `${repo}/link/../api.ts`, content: "x" } }],
      ["a relative Edit from outside", outside, { tool_name: "Edit", tool_input: { file_path: "link/../api.ts", old_string: "a", new_string: "b" } }],
      ["two links up and down again", outside, { tool_name: "Edit", tool_input: { file_path: "link/../deep/../api.ts", old_string: "a", new_string: "b" } }],
      ["a Codex patch header", repo, { tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Update File: link/../api.ts\n@@\n-a\n+b\n*** End Patch\n" } }, "codex"],
      ["a Codex Move to", repo, { tool_name: "apply_patch", tool_input: { command: "*** Begin Patch\n*** Update File: README\n*** Move to: link/../api.ts\n@@\n-a\n+b\n*** End Patch\n" } }, "codex"],
    ];
    for (const [what, cwd, event, agent] of cases) {
      const r = await run(s.path, cwd, { cwd, hook_event_name: "PreToolUse", ...event }, agent);
      expect({ what, code: r.code, stderr: r.stderr }).toEqual({ what, code: 0, stderr: "" });
      expect({ what, why: denied(r.stdout) }).toEqual({ what, why: expect.stringMatching(/^a2a: src\/api\.ts is reserved by alice/) });
    }
    // plain/../api.ts is the repository's top api.ts, which nobody holds.
    expect(await run(s.path, repo, claudeEdit(repo, `${repo}/plain/../api.ts`))).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });
});

describe("a nested repository under A2A_REPO (review finding 4)", () => {
  test("with A2A_REPO set, an edit of a file of a nested repository is still checked against the session's repository: alice's reservation of sub/a.ts there denies it", async () => {
    using d = tempDir();
    using s = testStore();
    const top = gitRepo(d.path, "top");
    const sub = gitRepo(top, "sub");
    writeFileSync(join(sub, "a.ts"), "x\n");
    const env = { A2A_REPO: "proj" };
    const held = await a2a(["reserve", "sub/a.ts", "--as", "alice", "-q"], { dir: s.path, cwd: top, env });
    expect(held).toMatchObject({ code: 0, stderr: "" });
    const r = await a2a(["hook", "pre-tool-use"], { dir: s.path, cwd: top, stdin: JSON.stringify(claudeEdit(top, join(sub, "a.ts"))), env: { A2A_AGENT: "bob", ...env } });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(denied(r.stdout)).toMatch(/^a2a: sub\/a\.ts is reserved by alice/);
  });
});

describe("one repository, one identity", () => {
  test("clones whose origins are https://host/Org/Repo.git and git@host:org/repo.git (quoted, in a second [remote] section): alice's reservation in one denies bob's edit in the other", async () => {
    using d = tempDir();
    using s = testStore();
    const a = gitRepo(d.path, "a");
    const b = gitRepo(d.path, "b");
    writeFileSync(join(a, ".git", "config"), '[remote "origin"]\n\turl = https://github.com/Org/Repo.git\n', { flag: "a" });
    writeFileSync(join(b, ".git", "config"), '[remote "origin"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[remote "origin"]\n\turl = "git@github.com:org/repo.git"\n', { flag: "a" });
    await reserve(s.path, a, ["src/api.ts"]);
    const r = await run(s.path, b, claudeEdit(b, join(b, "src", "api.ts")));
    expect(denied(r.stdout)).toMatch(/^a2a: src\/api\.ts is reserved by alice/);
    const listed = await a2a(["reservations", "--json"], { dir: s.path, cwd: b });
    expect(JSON.parse(listed.stdout)).toMatchObject({ repo: "git:github.com/org/repo", reservations: [{ pattern: "src/api.ts", holder: "alice" }] });
  });
});

describe("hook input of any size", () => {
  test("a Write of 1.1 MB, and of 40 MB, to a reserved file is denied; a patch whose reserved header follows 2 MB of added lines too; a free file's 40 MB Write is let through", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, ["src/api.ts"]);
    const file = join(repo, "src", "api.ts");
    for (const size of [1_100_000, 40_000_000]) {
      const content = "x".repeat(size - 20) + '"\\\n\u00e9\ud83d\ude00';
      const r = await run(s.path, repo, { cwd: repo, hook_event_name: "PreToolUse", tool_name: "Write", tool_input: { content, file_path: file } });
      expect({ size, code: r.code, stderr: r.stderr }).toEqual({ size, code: 0, stderr: "" });
      expect({ size, why: denied(r.stdout) }).toEqual({ size, why: expect.stringMatching(/^a2a: src\/api\.ts is reserved by alice/) });
    }
    const big = "*** Begin Patch\n*** Add File: src/big.ts\n" + "+line of text\n".repeat(150_000) + " *** Update File: src/api.ts\n@@\n-a\n+b\n*** End Patch\n";
    const p = await run(s.path, repo, { cwd: repo, tool_name: "apply_patch", tool_input: { command: big } }, "codex");
    expect(denied(p.stdout)).toMatch(/^a2a: src\/api\.ts is reserved by alice/);
    const free = await run(s.path, repo, { cwd: repo, tool_name: "Write", tool_input: { file_path: join(repo, "src", "free.ts"), content: "y".repeat(40_000_000) } });
    expect(free).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  test("a MultiEdit of 400 edits of 100 KB each (40 MB in mid-sized strings) to a reserved file is denied, to a free one let through", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    await reserve(s.path, repo, ["src/api.ts"]);
    const edits = Array.from({ length: 400 }, (_, i) => ({ old_string: `${i}`.repeat(50_000), new_string: "y".repeat(50_000) }));
    const call = (file: string) => ({ cwd: repo, tool_name: "MultiEdit", tool_input: { edits, file_path: file } });
    expect(denied((await run(s.path, repo, call(join(repo, "src", "api.ts")))).stdout)).toMatch(/^a2a: src\/api\.ts is reserved by alice/);
    expect(await run(s.path, repo, call(join(repo, "src", "free.ts")))).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  test("input the hook cannot read (not JSON, cut short) is denied saying why, exit 0: never let through unchecked", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = gitRepo(d.path);
    for (const stdin of ["{not json", '{"tool_name":"Write","tool_input":{"file_path":"src/api.ts","content":"' + "x".repeat(300_000)]) {
      const r = await a2a(["hook", "pre-tool-use"], { dir: s.path, cwd: repo, stdin, env: { A2A_AGENT: "bob" } });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(denied(r.stdout)).toMatch(/^a2a: this edit was not checked against the reservations of other agents and is denied: the hook input on stdin is not JSON/);
    }
  });
});
