// Changing one member of a JSONC file (JSON with comments and trailing commas, as opencode's
// opencode.json) in place: the rest of the text, comments and layout included, stays byte for byte.
// jsoncMember(text, ["mcp", "a2a"], value) sets it (adding "mcp" when absent), undefined takes it
// out (and "mcp" with it when nothing else is left in it).
//
// Invariants:
// - the text is valid JSONC (the caller has parsed it with edit.ts parseJsonObject): this module
//   only finds where members start and end, it does not judge;
// - a member added at the end of an object and then taken out leaves the text as it was: adding
//   writes `,\n INDENT "key": VALUE` after the last member, taking out removes from the end of the
//   previous member to the end of its own value.

interface Member {
  key: string;
  keyStart: number;
  valueStart: number;
  valueEnd: number;
  object?: Obj; // the value, when it is an object
}
interface Obj {
  open: number; // index of "{"
  close: number; // index of "}"
  members: Member[];
}

// The index after blanks and comments from i.
function skip(text: string, i: number): number {
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (text.startsWith("//", i)) while (i < text.length && text[i] !== "\n") i++;
    else if (text.startsWith("/*", i)) i = text.indexOf("*/", i + 2) < 0 ? text.length : text.indexOf("*/", i + 2) + 2;
    else return i;
  }
}

function stringEnd(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
  return j + 1;
}

// The value at i: its end, and its members when it is an object.
function value(text: string, i: number): { end: number; object?: Obj } {
  const ch = text[i];
  if (ch === '"') return { end: stringEnd(text, i) };
  if (ch === "{") {
    const obj = object(text, i);
    return { end: obj.close + 1, object: obj };
  }
  if (ch === "[") {
    let j = skip(text, i + 1);
    while (text[j] !== "]") {
      j = skip(text, value(text, j).end);
      if (text[j] === ",") j = skip(text, j + 1);
    }
    return { end: j + 1 };
  }
  let j = i;
  while (j < text.length && !/[\s,}\]/]/.test(text[j])) j++;
  return { end: j };
}

function object(text: string, open: number): Obj {
  const members: Member[] = [];
  let i = skip(text, open + 1);
  while (text[i] !== "}") {
    const keyStart = i;
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(keyStart, keyEnd));
    const valueStart = skip(text, skip(text, keyEnd) + 1); // past the ":"
    const v = value(text, valueStart);
    members.push({ key, keyStart, valueStart, valueEnd: v.end, object: v.object });
    i = skip(text, v.end);
    if (text[i] === ",") i = skip(text, i + 1);
  }
  return { open, close: i, members };
}

// The blanks before `at` on its line ("" when something else precedes it there).
function indentOf(text: string, at: number): string {
  const lineStart = text.lastIndexOf("\n", at - 1) + 1;
  const before = text.slice(lineStart, at);
  return /^[ \t]*$/.test(before) ? before : "";
}

const render = (v: unknown, indent: string) => JSON.stringify(v, null, 2).replace(/\n/g, "\n" + indent);

// `obj` with member `key` set to `v` (undefined: removed).
function setIn(text: string, obj: Obj, key: string, v: unknown): string {
  const idx = obj.members.findIndex((m) => m.key === key);
  const m = obj.members[idx];
  if (v === undefined) {
    if (!m) return text;
    if (idx > 0) return text.slice(0, obj.members[idx - 1].valueEnd) + text.slice(m.valueEnd);
    if (obj.members.length > 1) return text.slice(0, m.keyStart) + text.slice(obj.members[1].keyStart);
    return text.slice(0, obj.open + 1) + text.slice(obj.close);
  }
  if (m) return text.slice(0, m.valueStart) + render(v, indentOf(text, m.keyStart)) + text.slice(m.valueEnd);
  const outer = indentOf(text, obj.open) || (obj.open === skip(text, 0) ? "" : "  ");
  if (!obj.members.length) {
    const inner = outer + "  ";
    return text.slice(0, obj.open + 1) + `\n${inner}${JSON.stringify(key)}: ${render(v, inner)}\n${outer}` + text.slice(obj.close);
  }
  const last = obj.members[obj.members.length - 1];
  const inner = indentOf(text, last.keyStart) || outer + "  ";
  return text.slice(0, last.valueEnd) + `,\n${inner}${JSON.stringify(key)}: ${render(v, inner)}` + text.slice(last.valueEnd);
}

// The text with top[path[0]][path[1]] set to `v` (undefined: removed, and top[path[0]] too when
// it is left empty). The text must hold a JSONC object.
export function jsoncMember(text: string, path: [string, string], v: unknown): string {
  const top = object(text, skip(text, 0));
  const [outerKey, key] = path;
  const parent = top.members.find((m) => m.key === outerKey);
  if (!parent?.object) {
    // Absent (or not an object, which setup replaces whole).
    if (v === undefined) return text;
    return setIn(text, top, outerKey, { [key]: v });
  }
  if (v === undefined && parent.object.members.every((m) => m.key === key)) return parent.object.members.length ? setIn(text, top, outerKey, undefined) : text;
  return setIn(text, parent.object, key, v);
}
