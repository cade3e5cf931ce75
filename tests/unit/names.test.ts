// Name checks (lib/fs/paths.ts): the only gate between user input and a path in the store.
import { describe, expect, test } from "bun:test";
import { A2AError } from "../../lib/core/errors";
import { chunkFile, slotFile, slotNameOf } from "../../lib/fs/paths";
import { checkName, isValidName, NAME_RULE } from "../../lib/core/names";

const store = { root: "/r" } as unknown as Parameters<typeof slotFile>[0];

const GOOD = ["a", "A", "9", "_x", "-x", "job.v2", "x.", "a..b", "a-b_c.D9", "a".repeat(128)];
const BAD = ["", ".", "..", ".hidden", "a/b", "../x", "a b", "a\n", "a\tb", "a\u0000b", "é", "a:b", "a*", "a".repeat(129)];

describe("isValidName / checkName", () => {
  test("1-128 letters, digits, '.', '_' and '-', not starting with '.'", () => {
    for (const n of GOOD) {
      expect({ n, ok: isValidName(n) }).toEqual({ n, ok: true });
      expect(checkName(n)).toBe(n);
    }
    for (const n of BAD) expect({ n, ok: isValidName(n) }).toEqual({ n, ok: false });
    for (const v of [undefined, null, 5, ["a"], { name: "a" }]) expect(isValidName(v)).toBe(false);
  });

  test("a refusal is a usage error that shows the name and states the rule", () => {
    expect(NAME_RULE).toBe("names are 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'");
    for (const n of BAD.filter((n) => n.length <= 60)) {
      let e: unknown;
      try {
        checkName(n);
      } catch (err) {
        e = err;
      }
      expect(e).toBeInstanceOf(A2AError);
      expect({ code: (e as A2AError).code, exit: (e as A2AError).exitCode, message: (e as A2AError).message }).toEqual({
        code: "EUSAGE", exit: 2, message: `invalid name ${JSON.stringify(n)}: ${NAME_RULE}`,
      });
    }
  });

  test("the message names what was checked, shortens a long name, and shows a non-string as is", () => {
    expect(() => checkName("../x", "sender name")).toThrow(`invalid sender name "../x": ${NAME_RULE}`);
    expect(() => checkName("b".repeat(200))).toThrow(`invalid name "${"b".repeat(60)}…": ${NAME_RULE}`);
    expect(() => checkName("c".repeat(60) + "/")).toThrow(`invalid name "${"c".repeat(60)}…": ${NAME_RULE}`);
    expect(() => checkName("d".repeat(59) + "/")).toThrow(`invalid name "${"d".repeat(59)}/": ${NAME_RULE}`);
    expect(() => checkName(42)).toThrow(`invalid name 42: ${NAME_RULE}`);
    expect(() => checkName(undefined, "recipient name")).toThrow(`invalid recipient name undefined: ${NAME_RULE}`);
  });
});

describe("file names in the store", () => {
  test("slotNameOf takes NAME of NAME.json for valid names only", () => {
    const cases: [string, string | undefined][] = [
      ["job.json", "job"], ["a.json.json", "a.json"], ["job", undefined], [".job.json", undefined], [".json", undefined],
      ["job.json.tmp", undefined], ["job.JSON", undefined], [`${"a".repeat(128)}.json`, "a".repeat(128)], [`${"a".repeat(129)}.json`, undefined],
    ];
    for (const [file, name] of cases) expect({ file, name: slotNameOf(file) }).toEqual({ file, name });
  });

  test("slot and chunk paths: NAME.json, and chunks numbered with 10 digits from 1", () => {
    expect(slotFile(store, "job")).toBe("/r/slots/job.json");
    expect(chunkFile(store, "job", 1)).toBe("/r/streams/job/0000000001");
    expect(chunkFile(store, "job", 1234567890)).toBe("/r/streams/job/1234567890");
  });
});
