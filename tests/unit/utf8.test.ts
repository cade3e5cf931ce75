// lib/core/utf8.ts stands in for Buffer on the hot path: it must count, encode, decode and
// spell hex exactly as Buffer does, lone surrogates and invalid bytes included.
import { expect, test } from "bun:test";
import { decodeUtf8, encodeUtf8, hex, utf8Length } from "../../lib/core/utf8";

const TEXTS = ["", "a", "héllo", "€100", "日本語", "emoji 😀 and 👩‍💻", "\u0000\u007f\u0080\u07ff\u0800\uffff", "lone \ud800 high", "lone \udc00 low", "end \ud83d", "\ud83d\ud83d\ude00", "\ufeffBOM kept"];

test("utf8Length and encodeUtf8 agree with Buffer for every kind of character", () => {
  for (const t of TEXTS) {
    expect({ t, n: utf8Length(t) }).toEqual({ t, n: Buffer.byteLength(t, "utf8") });
    expect({ t, bytes: [...encodeUtf8(t)] }).toEqual({ t, bytes: [...Buffer.from(t, "utf8")] });
  }
});

test("decodeUtf8 agrees with Buffer's toString, a byte-order mark and invalid bytes included", () => {
  const samples = [...TEXTS.map((t) => Buffer.from(t, "utf8")), Buffer.from([0xef, 0xbb, 0xbf, 0x41]), Buffer.from([0x41, 0xff, 0x42]), Buffer.from([0xe2, 0x82]), Buffer.from([0xc0, 0x80])];
  for (const b of samples) expect(decodeUtf8(new Uint8Array(b))).toBe(b.toString("utf8"));
});

test("hex agrees with Buffer's toString('hex')", () => {
  const bytes = new Uint8Array([0, 1, 15, 16, 127, 128, 254, 255]);
  expect(hex(bytes)).toBe(Buffer.from(bytes).toString("hex"));
});
