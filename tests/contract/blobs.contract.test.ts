// The contract of blobs (docs/PROTOCOL.md §19, "Blobs"), on every engine, through the Bus only:
// bytes stored under their own SHA-256, given back byte for byte and checked, one copy of equal
// bytes, nothing visible of a put that failed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Bus } from "../../lib/bus";
import { codeOf, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

const sha = (b: Uint8Array) => `sha256:${new Bun.CryptoHasher("sha256").update(b).digest("hex")}`;

// `bytes` handed over in pieces of `step` bytes (a pipe's 64 KiB, a file's sizes, odd ones).
async function* piecesOf(bytes: Uint8Array, step: number): AsyncIterable<Uint8Array> {
  for (let off = 0; off < bytes.length; off += step) yield bytes.slice(off, off + step);
}

async function got(bus: Bus, digest: string): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  await bus.blobs.get(digest, (b) => {
    parts.push(Uint8Array.from(b)); // a copy: an engine may reuse its buffer
  });
  return Buffer.concat(parts);
}

function randomBytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let off = 0; off < n; off += 65536) crypto.getRandomValues(b.subarray(off, Math.min(n, off + 65536)));
  return b;
}

for (const engine of enginesFor("blobs")) {
  describe(`${engine.name}: blobs`, () => {
    const t = perTest(engine);

    test("a put is named by the SHA-256 of its bytes and given back byte for byte, across chunk boundaries and whatever the pieces", async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 12345);
      const r = await t.bus.blobs.put(piecesOf(bytes, 65536 + 7));
      expect(r).toEqual({ digest: sha(bytes), size: bytes.length, fresh: true });
      const back = await got(t.reopen(), r.digest);
      expect(back.length).toBe(bytes.length);
      expect(Buffer.compare(back, bytes)).toBe(0);
      expect(await t.reopen().blobs.stat(r.digest.toUpperCase().replace("SHA256", "sha256"))).toMatchObject({ digest: r.digest, size: bytes.length });
    });

    test("an empty put and a one-byte put are blobs too", async () => {
      for (const bytes of [new Uint8Array(0), new Uint8Array([0])]) {
        const r = await t.bus.blobs.put(piecesOf(bytes, 1));
        expect(r.digest).toBe(sha(bytes));
        expect(Buffer.compare(await got(t.bus, r.digest), bytes)).toBe(0);
      }
    });

    test("equal bytes are stored once: a second put, from another process, is not fresh and names the same blob", async () => {
      const bytes = randomBytes(1024 * 1024 + 1);
      const [a, b] = await Promise.all([t.bus.blobs.put(piecesOf(bytes, 4096)), t.reopen().blobs.put(piecesOf(bytes, 1 << 20))]);
      expect(a.digest).toBe(b.digest);
      expect([a.fresh, b.fresh].sort()).toEqual([false, true]);
      const c = await t.reopen().blobs.put(piecesOf(bytes, 999));
      expect(c).toEqual({ digest: a.digest, size: bytes.length, fresh: false });
      expect(Buffer.compare(await got(t.bus, a.digest), bytes)).toBe(0);
    });

    test("a put whose source fails midway fails, and leaves no blob", async () => {
      const bytes = randomBytes(2 * 1024 * 1024);
      async function* broken(): AsyncIterable<Uint8Array> {
        yield bytes.subarray(0, 1024 * 1024 + 5);
        throw new Error("the pipe broke");
      }
      await expect(t.bus.blobs.put(broken())).rejects.toThrow("the pipe broke");
      const prefix = bytes.subarray(0, 1024 * 1024 + 5);
      for (const d of [sha(prefix), sha(bytes)]) expect(codeOf(await refusal(t.reopen().blobs.stat(d)))).toEqual({ code: "ENOTFOUND", exit: 3 });
    });

    test("a digest the store does not hold is ENOTFOUND (exit 3) and hands out nothing; one that is no digest is EUSAGE", async () => {
      const handed: Uint8Array[] = [];
      const e = await refusal(t.bus.blobs.get(`sha256:${"ab".repeat(32)}`, (b) => void handed.push(b)));
      expect(codeOf(e)).toEqual({ code: "ENOTFOUND", exit: 3 });
      expect(e.message).toContain(`sha256:${"ab".repeat(32)}`);
      expect(handed).toEqual([]);
      for (const bad of ["sha256:abc", "md5:" + "a".repeat(32), "a".repeat(64), `sha256:${"g".repeat(64)}`]) {
        expect(codeOf(await refusal(t.bus.blobs.stat(bad)))).toEqual({ code: "EUSAGE", exit: 2 });
      }
    });
  });
}
