// A JSON-with-comments file changed in place: the members and array items that differ between
// the file's value and the wanted one are inserted, deleted or replaced as text, one at a time,
// so every comment, blank line and indentation outside them stays as the user wrote it (Gemini
// CLI's settings.json: Gemini CLI itself keeps comments when it writes the file), and the plain JSON
// files too (Claude Code's, Codex's hooks.json): numbers, escapes and indentation as the user wrote them.
//
// Invariants:
// - the result parses to exactly the wanted value; when an edit cannot get there (a construct
//   this scanner does not know), the file is re-written whole as plain JSON instead;
// - an insertion followed by the deletion of the same member gives the text back as it was
//   (so --remove restores the user's file byte for byte after a setup): a member is appended
//   after the last one as ",\n" + indent + member, and a last member is deleted with that same
//   comma and line break.

import type { FileChange } from "./agent";
import { parseJsonObject } from "./edit";

interface Node {
  kind: "object" | "array" | "scalar";
  start: number;
  end: number;
  value: unknown;
  entries: Entry[]; // members of an object, items of an array
}
interface Entry {
  key?: string;
  start: number; // the key's opening quote (a member) or the value's start (an item)
  node: Node;
}
interface Edit {
  start: number;
  end: number;
  text: string;
}

class Unparsable extends Error {}

// Blanks and comments from i: the index of the next significant character.
function skip(t: string, i: number): number {
  for (;;) {
    while (i < t.length && /\s/.test(t[i])) i++;
    if (t.startsWith("//", i)) while (i < t.length && t[i] !== "\n") i++;
    else if (t.startsWith("/*", i)) {
      const e = t.indexOf("*/", i + 2);
      if (e < 0) throw new Unparsable();
      i = e + 2;
    } else return i;
  }
}

function parseAt(t: string, i: number): Node {
  i = skip(t, i);
  const start = i;
  const open = t[i];
  if (open === "{" || open === "[") {
    const entries: Entry[] = [];
    const close = open === "{" ? "}" : "]";
    i = skip(t, i + 1);
    while (t[i] !== close) {
      let key: string | undefined;
      const entryStart = i;
      if (open === "{") {
        const k = parseAt(t, i);
        if (typeof k.value !== "string") throw new Unparsable();
        key = k.value;
        i = skip(t, k.end);
        if (t[i] !== ":") throw new Unparsable();
        i++;
      }
      const node = parseAt(t, i);
      entries.push({ key, start: entryStart, node });
      i = skip(t, node.end);
      if (t[i] === ",") i = skip(t, i + 1);
      else if (t[i] !== close) throw new Unparsable();
    }
    const value = open === "{" ? Object.fromEntries(entries.map((e) => [e.key, e.node.value])) : entries.map((e) => e.node.value);
    return { kind: open === "{" ? "object" : "array", start, end: i + 1, value, entries };
  }
  let end = i;
  if (open === '"') {
    end++;
    while (end < t.length && t[end] !== '"') end += t[end] === "\\" ? 2 : 1;
    end++;
  } else while (end < t.length && !/[\s,\]}\/]/.test(t[end])) end++;
  try {
    return { kind: "scalar", start, end, value: JSON.parse(t.slice(start, end)), entries: [] };
  } catch {
    throw new Unparsable();
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

function equal(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && equal(a[k], b[k]));
  }
  return a === b;
}

class Editor {
  readonly unit: string;
  constructor(readonly t: string) {
    // The file's indentation step: its smallest indentation, two spaces when it has none.
    const widths = [...t.matchAll(/\n([ \t]+)\S/g)].map((m) => m[1]);
    this.unit = widths.sort((a, b) => a.length - b.length)[0] ?? "  ";
  }
  lineStart(i: number): number {
    return this.t.lastIndexOf("\n", i - 1) + 1;
  }
  indent(i: number): string {
    return /^[ \t]*/.exec(this.t.slice(this.lineStart(i)))![0];
  }
  multiline(n: Node): boolean {
    return this.t.slice(n.start, n.end).includes("\n");
  }
  render(key: string | undefined, v: unknown, indent: string): string {
    return (key === undefined ? "" : JSON.stringify(key) + ": ") + JSON.stringify(v, null, this.unit).split("\n").join("\n" + indent);
  }

  first(n: Node, want: unknown): Edit | undefined {
    if (equal(n.value, want)) return undefined;
    if (n.kind === "object" && isObject(want)) {
      const gone = n.entries.findIndex((e) => !Object.hasOwn(want, e.key!));
      if (gone >= 0) return this.remove(n, gone);
      for (const e of n.entries) {
        const edit = this.first(e.node, want[e.key!]);
        if (edit) return edit;
      }
      const added = Object.keys(want).find((k) => !n.entries.some((e) => e.key === k));
      return added === undefined ? undefined : this.insert(n, n.entries.length, added, want[added]);
    }
    if (n.kind === "array" && Array.isArray(want)) {
      const old = n.value as unknown[];
      let i = 0;
      while (i < old.length && i < want.length && equal(old[i], want[i])) i++;
      if (i === old.length) return this.insert(n, i, undefined, want[i]);
      if (i === want.length) return this.remove(n, i);
      if (want.slice(i + 1).some((w) => equal(w, old[i]))) return this.insert(n, i, undefined, want[i]);
      if (old.slice(i + 1).some((o) => equal(o, want[i]))) return this.remove(n, i);
      return this.first(n.entries[i].node, want[i]);
    }
    return { start: n.start, end: n.end, text: this.render(undefined, want, this.indent(n.start)) };
  }

  // A new member (key) or item at index i of container n.
  insert(n: Node, i: number, key: string | undefined, v: unknown): Edit {
    const t = this.t;
    const base = this.indent(n.start);
    if (!n.entries.length) {
      const inner = t.slice(n.start + 1, n.end - 1);
      if (!inner.trim()) return { start: n.start, end: n.end, text: `${t[n.start]}\n${base + this.unit}${this.render(key, v, base + this.unit)}\n${base}${t[n.end - 1]}` };
      return { start: n.start + 1, end: n.start + 1, text: `\n${base + this.unit}${this.render(key, v, base + this.unit)}` };
    }
    if (i < n.entries.length) {
      const at = n.entries[i].start;
      const ind = this.indent(at);
      return { start: at, end: at, text: this.multiline(n) ? `${this.render(key, v, ind)},\n${ind}` : `${JSON.stringify(key === undefined ? v : { [key]: v }).slice(key === undefined ? 0 : 1, key === undefined ? undefined : -1)}, ` };
    }
    const last = n.entries[n.entries.length - 1];
    let after = skip(t, last.node.end);
    const comma = t[after] === ","; // a trailing comma already there
    after = comma ? after + 1 : last.node.end;
    // A trailing comma stays trailing: the new last entry gets one too (and remove takes it with it).
    if (!this.multiline(n)) return { start: after, end: after, text: `${comma ? "" : ","} ${JSON.stringify(key === undefined ? v : { [key]: v }).slice(key === undefined ? 0 : 1, key === undefined ? undefined : -1)}${comma ? "," : ""}` };
    // After the rest of the line (blanks, comments), so a comment stays with its member.
    let eol = after;
    for (;;) {
      while (eol < t.length && (t[eol] === " " || t[eol] === "\t")) eol++;
      if (t.startsWith("//", eol)) while (eol < t.length && t[eol] !== "\n") eol++;
      else if (t.startsWith("/*", eol) && !t.slice(eol, t.indexOf("*/", eol)).includes("\n")) eol = t.indexOf("*/", eol) + 2;
      else break;
    }
    if (t[eol] !== "\n") eol = after;
    const ind = this.indent(last.start);
    return { start: last.node.end, end: eol, text: `${comma ? "" : ","}${t.slice(last.node.end, eol)}\n${ind}${this.render(key, v, ind)}${comma ? "," : ""}` };
  }

  // Member or item i of container n, out with its comma (and its line, when it has one to itself).
  remove(n: Node, i: number): Edit {
    const t = this.t;
    const e = n.entries[i];
    const alone = !t.slice(this.lineStart(e.start), e.start).trim();
    let end = e.node.end;
    const next = skip(t, end);
    const trailing = t[next] === ",";
    if (trailing) end = next + 1;
    if (n.entries.length === 1) {
      const rest = t.slice(n.start + 1, e.start) + t.slice(end, n.end - 1);
      if (!rest.trim()) return { start: n.start, end: n.end, text: t[n.start] + t[n.end - 1] };
      return { start: alone ? this.lineStart(e.start) - 1 : e.start, end, text: "" };
    }
    if (i === n.entries.length - 1) {
      // The comma after the previous entry goes, and the line break before this one.
      const prev = n.entries[i - 1].node.end;
      const c = skip(t, prev);
      // A trailing comma (the file's style): the previous entry keeps its comma, this one goes with its own.
      if (trailing) return { start: alone ? this.lineStart(e.start) - 1 : c + 1, end, text: "" };
      if (!alone) return { start: prev, end, text: t.slice(prev, c) + t.slice(c + 1, e.start).replace(/^[ \t]+/, "") };
      return { start: prev, end, text: t.slice(prev, c) + t.slice(c + 1, this.lineStart(e.start) - 1) };
    }
    if (alone) {
      let to = end;
      while (to < t.length && (t[to] === " " || t[to] === "\t")) to++;
      if (t[to] === "\n") return { start: this.lineStart(e.start), end: to + 1, text: "" };
    }
    return { start: e.start, end: skip(t, end), text: "" };
  }
}

// The text of a JSONC object file changed to hold `want`, comments kept.
export function editJsonc(text: string, want: Record<string, unknown>): string {
  let t = text;
  try {
    for (let step = 0; step < 500; step++) {
      const ed = new Editor(t);
      const edit = ed.first(parseAt(t, 0), want);
      if (!edit) {
        if (skip(t, parseAt(t, 0).end) === t.length) return t;
        break;
      }
      t = t.slice(0, edit.start) + edit.text + t.slice(edit.end);
    }
  } catch (e) {
    if (!(e instanceof Unparsable)) throw e;
  }
  return JSON.stringify(want, null, 2) + "\n";
}

// The change of a JSON object file by `fn` on its value, made as text edits of the members that
// differ: every other byte (numbers as written, escapes, indentation, comments) stays. `jsonc`:
// comments and trailing commas are accepted (Gemini CLI, opencode); plain JSON otherwise.
export function jsoncChange(path: string, agent: string, fn: (v: Record<string, any>) => Record<string, any>, jsonc = true): FileChange {
  return {
    path,
    change(text) {
      const value = parseJsonObject(path, text, { jsonc, agent });
      const next = fn(value);
      if (equal(next, value)) return text ?? "";
      if (text === undefined || !text.trim()) return JSON.stringify(next, null, 2) + "\n";
      return editJsonc(text, next);
    },
  };
}
