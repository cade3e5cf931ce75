// A search query, parsed once for every engine, and the snippet a hit shows. Pure: no store.
//
// The language (docs/PROTOCOL.md §20): terms separated by spaces, all of which must match (AND);
// a term is a word, a word ending in `*` (a prefix), or a "phrase in double quotes". Within a
// word, anything that is not a letter, a digit or a combining mark separates parts, and the
// parts must follow each other: `e-mail` is the phrase "e mail", so it matches "e-mail",
// "e mail" and "E-Mail" alike, and both engines split text the same way (the file engine's
// FTS5 tokenizer unicode61 separates at a hyphen; the PostgreSQL engine turns the separators
// into spaces before it parses: lib/pg/search.ts).
//
// Invariants:
// - a parsed term has at least one part, and every part is lowercase letters, digits and marks
//   only: the engines' query strings are built from parts and need no escaping beyond quotes;
// - bad syntax (an unclosed quote, a `*` not at a word's end, a term with no letter or digit,
//   too many terms) is EUSAGE, one line naming the fix;
// - a snippet is cut from the text the hit holds, the matched words marked «like this», the
//   same on every engine because it is made here.

import { A2AError } from "../core/errors";

export interface Term {
  parts: string[]; // lowercase; consecutive in the text
  prefix: boolean; // the last part is a prefix
}

export const MAX_TERMS = 16;
export const MARK_OPEN = "«";
export const MARK_CLOSE = "»";
const SNIPPET_CHARS = 160;

// A part of a word: letters, digits and the marks that belong to them (ä written as a + ¨).
const PART = /[\p{L}\p{N}\p{M}]+/gu;
const partsOf = (s: string): string[] => (s.normalize("NFC").toLowerCase().match(PART) ?? []);

const bad = (why: string, fix: string) =>
  new A2AError("EUSAGE", `bad search query: ${why}: ${fix}`, { data: { why } });

export function parseQuery(query: string): Term[] {
  const q = String(query ?? "");
  const terms: Term[] = [];
  let i = 0;
  while (i < q.length) {
    if (/\s/.test(q[i])) {
      i++;
      continue;
    }
    if (q[i] === '"') {
      const end = q.indexOf('"', i + 1);
      if (end < 0) throw bad("a phrase is not closed", 'close it with a second " (e.g. "schema change")');
      let raw = q.slice(i + 1, end);
      i = end + 1;
      let prefix = false;
      if (q[i] === "*") {
        prefix = true;
        i++;
      }
      if (raw.includes("*")) throw bad(`"*" inside the phrase "${raw}"`, 'a * may end a word or a phrase only (e.g. pars* or "schema ch"*)');
      const parts = partsOf(raw);
      if (!parts.length) throw bad(`the phrase "${raw}" has no word in it`, "put letters or digits in it");
      terms.push({ parts, prefix });
      continue;
    }
    let j = i;
    while (j < q.length && !/\s/.test(q[j]) && q[j] !== '"') j++;
    let word = q.slice(i, j);
    i = j;
    let prefix = false;
    if (word.endsWith("*")) {
      prefix = true;
      word = word.slice(0, -1);
    }
    if (word.includes("*")) throw bad(`"*" inside ${word}*`, "a * may end a word only (e.g. pars*)");
    const parts = partsOf(word);
    if (!parts.length) {
      throw bad(`${JSON.stringify(word + (prefix ? "*" : ""))} has no letter or digit`, "search for words (a * may end one: pars*)");
    }
    terms.push({ parts, prefix });
  }
  if (!terms.length) throw bad("it is empty", 'give words, a prefix (pars*) or a "phrase"');
  if (terms.length > MAX_TERMS) throw bad(`${terms.length} terms`, `give at most ${MAX_TERMS}`);
  return terms;
}

// The query in SQLite FTS5's syntax: each term a phrase of quoted parts, AND between them.
export function fts5Query(terms: Term[]): string {
  return terms.map((t) => `"${t.parts.join(" ")}"${t.prefix ? "*" : ""}`).join(" AND ");
}

// The query in PostgreSQL's tsquery syntax (for to_tsquery('simple', ...)).
export function tsQuery(terms: Term[]): string {
  return terms
    .map((t) => {
      const ps = t.parts.map((p, k) => `'${p}'${t.prefix && k === t.parts.length - 1 ? ":*" : ""}`);
      return ps.length > 1 ? `(${ps.join(" <-> ")})` : ps[0];
    })
    .join(" & ");
}

// A word as matching compares it: lowercase, accents taken off (as FTS5's remove_diacritics 2
// does; the PostgreSQL engine keeps accents, so there a word without them finds less).
const fold = (s: string) => s.normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase();

// `text` cut to about SNIPPET_CHARS characters around the first match of a term, each word
// that matches a term's part marked «so». When no word matches (a hit the engine found by a
// form this rule does not know), the text's start.
export function snippet(text: string, terms: Term[]): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const wanted = terms.flatMap((t) => t.parts.map((p, k) => ({ word: fold(p), prefix: t.prefix && k === t.parts.length - 1 })));
  const hits = (w: string) => {
    const f = fold(w);
    return wanted.some((x) => (x.prefix ? f.startsWith(x.word) : f === x.word));
  };
  const words = [...flat.matchAll(PART)].filter((m) => hits(m[0]));
  const first = words[0]?.index ?? 0;
  let from = Math.max(0, first - Math.floor(SNIPPET_CHARS / 3));
  if (from > 0) {
    const space = flat.indexOf(" ", from);
    from = space >= 0 && space < first ? space + 1 : from;
  }
  let to = Math.min(flat.length, from + SNIPPET_CHARS);
  if (to < flat.length) {
    const space = flat.lastIndexOf(" ", to);
    to = space > first ? space : to;
  }
  let out = "";
  let at = from;
  for (const m of words) {
    const s = m.index!;
    const e = s + m[0].length;
    if (s < from || e > to) continue;
    out += flat.slice(at, s) + MARK_OPEN + m[0] + MARK_CLOSE;
    at = e;
  }
  out += flat.slice(at, to);
  return (from > 0 ? "…" : "") + out + (to < flat.length ? "…" : "");
}
