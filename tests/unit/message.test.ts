// Message records, message ids and claim file names (lib/mail/message.ts, lib/fs/mail-record.ts):
// a reader accepts only whole messages filed under their own id, and claim names parse back
// to exactly the holder that wrote them.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { variant as variantOf } from "./support";
import { openStore } from "../../lib/engine/open";
import { parseClaim, readMessageFile, readMessageHead } from "../../lib/fs/mail-record";
import { idOfFile } from "../../lib/fs/paths";
import { decodeMessage, encodeMessage, isMessageId, newMessageId, type Message } from "../../lib/mail/message";
import { hostTag } from "../../lib/core/holder";

const ID = "1764507972123000-3f2a-1k3d-a9c2e1";
const msg: Message = { a2a: 1, id: ID, from: "alice", to: "bob", body: "héllo\nworld", size: 12, sent_at: 1764507972.123, reply_to: null, host: "box", pid: 4242 };
const ENCODED = `{"a2a":1,"id":"${ID}","from":"alice","to":"bob","body":"héllo\\nworld","size":12,"sent_at":1764507972.123,"reply_to":null,"host":"box","pid":4242}\n`;

const variant = (patch: Record<string, unknown>) => variantOf(ENCODED, patch);

describe("isMessageId", () => {
  test("16 digits, 4 hex, base-36 pid, 6 hex", () => {
    for (const id of [ID, "0000000000000000-0000-0-000000", "9999999999999999-ffff-zzzzzz-ffffff"]) expect(isMessageId(id)).toBe(true);
  });

  test("anything else is not an id", () => {
    const bad = [
      "", "176450797212300-3f2a-1k3d-a9c2e1", "17645079721230000-3f2a-1k3d-a9c2e1", "1764507972123000-3F2A-1k3d-a9c2e1",
      "1764507972123000-3f2-1k3d-a9c2e1", "1764507972123000-3f2a--a9c2e1", "1764507972123000-3f2a-1K3D-a9c2e1",
      "1764507972123000-3f2a-1k3d-a9c2e", "1764507972123000-3f2a-1k3d-a9c2e12", `${ID}.json`, `.${ID}`, `${ID}\n`, `${ID},box,1,2`,
    ];
    for (const id of bad) expect({ id, ok: isMessageId(id) }).toEqual({ id, ok: false });
    for (const v of [undefined, null, 1764507972123000, [ID]]) expect(isMessageId(v)).toBe(false);
  });

  test("newMessageId makes valid ids, strictly increasing within one store", () => {
    const store = { host: "box", lastIdUs: 0 } as unknown as Parameters<typeof newMessageId>[0];
    const ids = Array.from({ length: 2000 }, () => newMessageId(store));
    expect(ids.filter((id) => !isMessageId(id))).toEqual([]);
    for (let i = 1; i < ids.length; i++) if (!(ids[i - 1] < ids[i])) throw new Error(`ids out of order at ${i}: ${ids[i - 1]} then ${ids[i]}`);
    // The pid part is this process's pid in base 36.
    expect(ids[0].split("-")[2]).toBe(process.pid.toString(36));
  });

  test("idOfFile takes the id of ID.json only", () => {
    expect(idOfFile(`${ID}.json`)).toBe(ID);
    for (const f of [ID, `${ID}.json.tmp`, `.${ID}.json`, "x.json", `${ID}.JSON`]) expect({ f, id: idOfFile(f) }).toEqual({ f, id: undefined });
  });
});

describe("decodeMessage", () => {
  test("returns exactly what encodeMessage wrote, with size computed from the body", () => {
    expect(encodeMessage({ ...msg, size: 0 })).toBe(ENCODED);
    expect(decodeMessage(ENCODED, ID)).toEqual(msg);
    const reply = { ...msg, reply_to: "1764507972000000-3f2a-1k3d-000000" };
    expect(decodeMessage(encodeMessage(reply), ID)).toEqual(reply);
  });

  test("a torn file is rejected: no trailing newline, or cut anywhere", () => {
    expect(decodeMessage(ENCODED.slice(0, -1), ID)).toBeUndefined();
    for (let cut = 0; cut < ENCODED.length - 1; cut++) {
      expect({ cut, m: decodeMessage(ENCODED.slice(0, cut), ID) }).toEqual({ cut, m: undefined });
      expect({ cut, m: decodeMessage(ENCODED.slice(0, cut) + "\n", ID) }).toEqual({ cut, m: undefined });
    }
  });

  test("a message filed under another id is rejected", () => {
    expect(decodeMessage(ENCODED, "1764507972123000-3f2a-1k3d-a9c2e2")).toBeUndefined();
    expect(decodeMessage(variant({ id: undefined }), ID)).toBeUndefined();
  });

  test("wrong or missing fields are rejected", () => {
    const bad: Record<string, unknown>[] = [
      { a2a: 2 }, { a2a: "1" }, { a2a: undefined },
      { body: undefined }, { body: 5 }, { body: null },
      { from: undefined }, { from: 1 },
      { size: 11 }, { size: 13 }, { size: "12" }, { size: undefined },
      { body: "hello\nworld" }, // 11 bytes, size says 12
      { sent_at: "1764507972" }, { sent_at: undefined },
      { reply_to: 5 }, { reply_to: undefined }, { reply_to: {} },
    ];
    for (const patch of bad) expect({ patch, m: decodeMessage(variant(patch), ID) }).toEqual({ patch, m: undefined });
  });

  test("text that is not a message object is rejected", () => {
    for (const text of ["", "\n", "null\n", "[]\n", "{}\n", "nope\n", ENCODED + ENCODED]) expect({ text, m: decodeMessage(text, ID) }).toEqual({ text, m: undefined });
  });
});

describe("parseClaim", () => {
  test("ID,HOST,PID,MS parses to its parts", () => {
    expect(parseClaim(`${ID},box-1.example.org,4242,1764507972123`)).toEqual({ id: ID, host: "box-1.example.org", pid: 4242, ms: 1764507972123 });
    expect(parseClaim(`${ID},_,0,0`)).toEqual({ id: ID, host: "_", pid: 0, ms: 0 });
  });

  test("a claim name built from any host name parses back to that host's tag", () => {
    for (const host of ["box", "my,host name", "héllo", ""]) {
      const c = parseClaim(`${ID},${hostTag(host)},17,1764507972123`);
      expect(c).toEqual({ id: ID, host: hostTag(host), pid: 17, ms: 1764507972123 });
    }
  });

  test("anything else is not a claim", () => {
    const bad = [
      "", `${ID}.json`, ID, `${ID},box,1`, `${ID},box,1,2,3`, `${ID},bo,x,1,2`, `nope,box,1,2`, `${ID}.json,box,1,2`,
      `${ID},box,-1,2`, `${ID},box,1.5,2`, `${ID},box,,2`, `${ID},box,0x1f,2`, `${ID},box,1,2.5`, `${ID},box,1,`, `${ID},box,1,-2`, `${ID},box, 1,2`,
    ];
    for (const f of bad) expect({ f, c: parseClaim(f) }).toEqual({ f, c: undefined });
  });
});

describe("readMessageHead: a listing reads the two ends of a message file, never its whole body", () => {
  const dir = mkdtempSync(join(tmpdir(), "a2a-head-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const store = openStore({ dir, env: {} });
  const file = join(dir, `${ID}.json`);
  const head = (text: string, chars: number) => {
    writeFileSync(file, text);
    return readMessageHead(store, file, ID, chars);
  };

  test("every body, cut anywhere, reads as the first characters of the whole one", () => {
    // Escapes, quotes, backslashes, multi-byte and astral characters land on every cut point.
    const units = ["a", "\\", '"', "\n", "\u0001", "é", "€", "😀", "\\u0041", "\\\\", " "];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 300; round++) {
      const n = 200 + (next() % 4000);
      const body = Array.from({ length: n }, () => units[next() % units.length]).join("");
      const chars = next() % 300;
      const encoded = encodeMessage({ ...msg, body });
      const got = head(encoded, chars);
      const whole = readMessageFile(store, file, ID);
      if (typeof got !== "object" || typeof whole !== "object") throw new Error(`round ${round}: ${String(got)} / ${String(whole)}`);
      expect({ round, body: got.body, truncated: got.truncated }).toEqual({ round, body: body.slice(0, chars), truncated: body.length > chars });
      const { body: _a, truncated: _t, ...fields } = got;
      const { body: _b, ...wholeFields } = whole;
      expect(fields).toEqual(wholeFields);
    }
  });

  test("names and host beyond ASCII (written by hand: a2a's names are ASCII) read as the whole file does", () => {
    const text = encodeMessage({ ...msg, from: "zoë", to: "bøb", host: "hôte-ü", reply_to: ID, body: "é".repeat(5000) });
    const got = head(text, 3);
    const whole = readMessageFile(store, file, ID);
    expect(got).toEqual({ ...(whole as object), body: "ééé", truncated: true } as any);
  });

  test("a big file is read by its ends: a damaged middle goes unnoticed, damaged ends do not", () => {
    const big = encodeMessage({ ...msg, body: "x".repeat(100_000) });
    const middle = big.slice(0, 50_000) + "\u0000" + big.slice(50_001); // a raw NUL: recv would refuse it
    expect(typeof head(middle, 10)).toBe("object");
    expect(typeof readMessageFile(store, file, ID)).toBe("string");
    const bad = [
      big.replace(`"id":"${ID}"`, `"id":"${ID.replace(/^1/, "2")}"`), // filed under another id
      big.replace('"a2a":1', '"a2a":2'),
      big.replace(`"size":100000`, `"size":"100000"`),
      big.replace(`"size":100000`, `"size":999999999`), // more than the file holds
      big.slice(0, -1), // no final newline
      big.replace('"sent_at":', '"sent":'),
      big.replace('"body":"x', '"body":"\u0001x'), // a raw control character in the part read
      big.replace('"body":"xxx', '"body":"x"x'), // the body ends early: not encodeMessage's layout
      JSON.stringify({ ...JSON.parse(big), from: undefined, sender: "alice" }) + "\n",
    ];
    for (const [i, text] of bad.entries()) expect({ i, got: head(text, 10) }).toEqual({ i, got: "corrupt" });
  });
});
