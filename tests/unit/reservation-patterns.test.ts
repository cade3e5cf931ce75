// Reservation patterns (lib/reservations/patterns.ts): how a pattern is normalised and refused,
// what it covers (a directory path reserves what is under it), and when two overlap: some
// path covered by both. Every overlap is checked both ways round (it must be symmetric), and
// against a brute force over a small universe of paths, so a wrong answer either way fails.
import { describe, expect, test } from "bun:test";
import { A2AError } from "../../lib/core/errors";
import { covers, isPlainPath, normalisePattern as norm, overlap } from "../../lib/reservations/patterns";

// An independent reading of what a pattern covers, for the brute force below: the pattern as a
// regular expression, each segment followed by "/", tried against the path with a "/" added,
// from the start (what follows is under what it matched).
function coversByRegex(pattern: string, path: string): boolean {
  let re = "^";
  for (const seg of pattern.split("/")) {
    if (seg === "**") {
      re += "(?:[^/]+/)*";
      continue;
    }
    re += "(?=[^/])";
    for (let i = 0; i < seg.length; i++) {
      const c = seg[i];
      if (c === "*") re += "[^/]*";
      else if (c === "?") re += "[^/]";
      else if (c === "\\") re += seg[++i].replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
      else if (c === "[") {
        const end = seg.indexOf("]", i + 2);
        let body = seg.slice(i + 1, end);
        const not = body[0] === "!" || body[0] === "^";
        if (not) body = body.slice(1);
        re += `(?!/)[${not ? "^" : ""}${body.replace(/[\]\\^]/g, "\\$&")}]`;
        i = end;
      } else re += c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
    }
    re += "/";
  }
  return new RegExp(re, "u").test(path + "/");
}

// Every path of up to three segments made of `names`.
function universe(names: string[]): string[] {
  const paths: string[] = [];
  const grow = (prefix: string, depth: number) => {
    for (const n of names) {
      const p = prefix ? `${prefix}/${n}` : n;
      paths.push(p);
      if (depth > 1) grow(p, depth - 1);
    }
  };
  grow("", 3);
  return paths;
}

const both = (p: string, q: string) => [overlap(norm(p), norm(q)), overlap(norm(q), norm(p))];

describe("normalising a pattern", () => {
  test("spellings of one pattern are one pattern", () => {
    expect(norm("./src//api/")).toBe("src/api");
    expect(norm("src/./api/../web/x.ts")).toBe("src/web/x.ts");
    expect(norm("docs/**/*.md")).toBe("docs/**/*.md");
  });

  test("empty, NUL, absolute, the repository itself, climbing out and a broken class are refused (EUSAGE), naming the pattern", () => {
    for (const [p, why] of [["", "empty"], ["a\0b", "NUL"], ["/etc/passwd", "absolute"], [".", "the repository itself"], ["a/../..", "climbs out"], ["../x", "climbs out"], ["src/[ab", "no closing ]"], ["[]", "no closing ]"], ["[z-a]", "backwards"], ["x\\", "backslash"]]) {
      let err: unknown;
      try {
        norm(p);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(A2AError);
      expect({ p, code: (err as A2AError).code, has: (err as A2AError).message.includes(why) && (err as A2AError).message.includes(JSON.stringify(p)) }).toEqual({ p, code: "EUSAGE", has: true });
    }
  });

  test("a plain path holds no glob syntax", () => {
    expect([isPlainPath("src/api.ts"), isPlainPath("src/*.ts"), isPlainPath("a?"), isPlainPath("[ab]"), isPlainPath("a\\*")]).toEqual([true, false, false, false, false]);
  });
});

describe("what a pattern covers", () => {
  test("a directory path covers everything under it; * stays within one segment; ** crosses any number", () => {
    const cases: [string, string, boolean][] = [
      ["src", "src", true], ["src", "src/api/x.ts", true], ["src", "srcx/a", false], ["src/api", "src/apix.ts", false],
      ["*.ts", "a.ts", true], ["*.ts", "lib/a.ts", false], ["**/*.ts", "lib/a.ts", true], ["**/*.ts", "a.ts", true],
      ["src/*", "src/api/x.ts", true], ["src/*.ts", "src/api/x.ts", false], ["src/**/x.ts", "src/x.ts", true], ["src/**/x.ts", "src/a/b/x.ts", true],
      ["?", "ab", false], ["??", "ab", true], ["[a-c]x", "bx", true], ["[!a-c]x", "bx", false], ["[!a-c]x", "dx", true], ["\\*", "*", true], ["\\*", "a", false],
    ];
    for (const [p, path, want] of cases) expect({ p, path, got: covers(norm(p), path), regex: coversByRegex(norm(p), path) }).toEqual({ p, path, got: want, regex: want });
  });
});

describe("covers, matched directly (the hook's hot path), against the regex reading", () => {
  test("every pattern against every path of a small universe", () => {
    const paths = universe(["a", "b", "ab", "ba", "a.ts", "b.md", "*", "x"]);
    const patterns = ["a", "a/b", "*", "a*", "*b", "?", "??", "*.ts", "a/*", "*/b", "**/b", "a/**/b", "**/**/b", "a/**/**", "[ab]", "[!a]*", "a/?b", "**", "\\*", "a*/b*", "*a*", "a*a", "*.*", "**/a*/**/b"];
    const wrong = [];
    for (const p of patterns) for (const x of paths) if (covers(norm(p), x) !== coversByRegex(norm(p), x)) wrong.push({ p, x, got: covers(norm(p), x) });
    expect(wrong).toEqual([]);
  });
});

describe("overlap", () => {
  test("edge cases, each both ways round", () => {
    const cases: [string, string, boolean][] = [
      ["*", "*", true], ["*", "*x", true], ["x*", "*y", true], ["a*b", "a", false], ["a*b", "ab", true], ["a*b", "a*c", false],
      ["*.ts", "src/x.ts", false], ["**/*.ts", "src/x.ts", true], ["src", "src/api/x.ts", true], ["src/*", "src/api/x.ts", true],
      ["a/**", "a", true], ["a", "b", false], ["[ab]c", "bc", true], ["[!ab]c", "bc", false], ["[a-c]", "[b-d]", true], ["[a-b]", "[c-d]", false],
      ["?", "ab", false], ["?b", "a?", true], ["src/**/x.ts", "src/a/b/x.ts", true], ["docs/readme.md", "docs/*.md", true],
      ["docs/readme.md", "docs/*.txt", false], ["*.sql", "db/x.sql", false], ["**", "anything/at/all", true], ["\\*", "*", true],
      ["src/api", "src/api.ts", false], ["src/api", "src/*/x", true], ["lib/**/test", "lib/test/a", true],
    ];
    for (const [p, q, want] of cases) expect({ p, q, got: both(p, q) }).toEqual({ p, q, got: [want, want] });
  });

  // The direction that matters: two patterns some path is covered by must overlap, or two agents
  // could both hold it. (The other direction is the edge cases above: a small universe of paths
  // cannot show that no path exists.)
  test("never misses an overlap that a path of a small universe shows", () => {
    const paths = universe(["a", "b", "ab", "ba", "a.ts", "b.ts", "b.md", "*", "x"]);
    const patterns = ["a", "b", "*", "a*", "*b", "?", "??", "*.ts", "a/*", "*/b", "**/b", "a/**/b", "[ab]", "[!a]*", "a/?b", "**", "\\*", "a*/b*"];
    for (const p of patterns) {
      for (const q of patterns) {
        const witness = paths.find((x) => coversByRegex(norm(p), x) && coversByRegex(norm(q), x));
        if (witness) expect({ p, q, witness, got: overlap(norm(p), norm(q)) }).toEqual({ p, q, witness, got: true });
      }
    }
  });
});
