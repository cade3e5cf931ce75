// The reference binaries a2a is compared with (bench/fixtures/*.ts), compiled with a2a's own
// build flags, and the rule that keeps the comparison fair: every binary is timed from a copy
// written at the start of the run.
//
// Why the copy: start-up time depends on how the kernel holds an executable's pages, not only
// on its bytes. The same hello binary started 1.4 ms (30%) slower from its file of the day
// before than from a copy written a moment ago (perf: the page-fault handler walking many
// small page-cache folios, next_uptodate_folio, where a newly written file has large ones).
// A hello built yesterday against an a2a built just now flattered a2a by that much.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUILD_ARGS } from "../../tests/build";

const ROOT = join(import.meta.dir, "..", "..");
export const OUT = join(ROOT, "bench", "out");

// a2a's flags, for another entry point.
const FLAGS = BUILD_ARGS.filter((a) => a !== "cli/main.ts" && a !== "--outfile");

// bench/out/NAME built from bench/fixtures/NAME.ts, rebuilt when Bun, the fixture or the flags
// changed; throws with the compiler's output when the build fails.
export function buildReference(name: string): string {
  mkdirSync(OUT, { recursive: true });
  const bin = join(OUT, name);
  const src = join(ROOT, "bench", "fixtures", `${name}.ts`);
  const stamp = `${bin}.stamp`;
  const want = `${Bun.version} ${statSync(src).mtimeMs} ${FLAGS.join(" ")}`;
  if (existsSync(bin) && existsSync(stamp) && readFileSync(stamp, "utf8") === want) return bin;
  const r = Bun.spawnSync([process.execPath, ...FLAGS, src, "--outfile", bin], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building bench/out/${name} failed:\n${r.stdout}${r.stderr}`);
  writeFileSync(stamp, want);
  return bin;
}

const FRESH = join(OUT, "fresh");

// A copy of `src` as bench/out/fresh/NAME, written now (a new inode: none of the old file's
// cached pages carry over). Next to the builds rather than in the temp dir, which may be a
// tmpfs whose pages start a program differently; removeFreshCopies() deletes them at the end.
export function freshCopy(src: string, name: string): string {
  const dir = FRESH;
  mkdirSync(dir, { recursive: true });
  const dst = join(dir, name);
  rmSync(dst, { force: true });
  copyFileSync(src, dst);
  chmodSync(dst, 0o755);
  return dst;
}

export function removeFreshCopies(): void {
  rmSync(FRESH, { recursive: true, force: true });
}
