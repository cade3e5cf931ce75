// `bun run release` cross-builds the four release binaries with checksums (.ci/release.ts).
// Each is checked to be an executable for its platform (ELF or Mach-O header, CPU type); the
// linux-x64 one runs here, and the linux-arm64 one runs under qemu-user with Debian's arm64
// libc when they are installed (.ci/run installs them): a publish from it wakes a wait of the
// x64 binary through the same store, and the other way round.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, collect, hasWatch, ON_FILES, readUntil, ROOT, spawnA2A, tempDir, until } from "../harness/run";

setDefaultTimeout(600_000);

const QEMU = "/usr/bin/qemu-aarch64-static";
const ARM64_LIBC = "/usr/aarch64-linux-gnu";
const canRunArm64 = existsSync(QEMU) && existsSync(join(ARM64_LIBC, "lib", "ld-linux-aarch64.so.1"));

// The header fields that say which OS and CPU a binary is for.
function platformOf(bin: string): string {
  const b = readFileSync(bin).subarray(0, 64);
  if (b.readUInt32BE(0) === 0x7f454c46) return `elf-${({ 0x3e: "x64", 0xb7: "arm64" } as Record<number, string>)[b.readUInt16LE(18)] ?? "?"}`;
  if (b.readUInt32LE(0) === 0xfeedfacf) return `macho-${({ 0x01000007: "x64", 0x0100000c: "arm64" } as Record<number, string>)[b.readUInt32LE(4)] ?? "?"}`;
  return "unknown";
}

// The release build, not an engine: it runs once, in the file engine's pass.
describe.if(ON_FILES)("bun run release", () => {
  // Removed after the tests, not when this block returns (before they run): `using` here left
  // the 412 MB build in the temp dir.
  const out = tempDir("a2a-release-");
  afterAll(() => out[Symbol.dispose]());
  let built: Promise<{ stdout: string; stderr: string; code: number }> | undefined;
  const release = () =>
    (built ??= collect(Bun.spawn({ cmd: [process.execPath, "run", "--silent", "release", "--out", out.path], cwd: ROOT, stdin: "ignore", stdout: "pipe", stderr: "pipe" })));

  test("four binaries, each for its platform, each with a checksum sha256sum accepts", async () => {
    const r = await release();
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const expected: Record<string, string> = { "linux-x64": "elf-x64", "linux-arm64": "elf-arm64", "darwin-x64": "macho-x64", "darwin-arm64": "macho-arm64" };
    for (const [target, platform] of Object.entries(expected)) {
      const bin = join(out.path, `a2a-${target}`);
      expect(r.stdout).toContain(`release: ${bin} (sha256 `);
      expect(platformOf(bin)).toBe(platform);
      const check = Bun.spawnSync(["sha256sum", "-c", `a2a-${target}.sha256`], { cwd: out.path });
      expect(check.stdout.toString()).toBe(`a2a-${target}: OK\n`);
    }
    const x64 = join(out.path, "a2a-linux-x64");
    expect((await a2a(["--version"], { bin: x64 })).stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
  });

  test.skipIf(!canRunArm64)("linux-arm64 under qemu-user: its publish wakes an x64 wait, and an x64 publish wakes its wait", async () => {
    expect((await release()).code).toBe(0);
    using d = tempDir();
    const arm = { prefix: [QEMU, "-L", ARM64_LIBC], bin: join(out.path, "a2a-linux-arm64"), dir: d.path };
    expect(await a2a(["--version"], arm)).toMatchObject({ code: 0, stderr: "" });
    const x64Wait = Bun.spawn({ cmd: [join(out.path, "a2a-linux-x64"), "wait", "from-arm", "--timeout", "120s"], env: { ...process.env, A2A_DIR: d.path }, stdout: "pipe", stderr: "pipe" });
    expect(await a2a(["publish", "from-arm", "hello from arm64"], arm)).toMatchObject({ code: 0, stdout: "published from-arm (version 1, 16B)\n" });
    expect(await collect(x64Wait)).toEqual({ stdout: "hello from arm64", stderr: "", code: 0 });
    // The other way: the arm64 binary blocks in its own (emulated) inotify wait until x64 publishes.
    const armWait = spawnA2A(["wait", "from-x64", "--timeout", "120s", "--json"], arm);
    const seen = readUntil(armWait.stdout, (t) => t.endsWith("\n"), 120_000);
    await until(() => hasWatch(armWait.pid), 120_000, "the arm64 wait to hold its inotify watch");
    expect((await a2a(["publish", "from-x64", "hi arm"], { dir: d.path, bin: join(out.path, "a2a-linux-x64") })).code).toBe(0);
    expect(JSON.parse(await seen)).toMatchObject({ name: "from-x64", result: "hi arm" });
    expect(await armWait.exited).toBe(0);
  });
});
