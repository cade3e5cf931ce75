// One signal policy for every blocking command (cli/run.ts): stopped by signal N while it
// blocks, it exits 128+N (143 for SIGTERM, 130 for Ctrl-C, 129 for SIGHUP), never 0 and never
// the timeout's 124. Each case waits until the process is armed (it listens for the store's
// changes, its directory watch or its LISTEN, and it catches SIGTERM, read from /proc) before
// signalling: no sleeps.
// Also: a reader that closes stdout ends a non-durable stream quietly (exit 0).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, listens, spawnA2A, tempDir, testStore, until } from "../harness/run";

setDefaultTimeout(120_000);

// True once `pid` has a handler for `signal` (the SigCgt mask in /proc/PID/status).
function catches(pid: number, signal: number): boolean {
  try {
    const m = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return !!m && ((BigInt("0x" + m[1]) >> BigInt(signal - 1)) & 1n) === 1n;
  } catch {
    return false;
  }
}

const armed = (pid: number) => listens(pid) && catches(pid, 15);

const BLOCKING: { args: string[]; stderr?: RegExp }[] = [
  { args: ["wait", "never"] },
  { args: ["wait", "a", "b", "--any", "--timeout", "1h"] },
  { args: ["tail", "never", "--follow"] },
  { args: ["watch"] },
  { args: ["recv", "--as", "bob", "--wait"] },
  { args: ["send", "bob", "are you there?", "--as", "alice", "--wait-reply"], stderr: /^a2a: interrupted before bob replied to \S+: its reply will wait in your inbox \(a2a recv\)\n$/ },
  { args: ["sub", "news.>", "--follow"] },
  { args: ["sub", "news.>", "--as", "reader", "--follow", "--timeout", "1h"] },
];

describe.concurrent("a blocking command stopped by a signal exits 128+N", () => {
  for (const c of BLOCKING) {
    test(`a2a ${c.args.join(" ")}: SIGTERM -> 143`, async () => {
      using d = testStore();
      const p = spawnA2A(c.args, { dir: d.path });
      await until(() => armed(p.pid), 20_000, `a2a ${c.args[0]} armed`);
      p.kill("SIGTERM");
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      expect({ code, stdout }).toEqual({ code: 143, stdout: "" });
      if (c.stderr) expect(stderr).toMatch(c.stderr);
      else expect(stderr).toBe("");
    });
  }

  for (const [sig, code] of [["SIGINT", 130], ["SIGHUP", 129]] as const) {
    test(`a2a wait: ${sig} -> ${code}`, async () => {
      using d = testStore();
      const p = spawnA2A(["wait", "never"], { dir: d.path });
      await until(() => armed(p.pid) && catches(p.pid, sig === "SIGINT" ? 2 : 1), 20_000, "a2a wait armed");
      p.kill(sig);
      expect(await p.exited).toBe(code);
    });
  }

  test("a signal does not hide a result: a wait that got its value exits 0", async () => {
    using d = testStore();
    const p = spawnA2A(["wait", "r"], { dir: d.path });
    await until(() => armed(p.pid), 20_000, "a2a wait armed");
    expect((await a2a(["publish", "r", "value"], { dir: d.path })).code).toBe(0);
    expect([await new Response(p.stdout).text(), await p.exited]).toEqual(["value", 0]);
  });
});

describe.concurrent("a reader that closes stdout", () => {
  // `a2a tail -f | head -c N`: once head has left, the next chunk finds no reader; a2a must
  // end then (exit 0, nothing durable was consumed), not follow on until the publish.
  test("ends tail --follow quietly, exit 0, before the slot is published", async () => {
    using d = testStore();
    expect((await a2a(["append", "s", "hello"], { dir: d.path })).code).toBe(0);
    const sh = Bun.spawn({
      cmd: ["bash", "-c", `"$A2A_BIN" tail s --follow | head -c 5 >/dev/null; echo "\${PIPESTATUS[0]}"`],
      env: { ...process.env, A2A_BIN: BIN, A2A_DIR: d.path },
      stdout: "pipe",
      stderr: "pipe",
    });
    let over = false;
    const exited = sh.exited.then(() => (over = true));
    // Each append is a write a2a must attempt; the first after head's exit hits EPIPE.
    for (let i = 0; i < 200 && !over; i++) {
      expect((await a2a(["append", "s", `chunk ${i}\n`], { dir: d.path })).code).toBe(0);
    }
    await exited;
    expect(await new Response(sh.stdout).text()).toBe("0\n");
    expect(await new Response(sh.stderr).text()).toBe("");
    // It ended by itself: the slot is still running.
    expect(JSON.parse((await a2a(["status", "s", "--json"], { dir: d.path })).stdout)[0].state).toBe("running");
  });
});

// Issue 33: Ctrl-C on `ssh devbox a2a wait NAME` left the remote wait running until the slot
// was published: ssh's end of its stdout pipe was closed, and nothing was ever written to find
// out. A blocking command whose stdout's reader goes away ends within a second, written to or
// not, quietly: a stream (watch, tail --follow, sub --follow) exit 0, its reader being done;
// a wait exit 141 (128+SIGPIPE), so `a2a wait x && deploy` never deploys on a wait that did
// not end. Its stdin is /dev/null here and ends nothing (stdin at its end says nothing of the
// caller).
describe.concurrent("a blocking command whose stdout's reader goes away", () => {
  const more: { args: string[]; before?: string[][] }[] = [
    { args: ["task", "claim", "q", "--as", "w", "--wait"] },
    { args: ["task", "wait", "TASK"], before: [["task", "add", "q", "never done"]] },
    { args: ["lease", "take", "db", "--as", "bob", "--wait"], before: [["lease", "take", "db", "--as", "alice", "--ttl", "1h"]] },
  ];
  for (const c of [...BLOCKING, ...more] as { args: string[]; before?: string[][] }[]) {
    const want = ["watch", "tail", "sub"].includes(c.args[0]) ? 0 : 141;
    test(`a2a ${c.args.join(" ")}: ends by itself, exit ${want}, stdin /dev/null notwithstanding`, async () => {
      using d = testStore();
      let args = c.args;
      for (const b of c.before ?? []) {
        const r = await a2a(b, { dir: d.path });
        expect(r.code).toBe(0);
        args = args.map((a) => (a === "TASK" ? r.stdout.trim() : a));
      }
      const p = spawnA2A(args, { dir: d.path });
      await until(() => armed(p.pid), 20_000, `a2a ${c.args[0]} armed`);
      await p.stdout.cancel(); // the reader is gone, as ssh's is when the connection goes
      const code = await Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r("still running after 10 s"), 10_000))]);
      if (typeof code === "string") p.kill();
      expect({ code, stderr: await new Response(p.stderr).text() }).toEqual({ code: want, stderr: "" });
    });
  }

  test("a2a reserve --wait in a repository: ends by itself, exit 141", async () => {
    using d = testStore();
    using repo = tempDir("a2a-hangup-repo-");
    const git = (...args: string[]) => expect(Bun.spawnSync(["git", ...args], { cwd: repo.path, env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" } }).exitCode).toBe(0);
    git("init", "-q", "-b", "main");
    writeFileSync(join(repo.path, "a.ts"), "x\n");
    git("add", ".");
    git("commit", "-q", "-m", "one");
    expect((await a2a(["reserve", "a.ts", "--as", "alice"], { dir: d.path, cwd: repo.path })).code).toBe(0);
    const p = spawnA2A(["reserve", "a.ts", "--as", "bob", "--wait"], { dir: d.path, cwd: repo.path });
    await until(() => catches(p.pid, 15), 20_000, "a2a reserve --wait armed");
    await p.stdout.cancel();
    const code = await Promise.race([p.exited, new Promise<string>((r) => setTimeout(() => r("still running after 10 s"), 10_000))]);
    if (typeof code === "string") p.kill();
    expect({ code, stderr: await new Response(p.stderr).text() }).toEqual({ code: 141, stderr: "" });
  });

  test("a reader that stays, and a stdin at its end, stop nothing: the wait gets its value", async () => {
    using d = testStore();
    const p = spawnA2A(["wait", "r"], { dir: d.path, pipeStdin: true }); // stdin a pipe closed at once
    await until(() => armed(p.pid), 20_000, "a2a wait armed");
    expect((await a2a(["publish", "r", "value"], { dir: d.path })).code).toBe(0);
    expect([await new Response(p.stdout).text(), await p.exited]).toEqual(["value", 0]);
  });
});
