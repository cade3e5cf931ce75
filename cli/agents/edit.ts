// Planning and applying the file changes of `a2a setup AGENT` (agent.ts FileChange): read the
// file, compute the next text, diff it, and (unless --dry-run) keep the old text as a backup
// outside the user's tree (backups.ts) before replacing the file atomically (lib/fs/atomic.ts
// writeUserFile). Also the JSON helpers the JSON-configured agents share (their edits: jsonc-edit.ts).
//
// Invariants:
// - a file is written only when its text changes; running setup twice changes nothing the second
//   time; a --remove that finds nothing of a2a's creates no file;
// - a file setup created is deleted when a change leaves nothing in it ("", "{}"), with the
//   directories its creation made, if left empty: --remove gives back what setup created;
// - the backup is written before the file is replaced; a new file's directory is created 0700,
//   as the agents create theirs.

import { readFileSync, unlinkSync } from "node:fs";
import { writeUserFile } from "../../lib/core/user-file";
import { A2AError } from "../../lib/core/errors";
import type { FileChange } from "./agent";
import { backUp, created, createFor, uncreate } from "./backups";
import { lineDiff } from "./diff";

export interface Plan {
  path: string;
  before: string | undefined;
  after: string | null; // null: the file is deleted
  diff: string; // "" when unchanged
}

// A file's text, undefined when it is absent.
export function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new A2AError("EIO", `cannot read ${path}: ${(e as Error).message}: check its permissions`);
  }
}

// What a JSON or TOML file holds when a2a's entries were all it had.
const empty = (text: string) => /^\s*(\{\s*\})?\s*$/.test(text);

export function plan(c: FileChange, home: string): Plan {
  const before = readText(c.path);
  let after = c.change(before);
  if (after === (before ?? "") || (before === undefined && (after === "" || after === null))) return { path: c.path, before, after: before ?? "", diff: "" };
  if (after !== null && before !== undefined && empty(after) && created(home, c.path)) after = null;
  return { path: c.path, before, after, diff: lineDiff(before ?? "", after ?? "") };
}

// Writes (or deletes) a changed plan; returns the backup's path (undefined: the file is new).
export function apply(p: Plan, home: string): string | undefined {
  const backup = p.before !== undefined ? backUp(home, p.path, p.before) : undefined;
  if (p.before === undefined) createFor(home, p.path);
  if (p.after === null) {
    try {
      unlinkSync(p.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new A2AError("EIO", `cannot remove ${p.path}: ${(e as Error).message}`);
    }
    uncreate(home, p.path);
  } else writeUserFile(p.path, p.after);
  return backup;
}

// A JSON object file's value ({} for an absent or empty file). `jsonc`: // and /* */ comments and
// trailing commas are allowed.
export function parseJsonObject(path: string, text: string | undefined, o: { jsonc?: boolean; agent: string }): Record<string, any> {
  if (text === undefined || !text.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(o.jsonc ? stripJsonComments(text) : text);
  } catch {
    throw new A2AError("EUSAGE", `${path} is not valid JSON: fix it (or move it aside), then run a2a setup ${o.agent} again; nothing was changed`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new A2AError("EUSAGE", `${path} does not hold a JSON object: fix it, then retry; nothing was changed`);
  return value as Record<string, any>;
}

// A JSON object file, read for a check (doctor): {} when absent or unreadable.
export function readJsonQuietly(path: string, jsonc = false): Record<string, any> {
  try {
    return parseJsonObject(path, readText(path), { jsonc, agent: "" });
  } catch {
    return {};
  }
}

// JSONC to JSON: comments and trailing commas out; strings kept as they are.
export function stripJsonComments(text: string): string {
  let out = "";
  // The index after the blanks and comments from i.
  const skip = (i: number): number => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i])) i++;
      if (text.startsWith("//", i)) while (i < text.length && text[i] !== "\n") i++;
      else if (text.startsWith("/*", i)) i = text.indexOf("*/", i + 2) < 0 ? text.length : text.indexOf("*/", i + 2) + 2;
      else return i;
    }
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (text.startsWith("//", i) || text.startsWith("/*", i)) {
      const j = skip(i);
      out += text.slice(i, j).includes("\n") ? "\n" : " ";
      i = j - 1;
    } else if (ch === "," && (text[skip(i + 1)] === "}" || text[skip(i + 1)] === "]")) {
      // a trailing comma: dropped
    } else out += ch;
  }
  return out;
}
