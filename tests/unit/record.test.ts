// The slot record's encoding and the checks that make a torn or foreign read visible
// (lib/slots/record.ts): a reader must get either a whole, valid record or nothing.
import { describe, expect, test } from "bun:test";
import { variant as variantOf } from "./support";
import { decodeRecord, encodeRecord, isExpired, type SlotRecord } from "../../lib/slots/record";

const base: SlotRecord = {
  a2a: 1, name: "job", state: "done", task: "crunch", result: "héllo", size: 6, version: 3,
  started_at: 1700000000.5, published_at: 1700000001.25, updated_at: 1700000001.25, expires_at: null, chunks: 2, host: "box", pid: 4242,
};
const ENCODED =
  '{"a2a":1,"name":"job","state":"done","task":"crunch","result":"héllo","size":6,"version":3,"started_at":1700000000.5,' +
  '"published_at":1700000001.25,"updated_at":1700000001.25,"expires_at":null,"chunks":2,"host":"box","pid":4242}\n';

const variant = (patch: Record<string, unknown>) => variantOf(ENCODED, patch);

describe("encodeRecord", () => {
  test("is one line of JSON, keys in the documented order, ending in exactly one newline", () => {
    expect(encodeRecord(base)).toBe(ENCODED);
  });

  test("computes size from the UTF-8 bytes of result, whatever the record said", () => {
    expect(JSON.parse(encodeRecord({ ...base, size: 999 })).size).toBe(6);
    expect(JSON.parse(encodeRecord({ ...base, result: "😀", size: 0 })).size).toBe(4);
    expect(JSON.parse(encodeRecord({ ...base, state: "running", result: null, size: 12 })).size).toBe(0);
  });

  test("a result with newlines stays on one line, and fields outside the record are dropped", () => {
    const text = encodeRecord({ ...base, result: "a\nb\n", extra: "x" } as SlotRecord);
    expect(text.indexOf("\n")).toBe(text.length - 1);
    expect(Object.keys(JSON.parse(text))).toEqual(Object.keys(base));
    expect(decodeRecord(text)?.result).toBe("a\nb\n");
  });
});

describe("decodeRecord", () => {
  test("returns exactly what encodeRecord wrote, for done, running and cleared records", () => {
    expect(decodeRecord(ENCODED)).toEqual(base);
    const running: SlotRecord = { ...base, state: "running", result: null, size: 0, published_at: null, chunks: 0 };
    expect(decodeRecord(encodeRecord(running))).toEqual(running);
    const cleared: SlotRecord = { ...base, state: "cleared", result: null, size: 0, expires_at: 1700000009 };
    expect(decodeRecord(encodeRecord(cleared))).toEqual(cleared);
  });

  test("a torn read is rejected: no trailing newline, or cut anywhere", () => {
    expect(decodeRecord(ENCODED.slice(0, -1))).toBeUndefined();
    for (let cut = 0; cut < ENCODED.length; cut++) {
      const torn = ENCODED.slice(0, cut);
      expect({ cut, decoded: decodeRecord(torn) }).toEqual({ cut, decoded: undefined });
      // Even a cut that happens to land where a newline follows (cut anywhere but after "}").
      if (cut < ENCODED.length - 1) expect({ cut, decoded: decodeRecord(torn + "\n") }).toEqual({ cut, decoded: undefined });
    }
  });

  test("new content cut to an old length (the NFS case) fails the size check", () => {
    // Same length on disk, result shortened inside: the JSON parses but size no longer matches.
    expect(decodeRecord(variant({ result: "héll" }))).toBeUndefined();
    expect(decodeRecord(variant({ result: "hello" }))).toBeUndefined(); // 5 bytes, size says 6
    expect(decodeRecord(variant({ result: "hello", size: 5 }))).toEqual({ ...base, result: "hello", size: 5 });
    expect(decodeRecord(variant({ result: null }))).toBeUndefined(); // null needs size 0
    expect(decodeRecord(variant({ result: null, size: 0 }))?.result).toBeNull();
    expect(decodeRecord(variant({ size: "6" }))).toBeUndefined();
  });

  test("version must be a whole number of at least 1", () => {
    for (const version of [0, -1, 1.5, "3", null, undefined]) expect({ version, r: decodeRecord(variant({ version })) }).toEqual({ version, r: undefined });
    expect(decodeRecord(variant({ version: 1 }))?.version).toBe(1);
    expect(decodeRecord(variant({ version: 2 ** 40 }))?.version).toBe(2 ** 40);
  });

  test("state is running, done or cleared", () => {
    for (const state of ["pending", "DONE", "", 1, null, undefined]) expect({ state, r: decodeRecord(variant({ state })) }).toEqual({ state, r: undefined });
  });

  test("a2a must be the number 1; name and task strings; chunks a whole number; result a string or null", () => {
    const bad: Record<string, unknown>[] = [
      { a2a: 2 }, { a2a: "1" }, { a2a: undefined },
      { name: 5 }, { name: undefined },
      { task: undefined }, { task: 7 }, { task: null },
      { chunks: undefined }, { chunks: 1.5 }, { chunks: "2" },
      { result: 42, size: 0 }, { result: ["x"] },
    ];
    for (const patch of bad) expect({ patch, r: decodeRecord(variant(patch)) }).toEqual({ patch, r: undefined });
  });

  test("text that is not a record object is rejected", () => {
    for (const text of ["", "\n", "null\n", "1\n", '"x"\n', "[]\n", "{}\n", "not json\n", ENCODED + ENCODED]) {
      expect({ text, r: decodeRecord(text) }).toEqual({ text, r: undefined });
    }
  });
});

describe("isExpired", () => {
  test("no expiry never expires; expiry at or before now has expired", () => {
    expect(isExpired({ ...base, expires_at: null }, 9e9)).toBe(false);
    expect(isExpired({ ...base, expires_at: 1000 }, 999.999)).toBe(false);
    expect(isExpired({ ...base, expires_at: 1000 }, 1000)).toBe(true);
    expect(isExpired({ ...base, expires_at: 1000 }, 1000.001)).toBe(true);
  });
});
