// Runs once before the suite. (1) The test suite's own tools (Claude Code, playwright-core,
// the types) are devDependencies, which ./install.sh leaves out of a user's install: the
// first `bun test` installs them, so the README's two commands work on a fresh machine.
// (2) The end-to-end tests drive the compiled binary, so make sure it exists and is newer than
// every source file (a stale binary would test old code). A2A_BIN lets parallel work build and
// test separate binaries without overwriting each other. (3) Once after the last file: nothing
// was written outside the tests' own temp dirs (tests/harness/outside.ts says what is watched).
import { afterAll } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "./build";
import { absent, appeared, refilled, watchedPaths } from "./harness/outside";
import { BIN, ROOT } from "./harness/run";

const dev = Object.keys(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies ?? {});
const missing = dev.filter((name) => !existsSync(join(ROOT, "node_modules", name, "package.json")));
if (missing.length > 0) {
  process.stderr.write(`tests: installing what the tests need (${missing.join(", ")}): bun install --frozen-lockfile\n`);
  const r = Bun.spawnSync([process.execPath, "install", "--frozen-lockfile"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error("bun install failed (its output is above): check your network, then run bun test again");
}

ensureBinary(BIN);

const wereAbsent = absent(watchedPaths());
afterAll(() => {
  const back = refilled();
  for (const p of back) rmSync(p.path, { recursive: true, force: true });
  const found = [...appeared(wereAbsent).map((p) => `${p} was made`), ...back.map((p) => `${p.note}, removed by its test, was written again (removed now)`)];
  if (found.length) throw new Error(`tests wrote outside their temp dirs (or you started chromium or opencode meanwhile): ${found.join("; ")}`);
});
