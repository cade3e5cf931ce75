// Messaging figures: send -> receive latency of a waiting `a2a recv --wait` process, and
// sustained messages/s with one and four senders. Every time is taken in THIS process
// (performance.now()), so no clock is compared across processes (see notes/anchors.md).
//
//   bun bench/messaging.ts [--trials 300] [--messages 4000]      (A2A_BIN picks the binary)
//
// 0. floor: the same harness with a bare Bun fs.watch waiter (no a2a code): what this machine
//    allows right now; read the other rows against it.
// 1. wake: a fresh `a2a recv --wait --json` blocks in its watch (checked through /proc); this
//    process writes a message record to ROOT/tmp/ exactly as `send` does, then takes t0 and
//    renames it into new/ (the instant of delivery); t1 = the receiver's JSON line arrives on
//    its stdout pipe (it has claimed, read and written the message). n = trials.
// 2. shell: the same waiter, woken by a spawned `a2a send` process: t0 before the spawn.
// 3. throughput: K sender processes (lib sendMessage in a loop, each its own process) and one
//    receiver process (lib receive --all --wait in a loop, marking read) on one inbox; t0 =
//    "go" written to the senders, t1 = the receiver reports it has read all K x M.
import { closeSync, fsyncSync, mkdtempSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { BIN, childEnv, hasWatch, readUntil, until } from "../tests/harness/run";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ensureInbox } from "../lib/mail/inbox";
import { encodeMessage, newMessageId } from "../lib/mail/message";
import { msgFile, newDir } from "../lib/fs/paths";
import { sendMessage } from "../lib/mail/send";
import { receive } from "../lib/mail/receive";
import { openStore } from "../lib/engine/open";
import { ensureDir } from "../lib/fs/guard";
import { tmpDir } from "../lib/fs/paths";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};

// ---- child roles -------------------------------------------------------------------------
const role = process.argv[2];
if (role === "floor") {
  // The floor: a bare Bun fs.watch waiter, no a2a code; prints the first file's content.
  const { watch, readFileSync } = await import("node:fs");
  const dir = process.argv[3];
  const w = watch(dir, (_e, f) => {
    if (!f || String(f).startsWith(".")) return;
    try {
      process.stdout.write(readFileSync(join(dir, String(f)), "utf8"));
    } catch {
      return;
    }
    w.close();
    process.exit(0);
  });
  // The Bun runtime may hold an inotify fd of its own, so /proc cannot tell when this watch
  // is ready: say so on stdout instead.
  process.stdout.write("ready\n");
  await new Promise(() => {}); // until the event
}
if (role === "sender" || role === "receiver") {
  const [dir, n, tag] = process.argv.slice(3);
  const store = openStore({ dir, env: {} });
  store.maxUnread = 1e9;
  const total = Number(n);
  if (role === "sender") {
    process.stdout.write("ready\n");
    for await (const _ of console) break; // "go"
    for (let i = 0; i < total; i++) await sendMessage(store, `sender${tag}`, "box", `m ${tag} ${i}`);
    process.stdout.write("done\n");
  } else {
    await ensureInbox(store, "box");
    process.stdout.write("ready\n");
    let got = 0;
    while (got < total) {
      const msgs = await receive(store, "box", { wait: true, max: Infinity }, () => {});
      got += msgs.value.length;
    }
    process.stdout.write(`done ${got}\n`);
  }
  process.exit(0);
}

// ---- parent ------------------------------------------------------------------------------
const firstLine = (stream: ReadableStream<Uint8Array>) => readUntil(stream, (t) => t.includes("\n"), 60_000);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const row = (name: string, xs: number[]) =>
  `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(3)} | ${pct(xs, 90).toFixed(3)} | ${pct(xs, 99).toFixed(3)} | ${Math.max(...xs).toFixed(3)} |`;

async function latency(dir: string, trials: number, via: "rename" | "cli" | "floor"): Promise<number[]> {
  const viaCli = via === "cli";
  const store = openStore({ dir, env: {} });
  await ensureInbox(store, "lat");
  ensureDir(store, tmpDir(store));
  const env = childEnv({ dir });
  const out: number[] = [];
  for (let i = 0; i < trials + 5; i++) {
    const cmd = via === "floor" ? ["bun", join(import.meta.dir, "messaging.ts"), "floor", newDir(store, "lat")] : [BIN, "recv", "--as", "lat", "--wait", "--json"];
    const w = Bun.spawn({ cmd, env, stdout: "pipe", stderr: "inherit" });
    try {
      if (via === "floor") {
        if ((await firstLine(w.stdout)) !== "ready\n") throw new Error("the floor waiter did not start");
      } else await until(() => hasWatch(w.pid), 30_000, "the waiter to register its watch", 1);
      let t0: number;
      if (viaCli) {
        t0 = performance.now();
        Bun.spawn({ cmd: [BIN, "send", "lat", `ping ${i}`, "--as", "bench"], env, stdout: "ignore", stderr: "inherit" });
      } else {
        // `send` step 4 by hand: temp file in ROOT/tmp written and synced, then the rename.
        const id = newMessageId(store);
        const body = `ping ${i}`;
        const temp = join(tmpDir(store), `bench.${i}.tmp`);
        const fd = openSync(temp, "wx", 0o600);
        writeSync(fd, encodeMessage({ a2a: 1, id, from: "bench", to: "lat", body, size: body.length, sent_at: Date.now() / 1000, reply_to: null, host: store.host, pid: process.pid }));
        fsyncSync(fd);
        closeSync(fd);
        t0 = performance.now();
        renameSync(temp, msgFile(newDir(store, "lat"), id));
      }
      const line = await firstLine(w.stdout);
      const t1 = performance.now();
      if (!line.includes(`"ping ${i}"`)) throw new Error(`waiter printed ${JSON.stringify(line)}`);
      await w.exited;
      if (i >= 5) out.push(t1 - t0); // the first few warm the page cache
    } finally {
      w.kill(); // a no-op once it exited; never leaves a waiter behind if this trial failed
    }
  }
  return out;
}

async function throughput(dir: string, senders: number, perSender: number) {
  const me = join(import.meta.dir, "messaging.ts");
  const spawnRole = (...a: string[]) => Bun.spawn({ cmd: ["bun", me, ...a], stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const rx = spawnRole("receiver", dir, String(senders * perSender));
  const rxOut = rx.stdout.getReader();
  const readLine = async (r: { read(): Promise<{ value?: Uint8Array; done: boolean }> }) => {
    let t = "";
    while (!t.includes("\n")) {
      const { value, done } = await r.read();
      if (done) break;
      t += new TextDecoder().decode(value);
    }
    return t.trim();
  };
  await readLine(rxOut);
  const tx = Array.from({ length: senders }, (_, k) => spawnRole("sender", dir, String(perSender), String(k)));
  const txOut = tx.map((p) => p.stdout.getReader());
  await Promise.all(txOut.map(readLine));
  const t0 = performance.now();
  for (const p of tx) p.stdin.write("go\n"), p.stdin.flush();
  const sendDone = Promise.all(txOut.map(readLine)).then(() => performance.now());
  const done = await readLine(rxOut);
  const t1 = performance.now();
  const ts = await sendDone;
  await Promise.all([rx.exited, ...tx.map((p) => p.exited)]);
  const total = senders * perSender;
  if (done !== `done ${total}`) throw new Error(`receiver said ${done}`);
  return { total, sendPerSec: total / ((ts - t0) / 1000), endToEndPerSec: total / ((t1 - t0) / 1000) };
}

const trials = arg("--trials", 300);
const messages = arg("--messages", 4000);
const work = mkdtempSync(join(tmpdir(), "a2a-bench-msg-"));
try {
  console.log(`# a2a messaging bench, ${new Date().toISOString()}`);
  console.log(`binary ${BIN}; ${cpus().length} CPUs; load average ${loadavg().map((x) => x.toFixed(2)).join(" ")}; Bun ${Bun.version}\n`);
  console.log("## send -> receive latency (ms), a waiting `a2a recv --wait` process\n");
  console.log("| path | n | p50 | p90 | p99 | max |\n|---|---|---|---|---|---|");
  console.log(row("floor: bare Bun fs.watch waiter, rename -> content on its stdout", await latency(join(work, "floor"), trials, "floor")));
  console.log(row("rename into new/ -> message on the waiter's stdout", await latency(join(work, "lat"), trials, "rename")));
  console.log(row("`a2a send` spawned -> message on the waiter's stdout", await latency(join(work, "cli"), trials, "cli")));
  console.log("\n## sustained throughput, one inbox, one receiver (recv --all in a loop)\n");
  console.log("| senders | messages | sends/s (all senders) | received+marked read/s (end to end) |\n|---|---|---|---|");
  for (const k of [1, 4]) {
    const r = await throughput(join(work, `tp${k}`), k, Math.floor(messages / k));
    console.log(`| ${k} | ${r.total} | ${r.sendPerSec.toFixed(0)} | ${r.endToEndPerSec.toFixed(0)} |`);
  }
  console.log(`\nload average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
