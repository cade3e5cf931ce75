// Terminal escapes in what reservations carry (a pattern, a reason: anyone's words) reach a
// terminal inert, as attachment names do (cli/inert.ts): the listing, a refusal, the guard's
// lines and the hook's reason show "\x1b" where the store holds an ESC, and each stays one line.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, childEnv, tempDir, testStore } from "../harness/run";

setDefaultTimeout(60_000);

const IDENTITY = { GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t", GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" };
const git = (cwd: string, args: string[], env: Record<string, string> = {}) => {
  const r = Bun.spawnSync(["git", "-c", "init.defaultBranch=main", ...args], { cwd, env: childEnv({ env: { ...IDENTITY, ...env } }), stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, stderr: r.stderr.toString() };
};

// Anything a terminal would act on: C0 but newline, C1, bidirectional controls.
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

describe("reservations on a terminal", () => {
  test("a pattern and a reason holding ESC sequences, a carriage return, a newline and a bidi override are printed escaped, one line each", async () => {
    using d = tempDir();
    using s = testStore();
    const repo = join(d.path, "repo");
    mkdirSync(join(repo, "src"), { recursive: true });
    expect(git(d.path, ["init", "-q", repo]).code).toBe(0);
    const name = "x\u001b]0;pwned\u0007\u202e.ts";
    const pattern = `src/${name}`;
    const reason = "api\u001b[2J\u001b[31m rework\r\nfake line\u009b";
    expect(await a2a(["reserve", pattern, "--as", "alice", "--reason", reason, "-q"], { dir: s.path, cwd: repo })).toMatchObject({ code: 0 });

    const listed = await a2a(["reservations"], { dir: s.path, cwd: repo });
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(RAW);
    expect(listed.stdout).toContain("src/x\\x1b]0;pwned\\x07\\u202e.ts");
    expect(listed.stdout).toContain("api\\x1b[2J\\x1b[31m rework\\x0d\\x0afake line\\x9b");
    expect(listed.stdout.trim().split("\n")).toHaveLength(2);

    const refused = await a2a(["reserve", "src", "--as", "bob"], { dir: s.path, cwd: repo });
    expect(refused.code).toBe(4);
    expect(refused.stderr).not.toMatch(RAW);
    expect(refused.stderr.split("\n")).toEqual([expect.stringContaining("alice holds src/x\\x1b]0;pwned"), ""]);

    writeFileSync(join(repo, "src", name), "x\n");
    expect(await a2a(["guard", "install"], { dir: s.path, cwd: repo })).toMatchObject({ code: 0 });
    expect(git(repo, ["add", "."]).code).toBe(0);
    const commit = git(repo, ["commit", "-qm", "bob"], { A2A_DIR: s.path, A2A_AGENT: "bob" });
    expect(commit.code).toBe(1);
    expect(commit.stderr).not.toMatch(RAW);
    expect(commit.stderr).toContain("pattern src/x\\x1b]0;pwned\\x07\\u202e.ts, reason \"api\\u001b[2J\\u001b[31m rework\\r\\nfake line\\x9b\"");

    const hook = await a2a(["hook", "pre-tool-use"], { dir: s.path, cwd: repo, env: { A2A_AGENT: "bob" }, stdin: JSON.stringify({ cwd: repo, tool_name: "Write", tool_input: { file_path: join(repo, "src", name), content: "" } }) });
    const why: string = JSON.parse(hook.stdout).hookSpecificOutput.permissionDecisionReason;
    expect(why).not.toMatch(RAW);
    expect(why).toContain("reserved by alice (pattern src/x\\x1b]0;pwned");
  });
});
