// A repository's `origin` URL as git itself reads it from the common git directory's `config`
// (git-config(1), "CONFIGURATION FILE"): what lib/reservations/repo.ts makes an identity of.
// Read from the file, not by running git: the PreToolUse hook asks on every edit.
//
// The syntax honoured, as git's own parser has it:
// - `[section]`, `[section "subsection"]` (the subsection case-sensitive, `\"` and `\\` escaped in
//   it) and the old `[section.subsection]` (lowercased); section and key names case-insensitive;
//   a section may appear any number of times, and a variable may follow its header on one line;
// - `key = value`: the value trimmed, `"..."` quoting (removed; inside it `#` and `;` are text),
//   the escapes `\"`, `\\`, `\n`, `\t`, `\b`, a backslash at the end of a line continuing it, and
//   `#` or `;` outside quotes starting a comment;
// - `remote.origin.url` given several times: the first is the one git fetches from;
// - `url.BASE.insteadOf = PREFIX`: a URL starting with PREFIX has it replaced by BASE, the longest
//   PREFIX winning. `[include]` files are not followed (a URL there is not seen).

export interface ConfigEntry {
  section: string; // lowercase
  subsection: string | null;
  key: string; // lowercase
  value: string | null; // null: a key without `=` (git's boolean true)
}

const ESCAPES: Record<string, string> = { '"': '"', "\\": "\\", n: "\n", t: "\t", b: "\b" };

export function parseGitConfig(text: string): ConfigEntry[] {
  const out: ConfigEntry[] = [];
  let section = "";
  let subsection: string | null = null;
  let i = 0;
  const n = text.length;
  const blank = (c: string | undefined) => c === " " || c === "\t" || c === "\r";
  const toEol = () => {
    while (i < n && text[i] !== "\n") i++;
  };
  while (i < n) {
    while (i < n && (blank(text[i]) || text[i] === "\n")) i++;
    if (i >= n) break;
    const c = text[i];
    if (c === "#" || c === ";") {
      toEol();
      continue;
    }
    if (c === "[") {
      const close = text.indexOf("]", i);
      const head = close < 0 ? "" : headerOf(text.slice(i + 1, close));
      if (close < 0 || head === "") return out; // git refuses the file from here: nothing after it counts
      [section, subsection] = JSON.parse(head) as [string, string | null];
      i = close + 1;
      continue;
    }
    const m = /^[A-Za-z][A-Za-z0-9-]*/.exec(text.slice(i, i + 256));
    if (!m) return out;
    const key = m[0].toLowerCase();
    i += m[0].length;
    while (blank(text[i])) i++;
    if (text[i] !== "=") {
      out.push({ section, subsection, key, value: null });
      toEol();
      continue;
    }
    i++;
    let value = "";
    let quoted = false;
    let pending = ""; // blanks kept only when something follows them
    for (; i < n; i++) {
      const ch = text[i];
      if (ch === "\n" && !quoted) break;
      if (ch === "\n") return out; // a newline inside quotes: git refuses the file
      if (!quoted && (ch === "#" || ch === ";")) {
        toEol();
        break;
      }
      if (blank(ch) && !quoted) {
        if (value !== "") pending += " "; // as git: each blank between words one space
        continue;
      }
      if (ch === "\\") {
        const next = text[i + 1];
        if (next === "\n" || (next === "\r" && text[i + 2] === "\n")) {
          i += next === "\r" ? 2 : 1;
          continue;
        }
        if (next === undefined || !(next in ESCAPES)) return out;
        value += pending + ESCAPES[next];
        pending = "";
        i++;
        continue;
      }
      if (ch === '"') {
        quoted = !quoted;
        value += pending;
        pending = "";
        continue;
      }
      value += pending + ch;
      pending = "";
    }
    out.push({ section, subsection, key, value });
  }
  return out;
}

// The inside of `[...]` as JSON [section, subsection], or "" when git would refuse it.
function headerOf(inner: string): string {
  const q = /^\s*([A-Za-z0-9.-]+)\s+"((?:[^"\\\n]|\\.)*)"\s*$/.exec(inner);
  if (q) return JSON.stringify([q[1].toLowerCase(), q[2].replace(/\\(.)/g, "$1")]);
  const plain = /^\s*([A-Za-z0-9.-]+)\s*$/.exec(inner);
  if (!plain) return "";
  const [name, ...rest] = plain[1].split(".");
  return JSON.stringify([name.toLowerCase(), rest.length ? rest.join(".").toLowerCase() : null]);
}

// The URL git fetches `remote` from, insteadOf applied; undefined when it has none.
export function remoteUrl(config: string, remote = "origin"): string | undefined {
  const entries = parseGitConfig(config);
  const url = entries.find((e) => e.section === "remote" && e.subsection === remote && e.key === "url" && e.value)?.value;
  if (!url) return undefined;
  let best: { base: string; prefix: string } | undefined;
  for (const e of entries) {
    if (e.section !== "url" || e.subsection === null || e.key !== "insteadof" || !e.value) continue;
    if (url.startsWith(e.value) && (!best || e.value.length > best.prefix.length)) best = { base: e.subsection, prefix: e.value };
  }
  return best ? best.base + url.slice(best.prefix.length) : url;
}
