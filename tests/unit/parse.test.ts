// The values users type on the command line (cli/io.ts): durations and counts.
import { describe, expect, test } from "bun:test";
import { refusal } from "./support";
import { parseCount } from "../../cli/io";
import { parseDuration } from "../../lib/core/time";

describe("parseDuration", () => {
  test("a number is seconds; ms, s, m, h and d are units; surrounding blanks are ignored", () => {
    const cases: [string, number][] = [
      ["0", 0], ["30", 30], ["0.5", 0.5], ["90s", 90], ["1.5m", 90], ["5m", 300], ["2h", 7200], ["7d", 604800],
      ["250ms", 0.25], ["0ms", 0], ["1000ms", 1], [" 5m ", 300], ["007", 7],
    ];
    for (const [text, secs] of cases) expect({ text, secs: parseDuration(text, "--timeout") }).toEqual({ text, secs });
  });

  test("anything else is a usage error naming the flag and the text", () => {
    const bad = ["", " ", "abc", "-5", "+5", "5x", "1e3", ".5", "5.", "5 m", "1h30m", "5S", "5M", "ms", "s", "Infinity", "NaN", "0x10", "5ms5"];
    for (const text of bad) {
      const e = refusal(() => parseDuration(text, "--timeout"));
      expect({ text, code: e.code, message: e.message }).toEqual({
        text, code: "EUSAGE",
        message: `--timeout ${JSON.stringify(text)} is not a duration: use seconds or a number with ms, s, m, h or d (e.g. 30, 90s, 5m, 2h)`,
      });
    }
  });
});

describe("parseCount", () => {
  test("whole numbers from 0 up to the largest safe integer", () => {
    const cases: [string, number][] = [["0", 0], ["3", 3], ["007", 7], ["9007199254740991", 9007199254740991]];
    for (const [text, n] of cases) expect({ text, n: parseCount(text, "--limit") }).toEqual({ text, n });
  });

  test("anything else is a usage error naming the flag and the text", () => {
    const bad = ["", " ", " 3", "3 ", "-1", "+1", "1.5", "1.0", "1e3", "0x10", "abc", "3a", "9007199254740992", "99999999999999999999"];
    for (const text of bad) {
      const e = refusal(() => parseCount(text, "--limit"));
      expect({ text, code: e.code, exit: e.exitCode, message: e.message }).toEqual({
        text, code: "EUSAGE", exit: 2, message: `--limit ${JSON.stringify(text)} is not a whole number: use 0 or more, e.g. --limit 3`,
      });
    }
  });
});
