// The contract of blobs (docs/PROTOCOL.md §19, "Blobs"), on every engine, through the Bus only:
// bytes stored under their own SHA-256, given back byte for byte and checked, one copy of equal
// bytes, nothing visible of a put that failed.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { psqlAs } from "../harness/pg";
import type { Bus } from "../../lib/bus";
import { codeOf, move, perTest, refusal } from "./support";
import { enginesFor } from "./engines";

setDefaultTimeout(60_000);

const FLOOR = 10 * 60_000; // gc's floor on the blob grace period (docs/PROTOCOL.md §19)

// Flips the first byte of blob `digest` where the engine keeps it (the one step here past the
// Bus: damage is what no operation of it makes).
async function damage(engine: string, bus: Bus, digest: string): Promise<void> {
  const hex = digest.slice("sha256:".length);
  if (engine === "file") {
    const path = join(bus.where, "blobs", "sha256", hex);
    const bytes = readFileSync(path);
    bytes[0] ^= 1;
    chmodSync(path, 0o600);
    writeFileSync(path, bytes);
    chmodSync(path, 0o400);
  } else {
    const url = new URL(bus.where);
    const schema = url.searchParams.get("schema") ?? "a2a";
    url.searchParams.delete("schema");
    await psqlAs(url.href, `update ${schema}.blob_parts set data = set_byte(data, 0, get_byte(data, 0) # 1) where n = 0 and upload = (select upload from ${schema}.blobs where hex = '${hex}')`);
  }
}
// Stores `bytes` (not the digest's) under `digest` where the engine keeps it, as a member with
// write access to the store could: a file, or a row and its part.
async function plant(engine: string, bus: Bus, digest: string, bytes: Uint8Array): Promise<void> {
  const hex = digest.slice("sha256:".length);
  await bus.blobs.put(piecesOf(new TextEncoder().encode("a first blob makes where they go"), 64));
  if (engine === "file") {
    writeFileSync(join(bus.where, "blobs", "sha256", hex), bytes, { mode: 0o400 });
  } else {
    const url = new URL(bus.where);
    const schema = url.searchParams.get("schema") ?? "a2a";
    url.searchParams.delete("schema");
    await psqlAs(url.href, `insert into ${schema}.blob_parts (upload, n, data) values ('planted', 0, '\\x${Buffer.from(bytes).toString("hex")}');
      insert into ${schema}.blobs (hex, upload, size) values ('${hex}', 'planted', ${bytes.length})`);
  }
}
// Sets blob `digest`'s time (gc counts its grace period from it) two hours back.
async function age(engine: string, bus: Bus, digest: string): Promise<void> {
  const hex = digest.slice("sha256:".length);
  if (engine === "file") {
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(join(bus.where, "blobs", "sha256", hex), old, old);
  } else {
    const url = new URL(bus.where);
    const schema = url.searchParams.get("schema") ?? "a2a";
    url.searchParams.delete("schema");
    await psqlAs(url.href, `update ${schema}.blobs set stored_at = now() - interval '2 hours' where hex = '${hex}'`);
  }
}
const later = () => Date.now() + 2 * 3600_000; // the time gc counts blob ages to: two hours on

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

    test("attachments: a message, a published result and a finished task name blobs, with the store's size and a media type; one that is not stored is refused and nothing is written", async () => {
      const log = await t.bus.blobs.put(piecesOf(new TextEncoder().encode("line 1\nline 2\n"), 3));
      const png = await t.bus.blobs.put(piecesOf(randomBytes(70_000), 4096));
      const sent = await t.bus.mail.send("alice", "bob", "the run", { attach: [{ digest: log.digest, name: "test.log" }, { digest: png.digest, name: "shot.png" }] });
      const want = [
        { digest: log.digest, name: "test.log", size: 14, type: "text/plain" },
        { digest: png.digest, name: "shot.png", size: 70_000, type: "image/png" },
      ];
      expect(sent.attachments).toEqual(want);
      const listed = await t.reopen().mail.list("bob", 10);
      expect(listed.unread.map((m: { attachments?: unknown }) => m.attachments)).toEqual([want]);
      const o = await t.reopen().mail.receive("bob", { max: 1 }, () => {});
      expect(o.value.map((m) => m.attachments)).toEqual([want]);
      const rec = await t.bus.slots.publish("build", "ok", { attach: [{ digest: log.digest, name: "build.log" }] });
      expect((await t.reopen().slots.get("build"))!.attachments).toEqual([{ digest: log.digest, name: "build.log", size: 14, type: "text/plain" }]);
      expect(rec.attachments).toHaveLength(1);
      const id = (await t.bus.tasks.add("q", "work")).id;
      const c = (await t.bus.tasks.claim("q", {})).value!;
      await t.bus.tasks.complete(id, c.token, "done", [{ digest: png.digest, name: "out.png" }]);
      expect((await t.reopen().tasks.show(id)).attachments).toEqual([{ digest: png.digest, name: "out.png", size: 70_000, type: "image/png" }]);
      // Refused, nothing written: a blob the store does not hold, a name that is a path.
      const missing = `sha256:${"cd".repeat(32)}`;
      expect(codeOf(await refusal(t.bus.mail.send("alice", "bob", "x", { attach: [{ digest: missing, name: "a" }] })))).toEqual({ code: "ENOTFOUND", exit: 3 });
      expect(codeOf(await refusal(t.bus.slots.publish("build", "y", { attach: [{ digest: log.digest, name: "../etc/passwd" }] })))).toEqual({ code: "EUSAGE", exit: 2 });
      expect((await t.bus.mail.list("bob", 10)).counts.unread).toBe(0);
      expect((await t.bus.slots.get("build"))!.result).toBe("ok");
    });

    test("gc removes a blob only when no message (read or unread), published result or finished task names it and it is older than the grace period", async () => {
      const blob = async (text: string) => (await t.bus.blobs.put(piecesOf(new TextEncoder().encode(text), 7))).digest;
      const [inMail, inRead, inSlot, inTask, loose] = await Promise.all(["mail", "read mail", "slot", "task", "nothing names me"].map(blob));
      await t.bus.mail.send("alice", "bob", "one", { attach: [{ digest: inMail, name: "a.txt" }] });
      await t.bus.mail.send("alice", "carol", "two", { attach: [{ digest: inRead, name: "b.txt" }] });
      await t.bus.mail.receive("carol", { max: 1 }, () => {});
      await t.bus.slots.publish("s", "r", { attach: [{ digest: inSlot, name: "c.txt" }] });
      const id = (await t.bus.tasks.add("q", "w")).id;
      await t.bus.tasks.complete(id, (await t.bus.tasks.claim("q", {})).value!.token, "", [{ digest: inTask, name: "d.txt" }]);
      expect((await t.reopen().admin.gc()).blobs_removed).toBe(0); // all younger than an hour
      expect((await t.reopen().admin.gc(undefined, FLOOR, later())).blobs_removed).toBe(1);
      for (const d of [inMail, inRead, inSlot, inTask]) expect((await got(t.bus, d)).length).toBeGreaterThan(0);
      expect(codeOf(await refusal(t.bus.blobs.stat(loose)))).toEqual({ code: "ENOTFOUND", exit: 3 });
      // A slot published again without it lets its blob go.
      await t.bus.slots.publish("s", "r2");
      expect((await t.reopen().admin.gc(undefined, FLOOR, later())).blobs_removed).toBe(1);
      expect(codeOf(await refusal(t.bus.blobs.stat(inSlot)))).toEqual({ code: "ENOTFOUND", exit: 3 });
    });

    test("gc refuses a blob grace period under the floor (a send's files could go between its put and its record), before removing anything", async () => {
      const loose = (await t.bus.blobs.put(piecesOf(new TextEncoder().encode("loose"), 2))).digest;
      for (const grace of [0, FLOOR - 1]) {
        const e = await refusal(t.reopen().admin.gc(undefined, grace, later()));
        expect(codeOf(e)).toEqual({ code: "EUSAGE", exit: 2 });
        expect(e.data).toMatchObject({ grace_ms: grace, floor_ms: FLOOR });
      }
      expect((await t.bus.blobs.stat(loose)).digest).toBe(loose);
      expect((await t.reopen().admin.gc(undefined, FLOOR)).blobs_removed).toBe(0); // just put
      expect((await t.reopen().admin.gc(undefined, FLOOR, later())).blobs_removed).toBe(1);
    });

    test("a blob is checked whole before a record names it: one damaged in the store is refused, and nothing is sent", async () => {
      const bytes = new TextEncoder().encode("the real bytes\n");
      const put = await t.bus.blobs.put(piecesOf(bytes, 4));
      const other = t.reopen(); // a process that did not put it reads it before naming it
      expect((await other.mail.send("alice", "bob", "fine", { attach: [{ digest: put.digest, name: "a.txt" }] })).attachments).toHaveLength(1);
      await damage(engine.name, t.bus, put.digest);
      const e = await refusal(t.reopen().mail.send("alice", "bob", "damaged", { attach: [{ digest: put.digest, name: "a.txt" }] }));
      expect(codeOf(e)).toEqual({ code: "EIO", exit: 1 });
      expect(e.message).toContain(`blob ${put.digest} is damaged in the store`);
      expect((await t.bus.mail.list("bob", 10)).counts.unread).toBe(1);
    });

    test("other bytes planted under a digest never make a put or a send of its true bytes fail: the true bytes take their place, for every reader", async () => {
      const bytes = new TextEncoder().encode(`the true bytes ${crypto.randomUUID()}\n`);
      const digest = sha(bytes);
      await plant(engine.name, t.bus, digest, new TextEncoder().encode("planted bytes"));
      expect(await t.reopen().blobs.put(piecesOf(bytes, 4))).toMatchObject({ digest, size: bytes.length });
      const sent = await t.reopen().mail.send("alice", "bob", "see attached", { attach: [{ digest, name: "a.txt" }] });
      expect(sent.attachments).toEqual([{ digest, name: "a.txt", size: bytes.length, type: "text/plain" }]);
      expect(Buffer.compare(await got(t.reopen(), digest), bytes)).toBe(0);
    });

    test("a record naming a blob moves the blob's time to now: gc's grace period counts from the naming, not from an older put", async () => {
      const put = await t.bus.blobs.put(piecesOf(new TextEncoder().encode("named late\n"), 5));
      await age(engine.name, t.bus, put.digest);
      expect((await t.bus.blobs.stat(put.digest)).at).toBeLessThan(Date.now() - 3600_000);
      await t.reopen().mail.send("alice", "bob", "at last", { attach: [{ digest: put.digest, name: "late.txt" }] });
      expect((await t.bus.blobs.stat(put.digest)).at).toBeGreaterThan(Date.now() - FLOOR);
    });

    test("export and import move blobs with the records that name them: byte for byte, digests kept, twice changes nothing; a damaged part refuses the whole file", async () => {
      const big = randomBytes(2 * 1024 * 1024 + 77);
      const a = await t.bus.blobs.put(piecesOf(big, 65536));
      const empty = await t.bus.blobs.put(piecesOf(new Uint8Array(0), 1));
      await t.bus.mail.send("alice", "bob", "see", { attach: [{ digest: a.digest, name: "big.bin" }, { digest: empty.digest, name: "empty" }] });
      const target = (await t.open({})).bus;
      const first = await move(t.bus, target);
      expect(JSON.parse(first.text.split("\n")[0]).version).toBe(2);
      expect(first.report.counts.blob).toEqual({ imported: 2, already: 0, kept: 0 });
      expect(first.report.counts.blob_part).toEqual({ imported: 3, already: 0, kept: 0 });
      expect(Buffer.compare(await got(target, a.digest), big)).toBe(0);
      expect((await target.blobs.stat(empty.digest)).size).toBe(0);
      const [m] = (await target.mail.receive("bob", { max: 1 }, () => {})).value;
      expect(m.attachments?.map((x) => x.digest)).toEqual([a.digest, empty.digest]);
      const again = await move(t.bus, target);
      expect([again.report.counts.blob, again.report.counts.blob_part]).toEqual([{ imported: 0, already: 2, kept: 0 }, { imported: 0, already: 3, kept: 0 }]);
      // One part's bytes changed (a flipped base64 character): the file is refused, nothing written.
      const lines = first.text.split("\n");
      const i = lines.findIndex((l) => l.includes('"n":1,'));
      const part = JSON.parse(lines[i]);
      part.data = (part.data[0] === "A" ? "B" : "A") + part.data.slice(1);
      lines[i] = JSON.stringify(part);
      const third = (await t.open({})).bus;
      const e = await refusal(third.move.importStore({ open: async function* () { yield Buffer.from(lines.join("\n"), "utf8"); }, again: true }));
      expect(codeOf(e)).toEqual({ code: "EUSAGE", exit: 2 });
      expect(e.message).toMatch(/bytes do not hash to its digest/);
      expect(codeOf(await refusal(third.blobs.stat(a.digest)))).toEqual({ code: "ENOTFOUND", exit: 3 });
      // A store with no blobs still exports as version 1, which an older a2a reads.
      const plain = (await t.open({})).bus;
      await plain.slots.publish("x", "y");
      const v1 = await move(plain, (await t.open({})).bus);
      expect(JSON.parse(v1.text.split("\n")[0]).version).toBe(1);
    });
  });
}
