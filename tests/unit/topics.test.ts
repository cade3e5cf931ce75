// Topic names and NATS-style subscription patterns (lib/topics/): what a publisher may name a
// topic, what a subscriber may write as a pattern, and which topics a pattern matches.
import { describe, expect, test } from "bun:test";
import { refusal } from "./support";
import { checkTopic } from "../../lib/topics/log";
import { checkPattern, matchTopic } from "../../lib/topics/subscribe";

describe("matchTopic", () => {
  const cases: [string, string, boolean][] = [
    // literal words: the whole topic, word for word, case-sensitive
    ["build", "build", true],
    ["build.status", "build.status", true],
    ["build.status", "build", false],
    ["build", "build.status", false],
    ["build.status", "build.Status", false],
    ["build.status", "build.statuses", false],
    ["build.status", "build.status.x", false],
    // * is exactly one word
    ["*", "build", true],
    ["*", "build.status", false],
    ["build.*", "build.status", true],
    ["build.*", "build", false],
    ["build.*", "build.status.x", false],
    ["build.*.status", "build.linux.status", true],
    ["build.*.status", "build.linux.result", false],
    ["build.*.status", "build.status", false],
    ["*.*", "a.b", true],
    ["*.*", "a", false],
    ["*.b", "a.b", true],
    ["*.b", "a.c", false],
    // > (last) is one or more trailing words, never zero
    [">", "a", true],
    [">", "a.b.c", true],
    ["build.>", "build.status", true],
    ["build.>", "build.linux.status", true],
    ["build.>", "build", false],
    ["build.>", "deploy.status", false],
    ["*.status.>", "build.status.linux", true],
    ["*.status.>", "build.status", false],
    ["*.status.>", "build.result.linux", false],
  ];
  for (const [pattern, topic, expected] of cases) {
    test(`${JSON.stringify(pattern)} ${expected ? "matches" : "does not match"} ${JSON.stringify(topic)}`, () => {
      expect(matchTopic(pattern, topic)).toBe(expected);
    });
  }
});

describe("checkPattern", () => {
  test("accepts words, * anywhere and > last, and returns the pattern unchanged", () => {
    for (const p of ["a", "build.status", "*", ">", "build.*", "build.>", "*.*.*", "*.status.>", "A-b_9.c", "a".repeat(128)]) {
      expect(checkPattern(p)).toBe(p);
    }
  });

  test("refuses empty words, > before the end, partial wildcards and foreign characters", () => {
    const bad = ["", ".", "a.", ".a", "a..b", ">.a", "a.>.b", "a*", "a.b*", "*a", "a>", "a b", "a/b", "a,b", "héllo", "a\n", "a".repeat(129)];
    for (const p of bad) {
      const e = refusal(() => checkPattern(p));
      expect({ p, code: e.code, exit: e.exitCode }).toEqual({ p, code: "EUSAGE", exit: 2 });
      expect(e.message).toBe(
        `invalid topic pattern ${JSON.stringify(p.slice(0, 60))}: use dot-separated words, * for any one word, > (last) for the rest, e.g. build.*.status or build.>`,
      );
    }
  });

  test("refuses what is not a string, naming it", () => {
    for (const [p, shown] of [[undefined, "undefined"], [null, "null"], [42, "42"], [["a"], "a"]] as const) {
      expect(refusal(() => checkPattern(p)).message).toStartWith(`invalid topic pattern ${shown}: `);
    }
  });
});

describe("checkTopic", () => {
  test("accepts dot-separated words of letters, digits, '_' and '-', up to 128 characters", () => {
    for (const t of ["a", "build.status", "-a._b.9", "A.B.C.D", "a".repeat(128), "a.".repeat(63) + "ab"]) expect(checkTopic(t)).toBe(t);
  });

  test("refuses wildcards (a topic is not a pattern), empty words, and anything over 128 characters", () => {
    const bad = ["", "*", ">", "build.*", "build.>", ".a", "a.", "a..b", "a b", "a/b", "../x", "héllo", "a\n", "a".repeat(129), "a.".repeat(64) + "a"];
    for (const t of bad) {
      const e = refusal(() => checkTopic(t));
      expect({ t, code: e.code }).toEqual({ t, code: "EUSAGE" });
      expect(e.message).toStartWith(`invalid topic ${JSON.stringify(t.slice(0, 60))}: topics are dot-separated words (e.g. build.status); `);
      expect(e.message).toEndWith(", with no empty word");
    }
  });

  test("refuses what is not a string", () => {
    expect(refusal(() => checkTopic(7)).message).toStartWith("invalid topic 7: ");
    expect(refusal(() => checkTopic(undefined)).message).toStartWith("invalid topic undefined: ");
  });

  test("every valid topic matches itself as a pattern, and > matches it", () => {
    for (const t of ["a", "build.status", "-a._b.9"]) {
      expect(checkPattern(checkTopic(t))).toBe(t);
      expect(matchTopic(t, t)).toBe(true);
      expect(matchTopic(">", t)).toBe(true);
    }
  });
});
