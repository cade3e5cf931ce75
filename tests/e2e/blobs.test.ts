// a2a put and a2a get through the binary, on the store under test (files or PostgreSQL): the
// digest is the file's own, the bytes come back exact from stdin, files and pipes, bad input is
// one line with the store untouched, a damaged blob is caught on get, and a killed put leaves no
// blob. Memory on a 300 MiB put is measured in bench/ (the blob rows).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { a2a, BIN, childEnv, isDatabaseStore, ON_FILES, storeSql, tempDir, testStore, until } from "../harness/run";
import { expectCleanError, sh, snapshot } from "./fixtures/core";

setDefaultTimeout(120_000);

const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

function randomFile(path: string, size: number): Uint8Array {
  const b = new Uint8Array(size);
  for (let off = 0; off < size; off += 65536) crypto.getRandomValues(b.subarray(off, Math.min(size, off + 65536)));
  writeFileSync(path, b);
  return b;
}

describe("a2a put and a2a get", () => {
  test("put FILE prints sha256: and the file's own SHA-256; get writes it back exact to stdout, to -o FILE and through pipes", async () => {
    using d = tempDir();
    using store = testStore();
    const bytes = randomFile(join(d.path, "build.log"), 2 * 1024 * 1024 + 333);
    const put = await a2a(["put", join(d.path, "build.log")], { dir: store.path });
    expect({ code: put.code, stdout: put.stdout, stderr: put.stderr }).toEqual({ code: 0, stdout: `sha256:${sha(bytes)}\n`, stderr: "" });
    const digest = put.stdout.trim();
    // stdin, through a pipe: the same blob, not fresh
    const again = await sh(`cat "${join(d.path, "build.log")}" | "$A2A" put - --json`, store.path);
    expect(JSON.parse(again.stdout)).toEqual({ digest, size: bytes.length, fresh: false });
    const out = join(d.path, "out");
    expect((await sh(`"$A2A" get ${digest} > "${out}.1" && "$A2A" get ${digest} | cat > "${out}.2"`, store.path)).code).toBe(0);
    const got = await a2a(["get", digest, "-o", `${out}.3`], { dir: store.path });
    expect(got.stdout).toBe(`wrote ${digest} to ${out}.3 (${bytes.length} bytes)\n`);
    for (const f of [".1", ".2", ".3"]) expect(sha(readFileSync(out + f))).toBe(sha(bytes));
    const json = await a2a(["get", digest, "-o", `${out}.4`, "--json"], { dir: store.path });
    expect(JSON.parse(json.stdout)).toEqual({ digest, size: bytes.length, file: `${out}.4` });
    // an empty file is a blob too
    writeFileSync(join(d.path, "empty"), "");
    expect((await a2a(["put", join(d.path, "empty")], { dir: store.path })).stdout).toBe(`sha256:${sha(new Uint8Array(0))}\n`);
  });

  test("bad input: one line, a documented exit code, the store untouched and no -o file made", async () => {
    using d = tempDir();
    using store = testStore();
    writeFileSync(join(d.path, "f"), "hello\n");
    const digest = (await a2a(["put", join(d.path, "f")], { dir: store.path })).stdout.trim();
    const before = snapshot(store.path);
    const cases: [string[], number, RegExp][] = [
      [["put", join(d.path, "missing")], 2, /there is no file .*missing: give the path of a file to store, or - for stdin/],
      [["put", d.path], 2, /is not a regular file: give a file \(a directory: tar c DIR \| a2a put -\)/],
      [["get", "sha256:abc", "-o", join(d.path, "o1")], 2, /"sha256:abc" is not a blob digest: a blob is named sha256: and 64 hex digits/],
      [["get", `sha256:${"0".repeat(64)}`, "-o", join(d.path, "o2")], 3, /there is no blob sha256:0{64} in this store: check the digest, or store the file there first \(a2a put FILE\)/],
      [["get", digest, "-o", join(d.path, "no-such-dir", "o3")], 1, /writing .*o3 failed \(ENOENT\): give -o a file in a directory that exists/],
    ];
    for (const [args, code, re] of cases) {
      const r = await a2a(args, { dir: store.path });
      expectCleanError(r, code, re);
      expect({ args, same: JSON.stringify(snapshot(store.path)) === JSON.stringify(before) }).toEqual({ args, same: true });
    }
    expect(readdirSync(d.path).sort()).toEqual(["f"]);
  });

  test("a damaged blob is caught on get: exit 1 naming the digest, and -o leaves the file that was there", async () => {
    using d = tempDir();
    using store = testStore();
    const bytes = randomFile(join(d.path, "data"), 1024 * 1024 + 10);
    const digest = (await a2a(["put", join(d.path, "data")], { dir: store.path })).stdout.trim();
    const hex = digest.slice("sha256:".length);
    if (isDatabaseStore(store.path)) {
      storeSql(store.path, `update blob_parts set data = overlay(data placing '\\x00'::bytea from 100) where n = 0 and upload = (select upload from blobs where hex = '${hex}')`);
    } else {
      const file = join(store.path, "blobs", "sha256", hex);
      chmodSync(file, 0o600);
      const fd = openSync(file, "r+");
      writeSync(fd, Buffer.from([bytes[99] ^ 0xff]), 0, 1, 99);
      closeSync(fd);
    }
    writeFileSync(join(d.path, "keep"), "what was there\n");
    const r = await a2a(["get", digest, "-o", join(d.path, "keep")], { dir: store.path });
    expectCleanError(r, 1, new RegExp(`blob ${digest} is damaged in the store .*: what was handed out is not the blob`));
    expect(readFileSync(join(d.path, "keep"), "utf8")).toBe("what was there\n");
    expect(readdirSync(d.path).sort()).toEqual(["data", "keep"]);
    // to stdout the bytes are out already: the exit status says they are wrong
    const piped = await sh(`"$A2A" get ${digest} > /dev/null`, store.path);
    expectCleanError(piped, 1, /is damaged in the store/);
    if (!isDatabaseStore(store.path)) {
      truncateSync(join(store.path, "blobs", "sha256", hex), 1000);
      expectCleanError(await a2a(["get", digest], { dir: store.path }), 1, /is damaged in the store \(1000 bytes read of 1000,/);
    }
  });

  test("a put killed midway leaves no blob: get says there is none, and nothing is listed", async () => {
    using store = testStore();
    const p = Bun.spawn({ cmd: [BIN, "put", "-"], env: childEnv({ dir: store.path }), stdin: "pipe", stdout: "pipe", stderr: "pipe" });
    const chunk = new Uint8Array(1024 * 1024).fill(7);
    for (let i = 0; i < 6; i++) p.stdin!.write(chunk); // more than PostgreSQL's group of parts (4 MiB)
    await p.stdin!.flush();
    // Midway: its first bytes are in the store's staging.
    const staged = () =>
      isDatabaseStore(store.path)
        ? (() => { try { return storeSql(store.path, "select count(*) from blob_parts").trim() !== "0"; } catch { return false; } })()
        : existsSync(join(store.path, "tmp")) && readdirSync(join(store.path, "tmp")).some((f) => statSync(join(store.path, "tmp", f)).size > 0);
    await until(staged, 30_000, "the put's first bytes staged");
    p.kill(9);
    await p.exited;
    const six = new Uint8Array(6 * 1024 * 1024).fill(7);
    expectCleanError(await a2a(["get", `sha256:${sha(six)}`], { dir: store.path }), 3, /there is no blob/);
    if (isDatabaseStore(store.path)) expect(storeSql(store.path, "select count(*) from blobs").trim()).toBe("0");
    else expect(existsSync(join(store.path, "blobs", "sha256")) ? readdirSync(join(store.path, "blobs", "sha256")) : []).toEqual([]);
  });
});

describe.if(ON_FILES)("a2a put on a full disk", () => {
  test("fails with one line, and the store is as it was: no blob, no temp file", async () => {
    using d = tempDir();
    const mnt = join(d.path, "mnt");
    mkdirSync(mnt);
    const m = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], { stderr: "pipe" });
    if (m.exitCode !== 0) return console.warn(`skipped: mount -t tmpfs failed (${m.stderr.toString().trim()}): needs root`);
    try {
      const store = join(mnt, "store");
      writeFileSync(join(d.path, "small"), "small\n");
      expect((await a2a(["put", join(d.path, "small")], { dir: store })).code).toBe(0);
      randomFile(join(d.path, "big"), 3 * 1024 * 1024);
      const before = snapshot(store);
      const r = await a2a(["put", join(d.path, "big")], { dir: store });
      expectCleanError(r, 1, /the disk is full; free space, then retry \(nothing was changed\)/);
      expect(JSON.stringify(snapshot(store)) === JSON.stringify(before)).toBe(true);
    } finally {
      if (Bun.spawnSync(["umount", mnt]).exitCode !== 0) Bun.spawnSync(["umount", "-l", mnt]);
      rmSync(mnt, { recursive: true, force: true });
    }
  });
});
