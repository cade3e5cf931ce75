// The JSON a coding agent writes on a hook's stdin, read whatever its size in bounded memory.
// A Write of a 100 MB file carries the 100 MB as tool_input.content, and the hook must still see
// the file_path next to it: refusing input over a limit let exactly the big edits through.
//
// How: stdin is streamed through a filter that copies the JSON text as it is, except a string
// longer than LONG_STRING characters (PATH_MAX once BUSY is kept), which it replaces by the lines of that string that could be
// an apply_patch header (those whose first non-blank characters are "***", each cut at
// LONG_LINE): a file path is never that long, and a patch's headers are all the hook reads of
// it (cli/agents/patch-files.ts; dropping the lines between headers can only make a Move to look
// adjacent to an Update: a name too many, never one too few). What is kept is bounded by
// MAX_KEPT; JSON.parse reads the result.
//
// Invariants: memory stays under ~MAX_KEPT + LONG_STRING whatever the input; input that is not
// JSON, or whose non-string part alone is over MAX_KEPT, is an EUSAGE naming the problem (the
// hook then says it could not decide, cli/commands/hook.ts).

import { A2AError } from "../lib/core/errors";
import { readChunks } from "./io";

const LONG_STRING = 256 * 1024;
const LONG_LINE = 16 * 1024;
const MAX_KEPT = 16 * 1024 * 1024;
// Once this much is kept (a MultiEdit of many mid-sized edits), a string longer than any path
// (PATH_MAX) is reduced too: the file paths still come through whole.
const BUSY = 4 * 1024 * 1024;
const PATH_MAX = 4096;

const ESCAPED: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", '"': '"', "\\": "\\", "/": "/" };

// One over-long string, decoded as it streams, keeping only its header-like lines.
class LongString {
  private kept: string[] = [];
  private line = "";
  private esc = false;
  private hex: string | null = null;

  feed(c: string): void {
    if (this.hex !== null) {
      this.hex += c;
      if (this.hex.length === 4) {
        this.char(String.fromCharCode(parseInt(this.hex, 16) || 0xfffd));
        this.hex = null;
      }
    } else if (this.esc) {
      this.esc = false;
      if (c === "u") this.hex = "";
      else this.char(ESCAPED[c] ?? c);
    } else if (c === "\\") this.esc = true;
    else this.char(c);
  }

  private char(c: string): void {
    if (c === "\n") return this.flush();
    if (this.line.length < LONG_LINE) this.line += c;
  }

  private flush(): void {
    if (/^\s*\*\*\*/.test(this.line)) this.kept.push(this.line);
    this.line = "";
  }

  end(): string {
    this.flush();
    return JSON.stringify(this.kept.join("\n"));
  }
}

// The hook's input as a JSON value (strings over LONG_STRING reduced as above); "" when empty.
export function readHookInput(fd = 0): unknown {
  const decoder = new TextDecoder("utf-8", { fatal: false });
  let out = "";
  let token: string | null = null; // the raw text of the string being read, quotes and escapes included
  let long: LongString | null = null;
  let esc = false;
  const keep = (s: string) => {
    out += s;
    if (out.length > MAX_KEPT) throw new A2AError("EUSAGE", `the hook input holds over ${MAX_KEPT} characters outside its long strings: it is not a coding agent's hook event`);
  };
  const take = (text: string) => {
    for (const c of text) {
      if (token === null && long === null) {
        if (c === '"') token = '"';
        else keep(c);
        continue;
      }
      const closing = !esc && c === '"';
      esc = !esc && c === "\\";
      if (long) {
        if (closing) {
          keep(long.end());
          long = null;
        } else long.feed(c);
        continue;
      }
      token += c;
      if (closing) {
        keep(token!);
        token = null;
      } else if (token!.length > (out.length > BUSY ? PATH_MAX : LONG_STRING)) {
        long = new LongString();
        for (const t of token!.slice(1)) long.feed(t);
        token = null;
      }
    }
  };
  readChunks(fd, "stdin", (chunk) => take(decoder.decode(chunk, { stream: true })));
  take(decoder.decode());
  if (token !== null || long !== null) throw notJson();
  const text = out.trim();
  if (!text) return "";
  try {
    return JSON.parse(text);
  } catch {
    throw notJson();
  }
}

const notJson = () => new A2AError("EUSAGE", "the hook input on stdin is not JSON: a2a hook is meant to be run by a coding agent (see a2a setup claude)");
