// What a reservation names: a repository-relative path or glob, and when two of them overlap.
// Pure: no store, no filesystem (lib/reservations/repo.ts makes paths repository-relative).
//
// Syntax, segment by segment ("/" separates segments and is never matched by anything else):
//   `*`      any run of characters within one segment, the empty run included
//   `?`      one character
//   `[abc]`, `[a-z]`, `[!a]` (or `[^a]`): one character of (or not of) a set
//   `**`     as a whole segment: zero or more segments
//   `\c`     the character c itself
// A pattern covers a path when it matches the path or one of the directories above it: a
// directory path reserves everything under it, and `src/*` reserves `src/api/x.ts` (through
// `src/api`). So a pattern P covers exactly what P/** matches, `**` matching zero segments.
//
// Invariants:
// - a pattern is stored normalised (`./a//b/` is `a/b`); two spellings of one pattern compare equal;
// - overlap(p, q) is true exactly when some path is covered by both (decided on the patterns,
//   not by trying paths), and is symmetric;
// - a pattern that cannot be parsed, is empty, holds a NUL or leaves the repository is refused
//   (EUSAGE) before anything else looks at it.

import { A2AError } from "../core/errors";

// One character of a segment: a literal, any character (`?`), or a set of ranges.
type Char = { any: true } | { ranges: [number, number][]; not: boolean };
type Atom = { star: true } | { char: Char };
type Segment = { globstar: true } | { atoms: Atom[] };

const SLASH = 0x2f;

// The pattern as stored: segments joined by "/", `.` and empty segments gone, `..` resolved;
// refused when empty, when it climbs above the repository, or when it holds a NUL.
export function normalisePattern(raw: string): string {
  if (typeof raw !== "string" || raw.length === 0) throw bad(raw, "it is empty");
  if (raw.includes("\0")) throw bad(raw, "it holds a NUL character");
  if (raw.startsWith("/")) throw bad(raw, "it is absolute: give it relative to the repository (a2a makes paths under it relative for you)");
  const out: string[] = [];
  for (const seg of raw.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (!out.length || out[out.length - 1] === "**") throw bad(raw, "it climbs out of the repository (..)");
      out.pop();
      continue;
    }
    out.push(seg);
  }
  if (!out.length) throw bad(raw, "it names the repository itself: name what is in it (use ** for everything)");
  const norm = out.join("/");
  parse(norm); // a malformed class is refused here, naming the pattern as given
  return norm;
}

function bad(raw: string, why: string): A2AError {
  return new A2AError("EUSAGE", `invalid pattern ${JSON.stringify(raw)}: ${why}`, { data: { pattern: raw } });
}

// True when some path is covered by both patterns (normalised ones).
export function overlap(p: string, q: string): boolean {
  // Two plain paths (the usual reservation) overlap when one is the other or a directory above
  // it: said directly, as `a2a reserve` asks it of every live reservation of the repository.
  if (isPlainPath(p) && isPlainPath(q)) return p === q || covers(p, q) || covers(q, p);
  return segmentsMeet(covering(p), covering(q));
}

// True when `pattern` covers the repository-relative `path` (normalised, no glob meaning).
// Matched directly, not through the overlap DP: the PreToolUse hook asks it of every live
// reservation of a repository before each edit (the DP took ~40 us a pattern, 45 ms for 1,000).
// A plain path is a string comparison; a glob is matched by the classic one-backtrack wildcard
// walk, over segments (`**`) and within each segment (`*`), so no pattern costs more than
// (its atoms x the path's characters).
export function covers(pattern: string, path: string): boolean {
  if (isPlainPath(pattern)) return path === pattern || path.startsWith(pattern + "/");
  const names = path.split("/").filter((s) => s !== "");
  const segment = (seg: Segment, name: string) => atomsMatch((seg as { atoms: Atom[] }).atoms, [...name].map((c) => c.codePointAt(0)!));
  return wildcard(parse(pattern), names, (seg) => "globstar" in seg, segment, true);
}

// Does `pat` match all of `items` (or, with `prefix`, some first part of them: P covers P/**)?
// `isStar(p)`: p matches any run of items; `one(p, item)`: p matches that one item.
function wildcard<P, I>(pat: P[], items: I[], isStar: (p: P) => boolean, one: (p: P, item: I) => boolean, prefix = false): boolean {
  let i = 0; // in pat
  let j = 0; // in items
  let star = -1; // the last star seen, and where its run of items ends for now
  let upTo = 0;
  for (;;) {
    if (i === pat.length && (prefix || j === items.length)) return true;
    if (i < pat.length && isStar(pat[i])) {
      star = i++;
      upTo = j;
    } else if (i < pat.length && j < items.length && one(pat[i], items[j])) {
      i++;
      j++;
    } else if (star >= 0 && upTo < items.length) {
      i = star + 1; // the star takes one more item
      j = ++upTo;
    } else return false;
  }
}

const atomsMatch = (atoms: Atom[], name: number[]): boolean =>
  wildcard(atoms, name, (a) => "star" in a, (a, x) => inChar((a as { char: Char }).char, x));

// True when the pattern holds no glob syntax: it names one file or directory.
export const isPlainPath = (pattern: string): boolean => !/[*?[\\]/.test(pattern);

// P as P/**: what it covers.
const covering = (p: string): Segment[] => [...parse(p), { globstar: true }];

function parse(pattern: string): Segment[] {
  return pattern.split("/").map((seg): Segment => (seg === "**" ? { globstar: true } : { atoms: atoms(seg, pattern) }));
}

function atoms(seg: string, pattern: string): Atom[] {
  const cs = [...seg];
  const out: Atom[] = [];
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i];
    if (c === "*") {
      if (out[out.length - 1] && "star" in out[out.length - 1]) continue; // ** inside a segment is *
      out.push({ star: true });
    } else if (c === "?") {
      out.push({ char: { any: true } });
    } else if (c === "\\") {
      if (i + 1 >= cs.length) throw bad(pattern, "it ends with a lone backslash");
      const e = cs[++i].codePointAt(0)!;
      out.push({ char: { ranges: [[e, e]], not: false } });
    } else if (c === "[") {
      const end = cs.indexOf("]", i + 2); // a ] right after [ (or [!) is a member
      if (end < 0) throw bad(pattern, `its character class at "${cs.slice(i).join("")}" has no closing ]`);
      let body = cs.slice(i + 1, end);
      const not = body[0] === "!" || body[0] === "^";
      if (not) body = body.slice(1);
      if (!body.length) throw bad(pattern, "it has an empty character class []");
      const ranges: [number, number][] = [];
      for (let k = 0; k < body.length; k++) {
        const lo = body[k].codePointAt(0)!;
        if (body[k + 1] === "-" && k + 2 < body.length) {
          const hi = body[k + 2].codePointAt(0)!;
          if (hi < lo) throw bad(pattern, `its range ${body[k]}-${body[k + 2]} runs backwards`);
          ranges.push([lo, hi]);
          k += 2;
        } else ranges.push([lo, lo]);
      }
      out.push({ char: { ranges, not } });
      i = end;
    } else {
      const x = c.codePointAt(0)!;
      out.push({ char: { ranges: [[x, x]], not: false } });
    }
  }
  return out;
}

// Some sequence of segments matches both a and b.
function segmentsMeet(a: Segment[], b: Segment[]): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const k = i * (b.length + 1) + j;
    const known = memo.get(k);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === a.length && j === b.length) r = true;
    else if (i < a.length && "globstar" in a[i]) r = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && "globstar" in b[j]) r = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else if (i === a.length || j === b.length) r = false;
    else r = atomsMeet((a[i] as { atoms: Atom[] }).atoms, (b[j] as { atoms: Atom[] }).atoms) && go(i + 1, j + 1);
    memo.set(k, r);
    return r;
  };
  return go(0, 0);
}

// Some non-empty segment name matches both a and b (a segment is never empty).
function atomsMeet(a: Atom[], b: Atom[]): boolean {
  const memo = new Map<number, boolean>();
  // `used`: at least one character has been matched so far (a segment of zero characters is no name).
  const go = (i: number, j: number, used: boolean): boolean => {
    const k = (i * (b.length + 1) + j) * 2 + (used ? 1 : 0);
    const known = memo.get(k);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === a.length && j === b.length) r = used;
    else if (i < a.length && "star" in a[i]) {
      // The star ends here, or takes one more character that b's next atom also takes; facing
      // another star, both may take a character neither spells out (once is enough).
      r = go(i + 1, j, used) || (j < b.length && ("star" in b[j] ? go(i, j + 1, used) || (!used && go(i, j, true)) : charOk((b[j] as { char: Char }).char) && go(i, j + 1, true)));
    } else if (j < b.length && "star" in b[j]) {
      r = go(i, j + 1, used) || (i < a.length && charOk((a[i] as { char: Char }).char) && go(i + 1, j, true));
    } else if (i === a.length || j === b.length) r = false;
    else r = charsMeet((a[i] as { char: Char }).char, (b[j] as { char: Char }).char) && go(i + 1, j + 1, true);
    memo.set(k, r);
    return r;
  };
  // Two stars facing each other can both take a character neither spells out.
  return go(0, 0, false);
}

const inChar = (c: Char, x: number): boolean =>
  x !== SLASH && x > 0 && ("any" in c || c.ranges.some(([lo, hi]) => x >= lo && x <= hi) !== c.not);

const charOk = (c: Char): boolean => charsMeet(c, { any: true });

// Some character is in both sets. An intersection of unions of ranges (or their complements)
// is a union of intervals, each starting at 1 or right at a range's start or past a range's end:
// trying those points (and the one past "/", which no set holds) decides it.
function charsMeet(a: Char, b: Char): boolean {
  const points = new Set<number>([1, SLASH + 1]);
  for (const c of [a, b]) if (!("any" in c)) for (const [lo, hi] of c.ranges) (points.add(lo), points.add(hi + 1));
  for (const x of points) if (inChar(a, x) && inChar(b, x)) return true;
  return false;
}
