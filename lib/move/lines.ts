// The lines of an export as an import reads them: strict UTF-8, each at most MAX_LINE_BYTES
// (the longest line a2a export writes, lib/move/format.ts), so memory holds one line however
// the input was made: a longer one is refused the moment it passes the bound, before it is
// held whole.

import { A2AError } from "../core/errors";
import { MAX_LINE_BYTES } from "./format";

const tooLong = (line: number) =>
  new A2AError("EUSAGE", `line ${line} of the export is over ${MAX_LINE_BYTES} bytes, longer than any line a2a export writes: this is not an a2a export, or it is damaged; take a new export`, {
    data: { line, limit: MAX_LINE_BYTES },
  });

// The lines of `bytes`, without their "\n"; a last line without one too.
export async function* exportLines(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let n = 0;
  let pending: Uint8Array[] = []; // the start of a line longer than a piece, joined once it ends
  let held = 0;
  // "\n" is never inside a UTF-8 sequence: each line decodes on its own.
  const decode = (parts: Uint8Array[]) => {
    try {
      return decoder.decode(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    } catch {
      throw new A2AError("EUSAGE", `the export is not UTF-8 text (from line ${n} on): this is not an a2a export, or it is damaged; take a new export`, { data: { line: n } });
    }
  };
  for await (const piece of bytes) {
    let from = 0;
    for (let nl = piece.indexOf(10); nl >= 0; nl = piece.indexOf(10, from)) {
      n++;
      if (held + nl - from > MAX_LINE_BYTES) throw tooLong(n);
      pending.push(piece.subarray(from, nl));
      yield decode(pending);
      pending = [];
      held = 0;
      from = nl + 1;
    }
    if (from < piece.length) {
      held += piece.length - from;
      if (held > MAX_LINE_BYTES) throw tooLong(n + 1);
      pending.push(Uint8Array.from(piece.subarray(from))); // a copy: a reader may reuse its buffer
    }
  }
  if (held > 0) {
    n++;
    yield decode(pending);
  }
}
