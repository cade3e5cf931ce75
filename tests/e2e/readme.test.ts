// README examples are tests (issue 13). At test time every fenced block of README.md's
// Quickstart and Scripting sections is extracted and run in a sandbox: a clean HOME (so the
// store is the default ~/.a2a inside it; on another engine, A2A_DIR names a testStore()), PATH = a bin directory with the built binary as
// `a2a` plus small real scripts standing in for the README's placeholders (`make`,
// `./run-scraper.sh`, `./fetch.sh`, `report.json`), then /usr/bin:/bin (bash, jq).
//
// - ```console blocks are transcripts: each `$ COMMAND` runs with bash in the sandbox and must
//   exit 0 with exactly the output shown under it (after normalising what differs by run: ages
//   in tables, message ids and their column's width, times, the OS user). Every console block of the README runs (one
//   fresh sandbox per section, blocks in order), so the mail example of Concepts is checked too.
// - ```sh blocks of Quickstart and Scripting are scripts: each runs twice in a row in the same
//   sandbox (users re-run scripts; the fan-in must not return the previous run's results) with
//   `bash -eu`, and is checked by what it is for (SCRIPTS below, keyed by its first comment
//   line). A block with no entry fails the test: a new example needs its check here.
// - The whole pass runs twice, each in a clean HOME.
// Also: the reference table's flags exist in each command's --help, the slot record shown in
// Concepts has the fields `status --json` prints (in an array), example commands in Concepts
// are valid usage (the `deny` example without --as was not).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ON_FILES, readUntil, ROOT, testStore, treeListens, until } from "../harness/run";

setDefaultTimeout(180_000);

const README = readFileSync(join(ROOT, "README.md"), "utf8");

interface Block {
  section: string; // the "## " heading it is under
  lang: string;
  code: string;
}

function blocks(md: string): Block[] {
  const found: Block[] = [];
  let section = "";
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const h = /^## (.+)$/.exec(lines[i]);
    if (h) section = h[1];
    const f = /^```(\w*)\s*$/.exec(lines[i]);
    if (!f) continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]);
    found.push({ section, lang: f[1], code: body.join("\n") + "\n" });
  }
  return found;
}

const ALL = blocks(README);
const RUNNABLE_SECTIONS = ["Quickstart: two terminals", "Scripting"];
const SCRIPTS_IN_README = ALL.filter((b) => b.lang === "sh" && RUNNABLE_SECTIONS.includes(b.section));
const title = (b: Block) => (/^# (.+)$/m.exec(b.code)?.[1] ?? "(untitled)").trim();

// ---- the sandbox -----------------------------------------------------------------------------

const STUB_MAKE_OUT = "cc -c a.c\ncc -c b.c\nb.c:3: error: expected ';'\nmake: *** [all] Error 2\n";

class Sandbox {
  readonly root = mkdtempSync(join(tmpdir(), "a2a-readme-"));
  readonly home = join(this.root, "home");
  readonly bin = join(this.root, "bin");
  readonly work = join(this.root, "work");
  readonly store = ON_FILES ? undefined : testStore();
  constructor() {
    for (const d of [this.home, this.bin, this.work]) mkdirSync(d);
    symlinkSync(BIN, join(this.bin, "a2a"));
    const script = (path: string, text: string) => {
      writeFileSync(path, text);
      chmodSync(path, 0o755);
    };
    // make: a build that prints and fails with status 2 (the streaming example must say so).
    script(join(this.bin, "make"), `#!/bin/sh\nprintf '%s' ${shq(STUB_MAKE_OUT.split("\n").slice(0, 2).join("\n") + "\n")}\nprintf '%s' ${shq(STUB_MAKE_OUT.split("\n").slice(2).join("\n"))} >&2\nexit 2\n`);
    for (const part of ["scraper", "parser", "indexer"]) script(join(this.work, `run-${part}.sh`), `#!/bin/sh\necho "${part} result of run $README_RUN"\n`);
    script(join(this.work, "fetch.sh"), `#!/bin/sh\necho "price list from $1"\n`);
    writeFileSync(join(this.work, "report.json"), JSON.stringify({ items: [{ sku: 1 }, { sku: 2 }, { sku: 3 }], total: 3 }) + "\n");
  }
  env(run = 1): Record<string, string> {
    const env: Record<string, string> = { HOME: this.home, PATH: `${this.bin}:/usr/bin:/bin`, LANG: "C.UTF-8", README_RUN: String(run), TERM: "dumb" };
    if (this.store) Object.assign(env, { A2A_DIR: this.store.path }, process.env.PGPASSWORD ? { PGPASSWORD: process.env.PGPASSWORD } : {});
    return env;
  }
  spawn(cmd: string[], run = 1) {
    return Bun.spawn({ cmd, cwd: this.work, env: this.env(run), stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  }
  async sh(script: string, run = 1, flags = "-eu"): Promise<{ stdout: string; stderr: string; code: number }> {
    const p = this.spawn(["bash", ...flags.split(" "), "-c", script], run);
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { stdout, stderr, code };
  }
  a2a = (args: string) => this.sh(`a2a ${args}`);
  [Symbol.dispose]() {
    this.store?.[Symbol.dispose]();
    rmSync(this.root, { recursive: true, force: true });
  }
}

const shq = (s: string) => "'" + s.replace(/'/g, "'\\''") + "'";

// ---- console transcripts ---------------------------------------------------------------------

interface Step {
  command: string;
  output: string;
}

function transcript(code: string): Step[] {
  const steps: Step[] = [];
  for (const line of code.replace(/\n$/, "").split("\n")) {
    if (line.startsWith("$ ")) steps.push({ command: line.slice(2), output: "" });
    else if (steps.length) steps[steps.length - 1].output += line + "\n";
    else throw new Error(`console block does not start with a "$ " command: ${line}`);
  }
  return steps;
}

// What differs from run to run, made equal in the README's text and in real output alike.
function normalise(text: string): string {
  // A frame's token is random, but the same on its first and last line: numbered in order.
  const tokens = new Map<string, number>();
  return text
    .replace(/\[frame ([0-9a-f]{8})\]/g, (_m, t: string) => `[frame <T${tokens.get(t) ?? tokens.set(t, tokens.size + 1).get(t)}>]`)
    .replace(/\b\d{16}-[0-9a-f]{4}-[0-9a-z]+-[0-9a-f]{6}\b/g, "<ID>")
    .replace(/\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z\b/g, "<TIME>")
    .replace(/\((OS user|role) [^)\s]+\)/g, "(OS user <USER>)") // a database store names the role
    .replace(/(?<=  )\d{1,2}[smhd](?=  )/g, "Ns")
    .replace(/ {2,}/g, "  ") // a table's columns are as wide as their widest cell, and an id's width varies by run
    .replace(/\s+$/, "");
}

async function runTranscripts(section: string): Promise<number> {
  using box = new Sandbox();
  let steps = 0;
  for (const b of ALL.filter((x) => x.lang === "console" && x.section === section)) {
    for (const s of transcript(b.code)) {
      const r = await box.sh(s.command);
      expect({ command: s.command, code: r.code, stderr: r.stderr, stdout: normalise(r.stdout) }).toEqual({ command: s.command, code: 0, stderr: "", stdout: normalise(s.output) });
      steps++;
    }
  }
  return steps;
}

// ---- scripts, by what each is for ---------------------------------------------------------------

interface Script {
  // Runs the block (run 1 and run 2, same sandbox) and checks what it did.
  check(box: Sandbox, code: string, run: number): Promise<void>;
}

const ok = (r: { code: number; stderr: string }, what: string) => expect({ what, code: r.code, stderr: r.stderr }).toEqual({ what, code: 0, stderr: "" });

const SCRIPTS: Record<string, Script> = {
  "fan-in: three jobs in parallel; go on when all three have published": {
    async check(box, code, run) {
      const r = await box.sh(code, run);
      ok(r, "fan-in");
      const expected = ["scraper", "parser", "indexer"].map((p) => `==> ${p} <==\n${p} result of run ${run}\n`).join("\n");
      expect(r.stdout).toBe(expected);
    },
  },
  "the first of several: whichever mirror answers first": {
    async check(box, code, run) {
      const r = await box.sh(code, run);
      ok(r, "first of several");
      expect(r.stdout).toMatch(/^fastest: mirror-(eu|us)\n$/);
    },
  },
  "stream a long job's output as it comes (one a2a process, a chunk per burst of lines), then publish how it ended": {
    async check(box, code, run) {
      // On the first run a follower is already there, as in "from another terminal".
      const follower = run === 1 ? box.spawn(["bash", "-eu", "-c", scriptTitled("follow it from another terminal: prints the lines as they land, ends once build is published")]) : undefined;
      if (follower) await until(() => treeListens(follower.pid), 20_000, "the follower's watch");
      const r = await box.sh(code, run);
      ok(r, "stream");
      expect(r.stdout).toBe("");
      expect((await box.a2a("wait build")).stdout).toBe("exit 2");
      const chunks = JSON.parse(`[${(await box.a2a("tail build --json")).stdout.trim().split("\n").join(",")}]`);
      expect(chunks.map((c: { text: string }) => c.text).join("")).toBe(STUB_MAKE_OUT);
      expect(chunks.length).toBeLessThanOrEqual(4); // lines that arrived together share a chunk: never more chunks than lines
      if (follower) {
        const [out, code] = await Promise.all([new Response(follower.stdout).text(), follower.exited]);
        expect({ out, code }).toEqual({ out: STUB_MAKE_OUT, code: 0 });
      }
    },
  },
  "follow it from another terminal: prints the lines as they land, ends once build is published": {
    async check(box, code) {
      const r = await box.sh(code); // build is published by now: prints it all and ends
      ok(r, "follow");
      expect(r.stdout).toBe(STUB_MAKE_OUT);
    },
  },
  "shared state with compare-and-set: read, change, write back only if nobody wrote in between": {
    async check(box, code, run) {
      // With pipefail too: the idiom must not depend on a failing command in a pipeline.
      const r = await box.sh(code, run, "-euo pipefail");
      ok(r, "compare-and-set");
      expect(r.stdout).toBe("");
      expect((await box.a2a("wait counter")).stdout).toBe(String(run));
      // A writer that read the old version loses, with exit 4, and the script says so.
      const stale = await box.sh(code.replace('cur=$(a2a status counter --json --missing-ok)', `cur='[{"version":${run - 1 || 99},"result":"0"}]'`), run);
      expect(stale.stdout).toBe("someone else changed it; read again\n");
      expect(stale.stderr).toMatch(/^a2a: slot counter is at version \d+, not \d+/);
      expect((await box.a2a("wait counter")).stdout).toBe(String(run));
    },
  },
  "react to events as they happen (this is what Claude Code's Monitor tool consumes)": {
    async check(box, code) {
      const p = box.spawn(["bash", "-eu", "-c", code]);
      let seen = "";
      const reading = readUntil(p.stdout, (t) => (seen = t).includes("published ping\n"), 60_000);
      let over = false;
      reading.then(() => (over = true));
      // Events are changes after the watch started: publish until one is reported.
      for (let i = 0; i < 300 && !over; i++) ok(await box.a2a(`publish ping -q "ping ${i}"`), "publish ping");
      await reading;
      process.kill(-p.pid, "SIGTERM");
      await p.exited;
      expect(seen).toMatch(/^(published ping\n)+/);
    },
  },
};

function scriptTitled(t: string): string {
  const b = SCRIPTS_IN_README.find((x) => title(x) === t);
  if (!b) throw new Error(`README has no sh block titled "# ${t}"`);
  return b.code;
}

// ---- the tests -------------------------------------------------------------------------------

describe("README blocks", () => {
  test("the runnable sections have blocks, and every sh block has a check", () => {
    expect(ALL.filter((b) => b.lang === "console" && b.section.startsWith("Quickstart")).length).toBe(3);
    expect(SCRIPTS_IN_README.map(title).sort()).toEqual(Object.keys(SCRIPTS).sort());
  });

  for (const pass of [1, 2]) {
    test(`pass ${pass}, clean HOME: every console transcript prints what the README shows`, async () => {
      const sections = [...new Set(ALL.filter((b) => b.lang === "console").map((b) => b.section))];
      expect(sections).toEqual(expect.arrayContaining(["Quickstart: two terminals", "Scripting", "Concepts"]));
      let steps = 0;
      for (const s of sections) steps += await runTranscripts(s);
      expect(steps).toBeGreaterThanOrEqual(8);
    });

    test(`pass ${pass}, clean HOME: every script of Quickstart and Scripting does what it says, twice in a row`, async () => {
      using box = new Sandbox();
      for (const run of [1, 2]) {
        for (const b of SCRIPTS_IN_README) await SCRIPTS[title(b)].check(box, b.code, run);
      }
    });
  }

  test("quickstart, terminal 2 first: the wait started before the publish prints the result", async () => {
    using box = new Sandbox();
    const [t1, t2] = ALL.filter((b) => b.lang === "console" && b.section.startsWith("Quickstart")).map((b) => transcript(b.code));
    const waiter = box.spawn(["bash", "-c", t2[0].command]);
    await until(() => treeListens(waiter.pid), 20_000, "the waiter's watch");
    for (const s of t1) expect(normalise((await box.sh(s.command)).stdout)).toBe(normalise(s.output));
    expect([await new Response(waiter.stdout).text(), await waiter.exited]).toEqual([t2[0].output.trimEnd(), 0]);
  });
});

describe("README facts", () => {
  test("the slot record shown in Concepts has the fields status --json prints, inside an array", async () => {
    using box = new Sandbox();
    await box.a2a('publish researcher "42 prices"');
    const listed = JSON.parse((await box.a2a("status researcher --json")).stdout);
    expect(Array.isArray(listed)).toBe(true);
    const shown = ALL.find((b) => b.lang === "json" && b.section === "Concepts" && b.code.includes('"name":"researcher"'));
    expect(shown).toBeDefined();
    expect(Object.keys(JSON.parse(shown!.code)).sort()).toEqual(Object.keys(listed[0]).sort());
    expect(Object.keys(JSON.parse((await box.a2a("wait researcher --json")).stdout)).sort()).toEqual(Object.keys(listed[0]).sort());
    expect(README).toContain("`a2a status researcher --json`\nprints an array");
  });

  test("every flag in the command reference exists in that command's --help; defaults match", async () => {
    const ref = README.split("\n## Command reference\n")[1].split("\n## ")[0];
    const rows = ref.split("\n").filter((l) => l.startsWith("| `a2a "));
    expect(rows.length).toBeGreaterThanOrEqual(20);
    let flags = 0;
    for (const row of rows) {
      for (const span of row.split("|")[1].match(/`a2a [^`]+`/g) ?? []) {
        // A command group (`a2a task add ...`): the subcommand's own help lists its flags.
        const m = /^`a2a ([a-z]+)(?: ([a-z]+))?/.exec(span);
        const cmd = m?.[1];
        if (!cmd || cmd === "help") continue;
        const sub = m?.[2] && ["task", "lease", "setup", "hook"].includes(cmd) ? ` ${m[2]}` : "";
        const help = (await box0.a2a(`${cmd}${sub} --help`)).stdout;
        for (const f of span.match(/--[a-z-]+/g) ?? []) {
          expect({ cmd, f, known: help.includes(f) }).toEqual({ cmd, f, known: true });
          flags++;
        }
      }
    }
    expect(flags).toBeGreaterThanOrEqual(30);
    // peers: the CLI's default scope is all (MCP list_peers: machine), and the README says so.
    expect((await box0.a2a("peers --help")).stdout).toContain('(default: "all")');
    expect(ref).toMatch(/`a2a peers \[--scope all\\\|machine\\\|directory\\\|repo\]` \| [^|]*default scope `all`; MCP `list_peers` defaults to `machine`/);
    // recv prints one message, as the reference says.
    expect(ref).toContain("print the oldest unread message (`--all`: every one)");
  });

  test("recv prints the oldest unread message, not all of them; its help says so", async () => {
    using box = new Sandbox();
    ok(await box.a2a('send bob "first" --as alice -q'), "send");
    ok(await box.a2a('send bob "second" --as alice -q'), "send");
    const r = await box.a2a("recv --as bob --json");
    expect(r.stdout.trim().split("\n").map((l) => JSON.parse(l).body)).toEqual(["first"]);
    const help = (await box.a2a("recv --help")).stdout.replace(/\s+/g, " ");
    expect(help).toContain("Print your oldest unread message (with --all: every unread one, oldest first)");
  });

  test("example commands in Concepts are valid usage (no exit 2), run in a clean sandbox", async () => {
    using box = new Sandbox();
    const concepts = README.split("\n## Concepts\n")[1].split("\n## ")[0];
    // A span with arguments is an example; `a2a recv` alone names a command in prose.
    const spans = [...new Set((concepts.match(/`a2a [^`]+`/g) ?? []).map((s) => s.slice(1, -1)))]
      .filter((s) => s.split(" ").length > 2 && !/\b[A-Z]{2,}\b|\.\.\.|--follow|--wait\b|^a2a (mcp|wait|watch)\b/.test(s));
    expect(spans).toEqual(expect.arrayContaining(["a2a deny mallory --as me", "a2a policy allowlist --as me"]));
    for (const s of spans) {
      const r = await box.sh(s);
      expect({ s, usage: r.code === 2, stderr: r.code === 2 ? r.stderr : "" }).toEqual({ s, usage: false, stderr: "" });
    }
  });
});

// One shared sandbox for read-only help lookups.
const box0 = new Sandbox();
process.on("exit", () => box0[Symbol.dispose]());
