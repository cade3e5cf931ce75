// `bun bench/blobs.ts [--n N] [--mib M]`: a2a put and a2a get of an M MiB file (default 300)
// against a floor doing the same work with coreutils, in the same run, on a directory store
// and, where a server can be had (tests/harness/pg.ts), on PostgreSQL.
//
//   floor  sh -c 'sha256sum F && cp F D && sync D': hash, copy, make durable (what a put does)
//   put    a2a put F of bytes the store does not hold yet (the file's first 8 bytes are changed
//          before each run), spawn -> exit: wall time and the process's peak RSS (issue 25: a 300
//          MiB put under 120 MiB)
//   again  a2a put F of the bytes just put: the same upload, then a compare with the blob kept
//          and its own parts dropped (two uploads of one digest keep one copy)
//   get    a2a get sha256:HEX -o D: stream out, check the digest, rename into place
// Nothing asserts on time. Run it alone: the machine's other work moves every figure.

import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { BIN, childEnv } from "../tests/harness/run";
import { freshDatabase, pgServer, pgSkipReason } from "../tests/harness/pg";
import { ensureBinary } from "../tests/build";
import { mono } from "./lib/clock";
import { summarize } from "./lib/stats";

const { values: opt } = parseArgs({ args: Bun.argv.slice(2), options: { n: { type: "string" }, mib: { type: "string" } } });
const N = Number(opt.n ?? 5);
const MIB = Number(opt.mib ?? 300);
ensureBinary(BIN);
if (!existsSync("/usr/bin/time")) {
  console.log("blobs: skipped: /usr/bin/time (GNU time) is missing: apt-get install time");
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "a2a-bench-blobs-"));
const file = join(dir, "data.bin");
{
  const piece = new Uint8Array(1024 * 1024);
  const parts: Uint8Array[] = [];
  for (let i = 0; i < MIB; i++) parts.push(crypto.getRandomValues(piece).slice());
  writeFileSync(file, Buffer.concat(parts));
}
// Makes the file bytes no store holds yet: run i's number in its first 8 bytes.
const renew = (i: number) => {
  const fd = openSync(file, "r+");
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(Date.now()) * 1000n + BigInt(i));
  writeSync(fd, head, 0, 8, 0);
  closeSync(fd);
};

// One spawn: wall ms, and the peak RSS in MiB as GNU time reports it (%M, KiB) for that one
// process (Bun's resourceUsage() of a child gives the largest of all children so far).
const TIME = "/usr/bin/time";
async function run(cmd: string[], env: Record<string, string>): Promise<{ ms: number; rssMiB: number; out: string }> {
  const t0 = mono();
  const p = Bun.spawn({ cmd: [TIME, "-f", "%M", ...cmd], env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const out = new Response(p.stdout).text();
  const code = await p.exited;
  const ms = mono() - t0;
  const err = (await new Response(p.stderr).text()).trim();
  if (code !== 0) throw new Error(`${cmd.slice(0, 3).join(" ")} exited ${code}: ${err}`);
  return { ms, rssMiB: Number(err.split("\n").pop()) / 1024, out: (await out).trim() };
}

const rows: string[][] = [["store", "what", "n", "p50 ms", "p90 ms", "MiB/s at p50", "x floor", "peak RSS MiB (max)"]];
async function engine(name: string, store: string) {
  const env = childEnv({ dir: store });
  const out = join(dir, "out.bin");
  const series: Record<string, { ms: number[]; rss: number[] }> = { floor: { ms: [], rss: [] }, put: { ms: [], rss: [] }, again: { ms: [], rss: [] }, get: { ms: [], rss: [] } };
  for (let i = 0; i < N; i++) {
    renew(i);
    let digest = "";
    // Interleaved, so drift in the machine's load falls on all four alike.
    for (const [k, cmd] of [
      ["floor", () => ["sh", "-c", `sha256sum "${file}" >/dev/null && cp "${file}" "${out}" && sync "${out}"`]],
      ["put", () => [BIN, "put", file]],
      ["again", () => [BIN, "put", file]],
      ["get", () => [BIN, "get", digest, "-o", out]],
    ] as const) {
      if (k === "get") rmSync(out, { force: true });
      const r = await run([...cmd()], env);
      if (k === "put") digest = r.out.split(/\s/)[0];
      if (k === "put" && !digest.startsWith("sha256:")) throw new Error(`a2a put printed ${JSON.stringify(r.out)}, not a digest`);
      series[k].ms.push(r.ms);
      series[k].rss.push(r.rssMiB);
    }
    rmSync(out, { force: true });
  }
  const floor = summarize(series.floor.ms).p50;
  const label = { floor: "floor: sha256sum + cp + sync", put: `a2a put (${MIB} MiB, new bytes)`, again: `a2a put again (the same ${MIB} MiB)`, get: `a2a get (${MIB} MiB)` };
  for (const k of ["floor", "put", "again", "get"] as const) {
    const s = summarize(series[k].ms);
    rows.push([name, label[k], String(N), s.p50.toFixed(0), s.p90.toFixed(0), (MIB / (s.p50 / 1000)).toFixed(0), k === "floor" ? "" : (s.p50 / floor).toFixed(2), Math.max(...series[k].rss).toFixed(0)]);
  }
}

await engine("directory", join(dir, "store"));
const skip = pgSkipReason();
if (skip) console.log(`pg: skipped: ${skip}`);
else {
  const db = await freshDatabase((await pgServer())!);
  await engine("postgres", `${db.url}?schema=bench`);
}
rmSync(dir, { recursive: true, force: true });
const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
console.log(`a2a blobs bench: ${MIB} MiB, n=${N}, ${new Date().toISOString()}`);
for (const r of rows) console.log(r.map((v, c) => v.padEnd(widths[c])).join("  "));
process.exit(0);
