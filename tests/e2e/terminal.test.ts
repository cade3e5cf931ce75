// Terminal manners (issue 13): long waits keep one live status line on stderr when stderr is
// a terminal, and print nothing extra otherwise; `a2a mcp` on a terminal says what it is; the
// status table fits $COLUMNS, shortening previews and tasks, never names; -q silences
// confirmations; `a2a completion` scripts complete commands and flags. A terminal here is a
// real pty made by util-linux `script` (stdin, stdout and stderr all on it).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { dirname } from "node:path";
import { a2a, a2aBelow, BIN, childEnv, listens, readUntil, tempDir, testStore, until } from "../harness/run";

setDefaultTimeout(120_000);

// `a2a ARGS` on a pty; everything it writes (stdout and stderr together) comes out of script.
// script runs the command through $SHELL (or /bin/sh); SHELL is set so that every machine runs
// the same shell, and a2aUnder() does not rely on that shell exec'ing the command.
function onPty(args: string[], dir: string, env: Record<string, string> = {}) {
  const cmd = [BIN, ...args].map((a) => "'" + a.replace(/'/g, "'\\''") + "'").join(" ");
  return Bun.spawn({ cmd: ["script", "-q", "-e", "-c", cmd, "/dev/null"], env: childEnv({ dir, env: { TERM: "xterm", SHELL: "/bin/sh", ...env } }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
}

// The pid of the a2a process under script, however many shells stand between them.
async function a2aUnder(scriptPid: number): Promise<number> {
  let pid = 0;
  await until(() => (pid = a2aBelow(scriptPid)) > 0, 20_000, "a2a under script");
  return pid;
}

const ERASE = "\r\x1b[K";

// The rest of a stream already partly read by readUntil.
const rest = (stream: ReadableStream<Uint8Array>) => readUntil(stream, () => false, 30_000);

describe.concurrent("a live status line while waiting, on a terminal only", () => {
  test("wait: the line names the slot and its state, is erased, and the result follows", async () => {
    using d = testStore();
    expect((await a2a(["start", "build", "make all"], { dir: d.path })).code).toBe(0);
    const p = onPty(["wait", "build"], d.path);
    const seen = await readUntil(p.stdout, (t) => t.includes("waiting for build (running: make all), 0s"));
    expect(seen).toStartWith(ERASE + "waiting for build (running: make all), 0s");
    const pid = await a2aUnder(p.pid);
    await until(() => listens(pid), 20_000, "the waiter's watch");
    expect((await a2a(["publish", "build", "exit 0"], { dir: d.path })).code).toBe(0);
    const after = await rest(p.stdout);
    expect(await p.exited).toBe(0);
    // The last thing before the result is the erase: the result is alone on its line.
    expect(after.endsWith(ERASE + "exit 0\r\n")).toBe(true);
  });

  test("recv --wait and tail --follow show theirs too", async () => {
    using d = testStore();
    const r = onPty(["recv", "--as", "bob", "--wait", "--timeout", "30s"], d.path);
    expect(await readUntil(r.stdout, (t) => t.includes("waiting for a message to bob, 0s"))).toContain(ERASE);
    expect((await a2a(["send", "bob", "hello", "--as", "alice"], { dir: d.path })).code).toBe(0);
    const got = await rest(r.stdout);
    expect(await r.exited).toBe(0);
    expect(got).toContain("hello");

    expect((await a2a(["append", "s", "line 1\n"], { dir: d.path })).code).toBe(0);
    const t = onPty(["tail", "s", "--follow"], d.path);
    const shown = await readUntil(t.stdout, (x) => x.includes("line 1\r\n"));
    expect(shown).toContain(ERASE + "following s (running, 1 chunk), 0s");
    expect((await a2a(["publish", "s", "done"], { dir: d.path })).code).toBe(0);
    const tail = await rest(t.stdout);
    expect(tail.endsWith(ERASE) || tail === "").toBe(true); // a line drawn since is erased as it ends
    expect(await t.exited).toBe(0);
  });

  test("not a terminal: stderr stays empty for the same waits", async () => {
    using d = testStore();
    await a2a(["publish", "r", "v"], { dir: d.path });
    await a2a(["send", "bob", "m", "--as", "a"], { dir: d.path });
    for (const args of [["wait", "r"], ["recv", "--as", "bob", "--wait"], ["tail", "r", "--follow"]]) {
      const r = await a2a(args, { dir: d.path });
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
    }
  });

  test("TERM=dumb: no live line even on a terminal", async () => {
    using d = testStore();
    await a2a(["publish", "r", "v"], { dir: d.path });
    const p = onPty(["wait", "r"], d.path, { TERM: "dumb" });
    const out = await new Response(p.stdout).text();
    expect([out, await p.exited]).toEqual(["v\r\n", 0]);
  });
});

describe.concurrent("a2a mcp started on a terminal", () => {
  test("says on stderr what it is and how to register it, then serves (EOF ends it)", async () => {
    using d = testStore();
    const p = onPty(["mcp"], d.path);
    const said = await readUntil(p.stdout, (t) => t.includes("Ctrl-D"));
    expect(said).toContain("this is the MCP server: it speaks JSON-RPC on stdin/stdout");
    expect(said).toContain("claude mcp add -s user a2a -- a2a mcp");
    p.stdin.end(); // script passes the end of input on as EOF
    expect(await p.exited).toBe(0);
  });

  test("started by a client (stdin a pipe), it says nothing on stderr", async () => {
    using d = testStore();
    const r = await a2a(["mcp"], { dir: d.path, pipeStdin: true });
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 0, stderr: "", stdout: "" });
  });
});

describe.concurrent("the status table fits the width", () => {
  test("COLUMNS=60: every line fits, names are whole, previews and tasks are cut", async () => {
    using d = testStore();
    const name = "a-rather-long-slot-name-that-must-stay-whole";
    await a2a(["start", name, "a task with very many words in it that goes on"], { dir: d.path });
    await a2a(["publish", name, "x".repeat(300)], { dir: d.path });
    await a2a(["publish", "short", "y".repeat(300)], { dir: d.path });
    const narrow = await a2a(["status"], { dir: d.path, env: { COLUMNS: "90" } });
    const lines = narrow.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    for (const l of lines) expect({ l, len: l.length <= 90 }).toEqual({ l, len: true });
    expect(narrow.stdout).toContain(name + "  ");
    expect(narrow.stdout).toContain("…");
    const wide = await a2a(["status"], { dir: d.path, env: { COLUMNS: "400" } });
    expect(wide.stdout).toContain("a task with very many words in it that goes on");
    expect(wide.stdout).toContain("x".repeat(200));
    // Even too narrow for the rest, the name is not cut.
    expect((await a2a(["status"], { dir: d.path, env: { COLUMNS: "20" } })).stdout).toContain(name);
  });

  test("a long name at COLUMNS=60 and below: TASK, then PREVIEW, give way; no line is wider than the terminal", async () => {
    using d = testStore();
    const name = "averyveryveryverylongnamethatislong"; // 35 characters
    await a2a(["publish", name, "some result text here that is long enough"], { dir: d.path });
    await a2a(["publish", "a", "z"], { dir: d.path });
    const at = async (cols: number) => (await a2a(["status"], { dir: d.path, env: { COLUMNS: String(cols) } })).stdout.trimEnd().split("\n");
    for (const cols of [80, 68, 66, 62, 60, 56, 53]) {
      const lines = await at(cols);
      for (const l of lines) expect({ cols, l, fits: l.length <= cols }).toEqual({ cols, l, fits: true });
      expect(lines.some((l) => l.startsWith(name + "  "))).toBe(true);
    }
    // The fixed columns take 53 (35 + 5 + 3 + 4 and three separators): TASK and PREVIEW need 15
    // more for their headers, PREVIEW alone 9.
    expect((await at(68))[0].split(/\s+/)).toEqual(["NAME", "STATE", "TASK", "AGE", "SIZE", "PREVIEW"]);
    expect((await at(62))[0].split(/\s+/)).toEqual(["NAME", "STATE", "AGE", "SIZE", "PREVIEW"]);
    expect((await at(60))[0].split(/\s+/)).toEqual(["NAME", "STATE", "AGE", "SIZE"]);
  });

  test("a pipe with no COLUMNS keeps the fixed widths (a preview of 40)", async () => {
    using d = testStore();
    await a2a(["publish", "r", "z".repeat(100)], { dir: d.path });
    const r = await a2a(["status"], { dir: d.path, env: { COLUMNS: undefined } });
    expect(r.stdout).toContain("z".repeat(39) + "…\n");
  });
});

describe.concurrent("-q / --quiet", () => {
  test("silences confirmations, not results or errors", async () => {
    using d = testStore();
    for (const args of [["start", "r", "-q"], ["publish", "r", "v", "--quiet"], ["append", "s", "c", "-q"], ["send", "bob", "m", "--as", "a", "-q"], ["pub", "t", "m", "-q"], ["deny", "eve", "--as", "bob", "-q"], ["clear", "s", "-q"]]) {
      const r = await a2a(args, { dir: d.path });
      expect({ args, r }).toEqual({ args, r: { stdout: "", stderr: "", code: 0 } });
    }
    expect((await a2a(["wait", "r"], { dir: d.path })).stdout).toBe("v");
    const bad = await a2a(["publish", "r", "w", "-q", "--if-version", "7"], { dir: d.path });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toMatch(/^a2a: slot r is at version 2, not 7/);
  });

  test("task, lease, ack, policy and setup take -q too, and it silences their confirmations; results still print", async () => {
    using d = testStore();
    using home = tempDir();
    const o = { dir: d.path, env: { HOME: home.path } };
    const quiet = async (args: string[]) => expect({ args, r: await a2a([...args, "-q"], o) }).toEqual({ args, r: { stdout: "", stderr: "", code: 0 } });
    const id = (await a2a(["task", "add", "q", "p1", "-q"], o)).stdout.trim(); // the id is the result, not a confirmation
    expect(id).toMatch(/^\d{16}-[0-9a-f]{8}$/);
    const claim = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json", "-q"], o)).stdout);
    await quiet(["task", "renew", id, claim.token]);
    await quiet(["task", "fail", id, claim.token, "--reason", "flaky", "--no-retry"]);
    await quiet(["task", "retry", id]);
    const again = JSON.parse((await a2a(["task", "claim", "q", "--as", "w", "--json"], o)).stdout);
    await quiet(["task", "done", id, again.token, "ok"]);
    await quiet(["task", "cancel", (await a2a(["task", "add", "q", "p2"], o)).stdout.trim()]);
    await quiet(["lease", "take", "L", "--as", "w"]);
    await quiet(["lease", "renew", "L", "--as", "w"]);
    await quiet(["lease", "release", "L", "--as", "w"]);
    await a2a(["send", "w", "hi", "--as", "w2"], o);
    await quiet(["policy", "allowlist", "--as", "w"]);
    expect((await a2a(["policy", "--as", "w", "-q"], o)).stdout).toBe("w: policy allowlist, allowed: nobody, denied: nobody\n"); // asked for: shown
    await quiet(["allow", "w2", "--as", "w"]);
    const [msg] = (await a2a(["recv", "--as", "w", "--json", "--peek"], o)).stdout.trim().split("\n").map((l) => JSON.parse(l));
    await quiet(["ack", msg.id, "--as", "w"]);
    await quiet(["setup", "claude", "--dry-run"]);
  });
});

describe.concurrent("a2a completion", () => {
  test("bash: completes commands, a command's flags, and slot names", async () => {
    using d = testStore();
    await a2a(["publish", "researcher", "x"], { dir: d.path });
    const script = (await a2a(["completion", "bash"])).stdout;
    const complete = async (words: string[]) => {
      const sh = `source /dev/stdin <<'EOF'\n${script}EOF\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _a2a; printf '%s\\n' "\${COMPREPLY[@]}"`;
      const p = Bun.spawn({ cmd: ["bash", "-c", sh], env: { ...childEnv({ dir: d.path }), PATH: `${dirname(BIN)}:${process.env.PATH}` } /* dist/ holds the binary as a2a */, stdout: "pipe", stderr: "pipe" });
      return (await new Response(p.stdout).text()).trim().split("\n");
    };
    expect((await complete(["a2a", "pub"])).sort()).toEqual(["pub", "publish"]);
    expect(await complete(["a2a", "publish", "--if"])).toEqual(["--if-version"]);
    expect(await complete(["a2a", "append", "x", "--li"])).toEqual(["--lines"]);
    expect(await complete(["a2a", "wait", "res"])).toEqual(["researcher"]);
    expect(await complete(["a2a", "top"])).toEqual(["topics"]);
  });

  test("zsh and fish scripts name every command; an unknown shell is a usage error", async () => {
    const zsh = (await a2a(["completion", "zsh"])).stdout;
    const fish = (await a2a(["completion", "fish"])).stdout;
    for (const c of ["start", "publish", "wait", "topics", "completion", "mcp"]) {
      expect(zsh).toContain(`'${c}:`);
      expect(fish).toContain(`-a ${c} -d`);
    }
    expect(zsh.startsWith("#compdef a2a\n")).toBe(true);
    const r = await a2a(["completion", "powershell"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('a2a: no completion for shell "powershell": use bash, zsh or fish\n');
  });
});
