// Runs once before the suite: every test drives the compiled binary, so make sure dist/a2a
// exists and is newer than every source file (a stale binary would test old code).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
// A2A_BIN lets parallel work build and test separate binaries without overwriting each other.
const bin = process.env.A2A_BIN || join(root, "dist", "a2a");

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.(ts|json)$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const sources = Math.max(newestSource(join(root, "cli")), newestSource(join(root, "lib")), statSync(join(root, "package.json")).mtimeMs);
if (!existsSync(bin) || statSync(bin).mtimeMs < sources) {
  const r = Bun.spawnSync(["bun", "build", "--compile", "--bytecode", "--minify", "--splitting", "--format", "esm", "cli/main.ts", "--outfile", bin], { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error("tests/preload.ts: building the binary failed:\n" + r.stderr.toString());
}
