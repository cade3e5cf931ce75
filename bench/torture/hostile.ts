// Hostile input: everything a confused user, a buggy agent or a foreign program can hand a2a.
//
//   names     path separators, "..", control characters, 10,000 characters, unicode, leading
//             dot, empty, shell metacharacters (and NUL, which argv cannot carry: checked in
//             process against lib/paths checkName);
//   payloads  invalid UTF-8 (stdin, --file, argv), 0 bytes, exactly at and one byte over
//             A2A_MAX_BYTES (ASCII and multi-byte, every input path), NUL bytes; bad flag
//             values and bad environment settings;
//   garbage   random bytes, torn and foreign records, a directory, a FIFO and symlinks (to a
//             file outside the store, to /dev/zero, dangling) in slots/; junk in tmp/, locks/,
//             streams/ and the root; stores whose slots/, tmp/ or root is a plain file;
//   perms     a store directory (and each subdirectory, and a record) with wrong permissions,
//             run as an unprivileged user (setpriv to nobody when root).
// Every command must end with a documented exit code and either nothing or one line
// "a2a: <what>: <what to do>" on stderr (warnings about skipped files allowed), never a trace
// or a hang; rejected input must leave the store byte for byte as it was; a foreign file must
// not stop status, gc or watch from serving the other slots; and nothing outside the store
// may change (the parent directory, with a canary file and a fake HOME, is snapshotted).

import { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { A2AError } from "../../lib/core/errors";
import { checkName } from "../../lib/core/names";
import {
  a2a, type Ctx, commandExists, diffSnapshots, listDir, type Outcome, type RunOpts, type RunResult, scenarioDir, short,
  snapshot, stderrProblem, Verdict,
} from "./common";
import { rng } from "./payload";

interface Case extends RunOpts {
  expect: number[]; // acceptable exit codes
  unchanged?: boolean; // the store must be byte for byte the same afterwards
  judge?: (r: RunResult) => string | undefined; // an extra check of the output
}

export async function hostile(ctx: Ctx): Promise<Outcome> {
  const v = new Verdict();
  const P = scenarioDir(ctx, "hostile");
  const stores = ["names", "payloads", "garbage", "slotsfile", "tmpfile", "rootfile", "perm"].map((s) => join(P, s));
  const inputs = join(P, "inputs"); // payload files handed to --file: ours, not a2a's to touch either
  mkdirSync(inputs, { recursive: true });
  const [namesStore, payloadStore, garbageStore] = stores;
  mkdirSync(join(P, "outside"), { recursive: true });
  mkdirSync(join(P, "home"), { recursive: true });
  writeFileSync(join(P, "outside", "canary.txt"), "do not touch\n");
  const outsideBefore = snapshot(P, [...stores, inputs]);
  const counts = new Map<string, number>();

  const tryIt = async (group: string, label: string, args: string[], c: Case): Promise<RunResult> => {
    counts.set(group, (counts.get(group) ?? 0) + 1);
    const store = c.dir;
    const before = c.unchanged && store ? snapshot(store) : undefined;
    const res = await a2a(ctx, args, { cwd: P, limitMs: 20_000, ...c, env: { HOME: join(P, "home"), ...c.env } });
    const prob = stderrProblem(res);
    if (prob) v.fail("bad stderr", `${label}: ${prob}`);
    else v.check(res.code !== null && c.expect.includes(res.code), "unexpected exit", () => `${label}: exit ${res.code}, expected ${c.expect.join(" or ")}: ${short(res.stderr || res.stdout)}`);
    const longest = Math.max(0, ...res.stderr.split("\n").map((l) => l.length));
    // Echoing a path the user gave is fine; echoing a 10,000-character name is not.
    const allowance = 300 + Math.max(0, ...args.filter((a) => a.length < 1000).map((a) => a.length));
    v.check(longest < allowance, "error line too long", () => `${label}: ${longest} characters`);
    if (before) {
      const changed = diffSnapshots(before, snapshot(store!));
      v.check(changed.length === 0, "rejected input changed the store", () => `${label}: ${changed.slice(0, 4).join(", ")}`);
    }
    if (ctx.verbose) ctx.log(`    ${group}: exit ${res.code ?? res.signal}  ${label}${res.stderr ? `  -> ${res.stderr.trim().split("\n").at(-1)!.slice(0, 120)}` : ""}`);
    const extra = c.judge?.(res);
    if (extra) v.fail("wrong output", `${label}: ${extra}`);
    return res;
  };

  await names(ctx, v, tryIt, namesStore);
  await payloads(ctx, v, tryIt, payloadStore, inputs, P);
  await garbage(ctx, tryIt, garbageStore, stores.slice(3, 6), P);
  const perm = await permissions(ctx, v, tryIt, stores[6], P);

  const outside = diffSnapshots(outsideBefore, snapshot(P, [...stores, inputs]));
  v.check(outside.length === 0, "wrote outside the store", () => outside.slice(0, 6).join(", "));
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  return v.outcome(`${total} hostile commands: every one a documented exit and a clean message or a skip, rejected input left the store unchanged, nothing outside the store touched`, [
    ["commands per group", [...counts].map(([g, n]) => `${g} ${n}`).join(", ")],
    ["permissions", perm],
  ]);
}

type TryIt = (group: string, label: string, args: string[], c: Case) => Promise<RunResult>;

const BAD_NAMES = [
  "a/b", "../x", "..", ".", "/etc/passwd", "a\\b", "", ".hidden", "x".repeat(10_000), "x".repeat(129), "café", "日本語", "😀",
  "a\u0001b", "tab\there", "new\nline", "del\u007f", "sp ace", "a:b", "*", "$(touch pwned)", "`id`", "x.json/..", "\u202eevil",
  "ｘ", "a\u200bb", "slots/../../x",
];
const GOOD_NAMES = ["x".repeat(128), "a.b.c", "_", "A-Z_09", "-dash", "a..b", "CON", "x.json"];

async function names(ctx: Ctx, v: Verdict, tryIt: TryIt, store: string): Promise<void> {
  const shown = (n: string) => JSON.stringify(n.length > 20 ? n.slice(0, 20) + "…" : n);
  const pos = (n: string) => (n.startsWith("-") ? ["--", n] : [n]);
  await tryIt("names", "seed", ["publish", "seed", "v"], { dir: store, expect: [0] });
  const verbs: string[][] = [["publish", "@", "v"], ["start", "@"], ["append", "@", "c"], ["wait", "@", "--timeout", "0"], ["tail", "@"], ["status", "@"], ["clear", "@"], ["watch", "@", "--timeout", "0"]];
  for (const [i, n] of BAD_NAMES.entries()) {
    // Long form: every command with every name; short form: publish plus one other, in turn.
    for (const verb of ctx.short ? [verbs[0], verbs[1 + (i % (verbs.length - 1))]] : verbs) {
      const args = verb.flatMap((a) => (a === "@" ? pos(n) : [a]));
      await tryIt("names", `${verb[0]} ${shown(n)}`, args, { dir: store, expect: [2], unchanged: true });
    }
  }
  for (const n of GOOD_NAMES) {
    const args = (verb: string, ...rest: string[]) => (n.startsWith("-") ? [verb, ...rest, "--", n] : [verb, n, ...rest]);
    await tryIt("names", `publish ${shown(n)}`, n.startsWith("-") ? ["publish", "--", n, "v"] : ["publish", n, "v"], { dir: store, expect: [0] });
    await tryIt("names", `wait ${shown(n)}`, args("wait", "--timeout", "0"), { dir: store, expect: [0], judge: (r) => (r.stdout === "v" ? undefined : `printed ${short(r.stdout)}`) });
    await tryIt("names", `clear ${shown(n)}`, args("clear"), { dir: store, expect: [0] });
  }
  // NUL cannot travel in argv; the one gate every adapter goes through must refuse it.
  for (const n of ["a\0b", "\0", "ok\0/../../x"]) {
    let refused = false;
    try {
      checkName(n);
    } catch (e) {
      refused = e instanceof A2AError && e.exitCode === 2;
    }
    v.check(refused, "NUL name accepted", () => JSON.stringify(n));
  }
}

async function payloads(_ctx: Ctx, v: Verdict, tryIt: TryIt, store: string, inputs: string, P: string): Promise<void> {
  const limit = 4096;
  const env = { A2A_MAX_BYTES: String(limit) };
  const c = (expect: number[], extra: Partial<Case> = {}): Case => ({ dir: store, env, expect, unchanged: expect[0] !== 0, ...extra });
  const file = (name: string, data: string | Uint8Array) => {
    const p = join(inputs, name);
    writeFileSync(p, data);
    return p;
  };
  const waitPrints = (expected: string) => async (label: string) => {
    const res = await tryIt("payloads", `${label}: wait`, ["wait", "pl", "--timeout", "5"], c([0]));
    v.check(res.stdout === expected, "payload altered", () => `${label}: wrote ${expected.length} chars, wait printed ${res.stdout.length}: ${short(res.stdout, 60)}`);
  };
  await tryIt("payloads", "seed", ["publish", "pl", "seed"], c([0]));
  const invalid = new Uint8Array([0x61, 0xff, 0xfe, 0x62, 0xc3]);
  await tryIt("payloads", "invalid UTF-8 on stdin", ["publish", "pl", "-"], c([2], { stdin: invalid }));
  await tryIt("payloads", "invalid UTF-8 --file", ["publish", "pl", "--file", file("bad.bin", invalid)], c([2]));
  await tryIt("payloads", "invalid UTF-8 chunk on stdin", ["append", "pl", "-"], c([2], { stdin: invalid }));
  // argv cannot be built with invalid bytes from JS: a shell makes them.
  const sh = await tryIt("payloads", "invalid UTF-8 in argv", ["publish", "pl8", "PLACEHOLDER"], {
    ...c([0, 2]),
    prefix: ["sh", "-c", `exec "$0" publish pl8 "$(printf 'a\\377b')"`],
  });
  if (sh.code === 0) {
    const w = await tryIt("payloads", "invalid UTF-8 in argv: wait", ["wait", "pl8", "--timeout", "5"], c([0]));
    v.fail("payload altered", `argv bytes 61 ff 62 were accepted and stored as ${short(w.stdout)} (${Buffer.byteLength(w.stdout)} bytes): not byte for byte, and no error`);
  }
  for (const [label, args, extra] of [
    ["empty argument", ["publish", "pl", ""], {}],
    ["empty stdin", ["publish", "pl", "-"], { stdin: "" }],
    ["empty --file", ["publish", "pl", "--file", file("empty.txt", "")], {}],
  ] as [string, string[], Partial<Case>][]) {
    await tryIt("payloads", label, args, c([0], extra));
    await waitPrints("")(label);
  }
  const nul = "a\0b\0\0c";
  await tryIt("payloads", "NUL bytes on stdin", ["publish", "pl", "-"], c([0], { stdin: nul }));
  await waitPrints(nul)("NUL bytes on stdin");
  // Exactly at the limit passes byte for byte; one byte over is refused, by every input path.
  const at = { ascii: "a".repeat(limit), multi: "é".repeat(limit / 2), mixed: "日".repeat(1364) + "😀" };
  const over = { ascii: "a".repeat(limit + 1), multi: "é".repeat(limit / 2) + "a", mixed: "日".repeat(1365) + "é" };
  for (const [kind, text] of Object.entries(at)) {
    if (Buffer.byteLength(text) !== limit) throw new Error(`bad fixture ${kind}`);
    await tryIt("payloads", `at the limit (${kind}) in argv`, ["publish", "pl", text], c([0]));
    await waitPrints(text)(`at the limit (${kind})`);
    await tryIt("payloads", `at the limit (${kind}) on stdin`, ["publish", "pl", "-"], c([0], { stdin: text }));
    await tryIt("payloads", `at the limit (${kind}) --file`, ["publish", "pl", "--file", file(`at-${kind}`, text)], c([0]));
    await waitPrints(text)(`at the limit (${kind}) --file`);
  }
  for (const [kind, text] of Object.entries(over)) {
    if (Buffer.byteLength(text) !== limit + 1) throw new Error(`bad fixture ${kind}`);
    await tryIt("payloads", `over the limit (${kind}) in argv`, ["publish", "pl", text], c([2]));
    await tryIt("payloads", `over the limit (${kind}) on stdin`, ["publish", "pl", "-"], c([2], { stdin: text }));
    await tryIt("payloads", `over the limit (${kind}) --file`, ["publish", "pl", "--file", file(`over-${kind}`, text)], c([2]));
    await tryIt("payloads", `over the limit (${kind}) chunk`, ["append", "run", text], c([2]));
    await tryIt("payloads", `over the limit (${kind}) task`, ["start", "run", text], c([2]));
  }
  // The default limit (1 MiB), through the paths that can carry it.
  const mib = 1024 * 1024;
  const bigAt = "b".repeat(mib);
  await tryIt("payloads", "1 MiB --file (default limit)", ["publish", "big", "--file", file("mib", bigAt)], { dir: store, expect: [0] });
  const bigWait = await tryIt("payloads", "1 MiB: wait", ["wait", "big", "--timeout", "5"], { dir: store, expect: [0] });
  v.check(bigWait.stdout === bigAt, "payload altered", () => `1 MiB: wait printed ${bigWait.stdout.length} bytes`);
  await tryIt("payloads", "1 MiB + 1 on stdin", ["publish", "big", "-"], { dir: store, expect: [2], unchanged: true, stdin: bigAt + "b" });
  await tryIt("payloads", "1 MiB + 1 --file", ["publish", "big", "--file", file("mib1", bigAt + "b")], { dir: store, expect: [2], unchanged: true });
  // Bad flag values and settings.
  for (const [label, args, envx] of [
    ["--if-version abc", ["publish", "pl", "x", "--if-version", "abc"], {}],
    ["--if-version -1", ["publish", "pl", "x", "--if-version", "-1"], {}],
    ["--if-version 1.5", ["publish", "pl", "x", "--if-version", "1.5"], {}],
    ["--if-version 1e30", ["publish", "pl", "x", "--if-version", "99999999999999999999999"], {}],
    ["--timeout abc", ["wait", "pl", "--timeout", "abc"], {}],
    ["--timeout -1", ["wait", "pl", "--timeout", "-1"], {}],
    ["--ttl 5x", ["publish", "pl", "x", "--ttl", "5x"], {}],
    ["--after-version x", ["wait", "pl", "--after-version", "x"], {}],
    ["unknown flag", ["publish", "pl", "x", "--frobnicate"], {}],
    ["unknown command", ["frobnicate"], {}],
    ["both argument and --file", ["publish", "pl", "x", "--file", file("x.txt", "x")], {}],
    ["--file missing", ["publish", "pl", "--file", join(P, "outside", "nope")], {}],
    ["A2A_MAX_BYTES=abc", ["publish", "pl", "x"], { A2A_MAX_BYTES: "abc" }],
    ["A2A_MAX_BYTES=0", ["publish", "pl", "x"], { A2A_MAX_BYTES: "0" }],
    ["A2A_MAX_BYTES=-5", ["publish", "pl", "x"], { A2A_MAX_BYTES: "-5" }],
    ["A2A_WATCH=bogus", ["wait", "pl", "--timeout", "0"], { A2A_WATCH: "bogus" }],
    ["A2A_POLL_MS=0", ["wait", "pl", "--timeout", "0"], { A2A_POLL_MS: "0" }],
  ] as [string, string[], Record<string, string>][]) {
    await tryIt("payloads", label, args, { dir: store, env: { ...env, ...envx }, expect: [2], unchanged: true });
  }
}

async function garbage(ctx: Ctx, tryIt: TryIt, store: string, structural: string[], P: string): Promise<void> {
  const r = rng(ctx.seed ^ 0x6a7b);
  const slots = join(store, "slots");
  const g = (label: string, args: string[], expect: number[], extra: Partial<Case> = {}) => tryIt("garbage", label, args, { dir: store, expect, ...extra });
  await g("seed good", ["publish", "good", "the good one"], [0]);
  await g("seed stream", ["append", "strm", "chunk"], [0]);
  const junk = (n: number) => new Uint8Array(Array.from({ length: n }, () => Math.floor(r() * 256)));
  const goodText = Bun.file(join(slots, "good.json")).text();
  writeFileSync(join(slots, "X.json"), junk(1 + Math.floor(r() * 4096)));
  writeFileSync(join(slots, "T.json"), (await goodText).slice(0, 40));
  writeFileSync(join(slots, "W.json"), (await goodText).replace('"name":"good"', '"name":"other"'));
  writeFileSync(join(slots, "V.json"), (await goodText).replace('"a2a":1', '"a2a":2'));
  writeFileSync(join(slots, "E.json"), "");
  writeFileSync(join(slots, "H.json"), junk(3 * 1024 * 1024));
  mkdirSync(join(slots, "Y.json", "inner"), { recursive: true });
  symlinkSync(join(P, "outside", "canary.txt"), join(slots, "L.json"));
  symlinkSync("/dev/zero", join(slots, "Z.json"));
  symlinkSync("/nonexistent/a2a", join(slots, "D.json"));
  Bun.spawnSync(["mkfifo", join(slots, "F.json")]);
  for (const f of [".dot.json", ".x", "readme.txt", "UP.JSON", "a b.json", "..json"]) writeFileSync(join(slots, f), junk(64));
  mkdirSync(join(store, "tmp", "adir"), { recursive: true });
  writeFileSync(join(store, "tmp", "123.junk.tmp"), junk(100));
  writeFileSync(join(store, "tmp", "old.tmp"), junk(100));
  const old = Date.now() / 1000 - 7200;
  utimesSync(join(store, "tmp", "old.tmp"), old, old);
  mkdirSync(join(store, "locks", "stale.lock"), { recursive: true });
  utimesSync(join(store, "locks", "stale.lock"), old, old);
  writeFileSync(join(store, "locks", "K.lock"), "not a directory");
  utimesSync(join(store, "locks", "K.lock"), old, old);
  writeFileSync(join(store, "streams", "good"), "a file where a directory belongs");
  mkdirSync(join(store, "streams", "X"), { recursive: true });
  writeFileSync(join(store, "streams", "X", "0000000001"), junk(200));
  writeFileSync(join(store, "streams", "strm", "0000000002"), junk(200)); // uncounted
  writeFileSync(join(store, "unrelated.txt"), "hello");
  writeFileSync(join(store, ".DS_Store"), junk(30));
  mkdirSync(join(store, "notes"), { recursive: true });

  const lists = (r: RunResult) => (r.stdout.includes("good") ? undefined : `good not listed: ${short(r.stdout)}`);
  await g("status with garbage", ["status"], [0], { judge: lists });
  await g("status --json with garbage", ["status", "--json"], [0], { judge: lists });
  await g("wait good with garbage", ["wait", "good", "--timeout", "5"], [0], { judge: (x) => (x.stdout === "the good one" ? undefined : short(x.stdout)) });
  await g("tail strm with garbage", ["tail", "strm"], [0], { judge: (x) => (x.stdout === "chunk" ? undefined : `tail printed ${short(x.stdout)}`) });
  await g("watch with garbage", ["watch", "--timeout", "0.5"], [0]);
  await g("wait --any with garbage", ["wait", "X", "Y", "F", "Z", "good", "--any", "--timeout", "5"], [0]);
  for (const n of ["X", "T", "W", "V", "E", "H", "Y", "L", "Z", "D", "F"]) {
    await g(`status ${n}`, ["status", n], [3]);
    // A damaged record refuses every publish, so a wait on it ends at once, exit 1 (issue 33);
    // a name whose file is not a record at all is still waited for.
    await g(`wait ${n}`, ["wait", n, "--timeout", "0.3"], [1, 124]);
    await g(`tail ${n}`, ["tail", n], [3]);
  }
  await g("gc with garbage", ["gc", "--json"], [0]);
  // A damaged record is not overwritten blindly (its version would be lost): exit 1, and
  // `clear` removes it, after which publish works.
  await g("publish over a torn record", ["publish", "T", "fixed"], [1]);
  await g("publish over random bytes", ["publish", "X", "fixed"], [1]);
  await g("clear a torn record", ["clear", "T"], [0]);
  await g("publish after clearing it", ["publish", "T", "fixed"], [0]);
  await g("publish over a symlink", ["publish", "L", "fixed"], [0, 1]);
  await g("publish over a symlink to /dev/zero", ["publish", "Z", "fixed"], [0, 1]);
  await g("publish over a directory", ["publish", "Y", "fixed"], [1]);
  await g("publish over a FIFO", ["publish", "F", "fixed"], [0, 1]);
  await g("publish with a plain file as lock", ["publish", "K", "v"], [0, 1]);
  // A foreign file where a stream directory belongs is never removed to make room.
  await g("start good (streams/good is a file)", ["start", "good"], [0]);
  await g("append good (streams/good is still a file)", ["append", "good", "c1"], [1]);
  await g("clear a directory slot", ["clear", "Y"], [0, 1]);
  await g("clear random bytes", ["clear", "W"], [0]);
  await g("clear --all with garbage", ["clear", "--all"], [0, 1]);
  await g("gc after", ["gc"], [0]);

  // Stores whose structure is wrong: clear errors, no writes elsewhere (the missing
  // directories a write creates before it fails are allowed). A directory holding a file
  // named slots or tmp is no a2a store (exit 2 before anything is written).
  const [slotsFile, tmpFile, rootFile] = structural;
  mkdirSync(slotsFile, { recursive: true });
  writeFileSync(join(slotsFile, "slots"), "a file");
  mkdirSync(tmpFile, { recursive: true });
  writeFileSync(join(tmpFile, "tmp"), "a file");
  writeFileSync(rootFile, "a file where the store belongs");
  for (const [dir, what] of [[slotsFile, "slots/ is a file"], [tmpFile, "tmp/ is a file"], [rootFile, "the store is a file"]]) {
    await tryIt("garbage", `publish (${what})`, ["publish", "a", "v"], { dir, expect: [1, 2] });
    await tryIt("garbage", `status (${what})`, ["status"], { dir, expect: [0, 1, 2] }); // 2: not a store (issue 33.9), as a write says
    await tryIt("garbage", `wait (${what})`, ["wait", "a", "--timeout", "0.2"], { dir, expect: [1, 2, 124] });
    await tryIt("garbage", `gc (${what})`, ["gc"], { dir, expect: [0, 1, 2] });
  }
  await tryIt("garbage", "--dir ''", ["--dir", "", "publish", "a", "v"], { expect: [2] });
  await tryIt("garbage", "--dir too long", ["--dir", join(P, "x".repeat(300)), "publish", "a", "v"], { expect: [1] });
  await tryIt("garbage", "--dir /dev/null", ["--dir", "/dev/null", "publish", "a", "v"], { expect: [1] });
}

// Wrong permissions only bite an unprivileged user: as root, drop to nobody with setpriv.
async function permissions(ctx: Ctx, v: Verdict, tryIt: TryIt, store: string, P: string): Promise<string> {
  let prefix: string[] = [];
  if (ctx.isRoot) {
    if (!commandExists("setpriv")) return "skipped: running as root and setpriv is missing, so permissions cannot bite";
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];
    for (let d = P; d.length > 1 && d !== "/tmp"; d = join(d, "..")) chmodSync(d, 0o711); // let nobody reach the store
    mkdirSync(store, { recursive: true });
    chownSync(store, 65534, 65534);
  }
  const p = (label: string, args: string[], expect: number[], extra: Partial<Case> = {}) =>
    tryIt("perms", label, args, { dir: store, prefix, expect, ...extra });
  const denied = (x: RunResult) => (/permission/i.test(x.stderr) ? undefined : `message does not mention permissions: ${short(x.stderr)}`);
  await p("seed", ["publish", "good", "v"], [0]);
  const tried: string[] = [];
  const withMode = async (path: string, mode: number, fn: () => Promise<void>) => {
    chmodSync(path, mode);
    try {
      await fn();
    } finally {
      chmodSync(path, path.endsWith(".json") ? 0o600 : 0o700);
    }
  };
  await withMode(store, 0o000, async () => {
    tried.push("store 000");
    for (const args of [["status"], ["publish", "good", "w"], ["wait", "good", "--timeout", "0.2"], ["gc"], ["clear", "good"], ["watch", "--timeout", "0.2"]]) {
      await p(`${args[0]} (store 000)`, args, [1], { judge: denied, unchanged: true });
    }
  });
  for (const sub of ["slots", "tmp", "locks"]) {
    await withMode(join(store, sub), 0o500, async () => {
      tried.push(`${sub}/ 500`);
      await p(`publish (${sub}/ read-only)`, ["publish", "good", "w"], [1], { judge: denied, unchanged: true });
      await p(`status (${sub}/ read-only)`, ["status"], [0]);
      await p(`wait (${sub}/ read-only)`, ["wait", "good", "--timeout", "1"], [0]);
    });
  }
  await withMode(join(store, "slots", "good.json"), 0o000, async () => {
    tried.push("record 000");
    await p("status (record 000)", ["status"], [0, 1]);
    await p("wait (record 000)", ["wait", "good", "--timeout", "0.2"], [1, 124]);
    await p("publish (record 000)", ["publish", "good", "w"], [0, 1]);
  });
  const left = listDir(join(store, "tmp"));
  v.check(left.length === 0, "temp file left behind", () => `after permission failures: tmp/${left.join(" tmp/")}`);
  return `${prefix.length ? "as nobody (setpriv)" : "as the current user"}: ${tried.join(", ")}`;
}
