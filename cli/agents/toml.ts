// A small TOML editor for the agents configured in TOML (Codex CLI's config.toml): it takes out
// whole tables ([a.b] and every [a.b.*] below it, [[arrays]] too) and puts a block of text in
// their place (or at the end), and leaves every other byte of the file as it was: keys,
// values, comments, blank lines, order. It never re-serialises the user's TOML.
//
// Invariants:
// - the text is valid TOML before (Bun.TOML.parse) and after, or the edit throws EUSAGE;
// - a table a2a owns that is also defined another way (a dotted key `mcp_servers.a2a.x = 1`,
//   an inline table `a2a = {...}` under [mcp_servers], or `mcp_servers = {...}`) is not
//   guessed at: the edit throws EUSAGE naming the line, and the file stays as it was;
// - removing a block that was appended restores the text before the append exactly (the one
//   blank line put before it goes with it).

import { A2AError } from "../../lib/core/errors";

export type KeyPath = string[];

// One statement of the file: a table header or a key = value, by line range (lines are
// 0-based, `end` inclusive: a value may span lines).
interface Statement {
  kind: "table" | "key";
  path: KeyPath; // the header's path, or the table's path + the key's (dotted) path
  start: number;
  end: number;
  inline: boolean; // a key whose value is an inline table
  table: KeyPath; // the header the statement is under ([] before the first)
}

const BARE = /^[A-Za-z0-9_-]+$/;

export const tomlKey = (k: string) => (BARE.test(k) ? k : JSON.stringify(k));
export const tomlString = (s: string) => JSON.stringify(s); // a JSON string is a TOML basic string
export const tomlHeader = (path: KeyPath) => `[${path.map(tomlKey).join(".")}]`;

function bad(file: string, line: number, what: string, fix: string): A2AError {
  return new A2AError("EUSAGE", `${file} line ${line + 1}: ${what}: ${fix}; nothing was changed`);
}

// A key path ("a . 'b c'.\"d\\n\"") at text[i..]: the keys and the index after them.
function readKeyPath(text: string, i: number): { path: KeyPath; next: number } {
  const path: string[] = [];
  for (;;) {
    while (text[i] === " " || text[i] === "\t") i++;
    let key = "";
    if (text[i] === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
      try {
        key = JSON.parse(text.slice(i, j + 1).replace(/\\U([0-9A-Fa-f]{8})/g, (_, h) => String.fromCodePoint(parseInt(h, 16))));
      } catch {
        key = text.slice(i + 1, j);
      }
      i = j + 1;
    } else if (text[i] === "'") {
      const j = text.indexOf("'", i + 1);
      key = text.slice(i + 1, j < 0 ? text.length : j);
      i = j < 0 ? text.length : j + 1;
    } else {
      const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i, i + 4096));
      key = m ? m[0] : "";
      i += key.length;
    }
    path.push(key);
    while (text[i] === " " || text[i] === "\t") i++;
    if (text[i] !== ".") return { path, next: i };
    i++;
  }
}

// The statements of a TOML text, found by one pass that knows strings (basic, literal, both
// multi-line), comments, and brackets in values (arrays and inline tables spanning lines).
function statements(text: string): Statement[] {
  const out: Statement[] = [];
  let line = 0;
  let table: KeyPath = [];
  let i = 0;
  const n = text.length;
  const skipToEol = () => {
    while (i < n && text[i] !== "\n") i++;
  };
  while (i < n) {
    // At the start of a line (outside any value).
    while (text[i] === " " || text[i] === "\t" || text[i] === "\r") i++;
    if (i >= n) break;
    if (text[i] === "\n") {
      i++;
      line++;
      continue;
    }
    if (text[i] === "#") {
      skipToEol();
      continue;
    }
    const start = line;
    if (text[i] === "[") {
      const double = text[i + 1] === "[";
      const k = readKeyPath(text, i + (double ? 2 : 1));
      table = k.path;
      out.push({ kind: "table", path: k.path, start, end: start, inline: false, table: k.path });
      i = k.next;
      skipToEol();
      continue;
    }
    const k = readKeyPath(text, i);
    i = k.next;
    if (text[i] === "=") i++;
    while (text[i] === " " || text[i] === "\t") i++;
    const inline = text[i] === "{";
    // The value: until the end of the line at bracket depth 0, outside strings.
    let depth = 0;
    while (i < n) {
      const c = text[i];
      if (c === "\n") {
        if (depth <= 0) break;
        line++;
        i++;
      } else if (c === "#") skipToEol();
      else if (text.startsWith('"""', i) || text.startsWith("'''", i)) {
        const q = text.slice(i, i + 3);
        let j = i + 3;
        for (;;) {
          const e = text.indexOf(q, j);
          if (e < 0) {
            j = n;
            break;
          }
          if (q === '"""' && text[e - 1] === "\\" && text[e - 2] !== "\\") {
            j = e + 1;
            continue;
          }
          j = e + 3;
          while (text[j] === q[0]) j++; // up to two quotes may end the string's content
          break;
        }
        for (let p = i; p < j; p++) if (text[p] === "\n") line++;
        i = j;
      } else if (c === '"') {
        let j = i + 1;
        while (j < n && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
        i = j + 1;
      } else if (c === "'") {
        let j = i + 1;
        while (j < n && text[j] !== "'" && text[j] !== "\n") j++;
        i = j + 1;
      } else {
        if (c === "[" || c === "{") depth++;
        else if (c === "]" || c === "}") depth--;
        i++;
      }
    }
    out.push({ kind: "key", path: [...table, ...k.path], start, end: line, inline, table });
  }
  return out;
}

const startsWith = (p: KeyPath, prefix: KeyPath) => prefix.length <= p.length && prefix.every((k, i) => p[i] === k);

export function parseToml(file: string, text: string, agent: string): Record<string, any> {
  try {
    return Bun.TOML.parse(text) as Record<string, any>;
  } catch (e) {
    throw new A2AError("EUSAGE", `${file} is not valid TOML (${(e as Error).message.replace(/^TOML Parse error: /, "")}): fix it (or move it aside), then run a2a setup ${agent} again; nothing was changed`);
  }
}

// Every table at or under `path` is taken out (a table's lines: its header to its last
// key = value line; comments and blank lines after that stay, as they may speak of what
// follows); `block` (if any) goes where the first of them stood, else at the end after one
// blank line. Throws EUSAGE when `path`, or a table above it, is defined by a key (dotted, or
// an inline table): a [path] header could not go with it.
export function replaceTables(file: string, text: string, path: KeyPath, block: string | undefined, agent: string): string {
  parseToml(file, text, agent);
  const st = statements(text);
  for (const s of st) {
    if (s.kind !== "key") continue;
    if (startsWith(s.path, path) && !startsWith(s.table, path)) throw bad(file, s.start, `${path.map(tomlKey).join(".")} is defined here as a key, not as a [${path.map(tomlKey).join(".")}] table`, `write it as a [${path.map(tomlKey).join(".")}] table (or take it out) and run a2a setup ${agent} again`);
    if (startsWith(path, s.path) && s.path.length < path.length) throw bad(file, s.start, `${s.path.map(tomlKey).join(".")} is defined here as a value${s.inline ? " (an inline table)" : ""}`, `write it as [${s.path.map(tomlKey).join(".")}] tables and run a2a setup ${agent} again`);
  }
  const lines = text.split("\n");
  // The line ranges of the tables at or under `path`.
  const ranges: [number, number][] = [];
  st.forEach((s, idx) => {
    if (s.kind !== "table" || !startsWith(s.path, path)) return;
    let end = s.start;
    for (let j = idx + 1; j < st.length && st[j].kind === "key"; j++) end = st[j].end;
    ranges.push([s.start, end]);
  });
  const drop = new Set<number>();
  for (const [a, b] of ranges) for (let l = a; l <= b; l++) drop.add(l);
  // The blank line before a removed table goes with it when a blank line (or the end) follows:
  // the one a2a put before an appended block, and never two blank lines left in a row.
  if (block === undefined)
    for (const [a, b] of ranges) {
      const next = lines.slice(b + 1).find((_, k) => !drop.has(b + 1 + k));
      if (a > 0 && !lines[a - 1].trim() && !drop.has(a - 1) && (next === undefined || !next.trim())) drop.add(a - 1);
    }
  const at = ranges.length ? ranges[0][0] : -1;
  const kept: string[] = [];
  lines.forEach((l, i) => {
    if (i === at && block !== undefined) kept.push(...block.replace(/\n$/, "").split("\n"));
    if (!drop.has(i)) kept.push(l);
  });
  let next = kept.join("\n");
  if (at < 0 && block !== undefined) {
    if (next && !next.endsWith("\n")) next += "\n";
    next += (next ? "\n" : "") + block;
  }
  if (next !== text) parseToml(file, next, agent); // what a2a wrote must parse, or nothing is written
  return next;
}

// The text of the table exactly at `path` (its header to its last key = value line), or
// undefined: what a2a carries over when it rewrites its own table (the user's [mcp_servers.a2a.env]).
export function tableText(text: string, path: KeyPath): string | undefined {
  const st = statements(text);
  const i = st.findIndex((s) => s.kind === "table" && s.path.length === path.length && startsWith(s.path, path));
  if (i < 0) return undefined;
  let end = st[i].start;
  for (let j = i + 1; j < st.length && st[j].kind === "key"; j++) end = st[j].end;
  return text.split("\n").slice(st[i].start, end + 1).join("\n") + "\n";
}
