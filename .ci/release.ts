// `bun run release`: the release binaries, cross-built from this checkout with the same flags
// as every other build (tests/build.ts), one per platform a2a's users run, each with a
// `sha256sum -c`-compatible checksum file beside it:
//
//   dist/a2a-linux-x64     dist/a2a-linux-arm64     dist/a2a-darwin-x64     dist/a2a-darwin-arm64
//
// Bun fetches each target's runtime from the npm registry the first time (then from its cache).
// Only linux-x64 is run by CI natively, linux-arm64 under qemu-user (tests/e2e/release.test.ts);
// the macOS binaries are built and checked to be Mach-O for their CPU, not run (README,
// "Platforms"). Usage: bun run release [--out DIR] [TARGET...]
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { BUILD_ARGS } from "../tests/build";

export const TARGETS = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"] as const;
const ROOT = join(import.meta.dir, "..");

function parse(argv: string[]): { out: string; targets: string[] } {
  let out = join(ROOT, "dist");
  const targets: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") out = resolve(argv[++i] ?? "");
    else if ((TARGETS as readonly string[]).includes(argv[i])) targets.push(argv[i]);
    else {
      console.error(`release: unknown argument '${argv[i]}': give --out DIR and/or targets among ${TARGETS.join(", ")}`);
      process.exit(2);
    }
  }
  return { out, targets: targets.length ? targets : [...TARGETS] };
}

const { out, targets } = parse(process.argv.slice(2));
mkdirSync(out, { recursive: true });
for (const target of targets) {
  const bin = join(out, `a2a-${target}`);
  const args = [...BUILD_ARGS.slice(0, -1), `--target=bun-${target}`, "--outfile", bin];
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    process.stderr.write(r.stderr);
    console.error(`release: building ${basename(bin)} failed (its output is above)`);
    process.exit(1);
  }
  const sum = createHash("sha256").update(readFileSync(bin)).digest("hex");
  writeFileSync(`${bin}.sha256`, `${sum}  ${basename(bin)}\n`);
  console.log(`release: ${bin} (sha256 ${sum})`);
}
