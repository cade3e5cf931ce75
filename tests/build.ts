// The one place that knows how the binary is built for tests, the torture run and the bench
// (package.json's `build` script uses the same flags), and the rule they all follow: never
// run a binary older than the code it claims to be.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

// No autoloading of .env or bunfig.toml from the working directory: see the test in tests/e2e/cli.test.ts.
export const BUILD_ARGS = ["build", "--compile", "--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig", "--bytecode", "--minify", "--splitting", "--format", "esm", "cli/main.ts", "--outfile"];

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (/\.(ts|json|html|css|js)$/.test(e.name)) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

// Builds `bin` when it is missing or older than cli/, lib/ or package.json; throws on failure.
export function ensureBinary(bin: string, onBuild: (msg: string) => void = () => {}): void {
  const sources = Math.max(newestSource(join(ROOT, "cli")), newestSource(join(ROOT, "lib")), statSync(join(ROOT, "package.json")).mtimeMs);
  if (existsSync(bin) && statSync(bin).mtimeMs >= sources) return;
  onBuild(`building ${bin} (missing or older than the sources)`);
  const r = Bun.spawnSync([process.execPath, ...BUILD_ARGS, bin], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`building ${bin} failed:\n${r.stderr.toString()}`);
}
