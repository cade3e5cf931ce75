// --attach FILE for send, publish and task done (and `attach` of the MCP tools): each file is
// stored as a blob first (streamed: any size), then named by the record. A file that cannot be
// read stops the command before anything is sent; blobs stored by then are swept by gc after
// its grace period, as no record names them.

import { statSync } from "node:fs";
import { basename } from "node:path";
import type { Bus } from "../lib/bus";
import { A2AError } from "../lib/core/errors";
import { isTTY } from "./io";

export type Attach = { digest: string; name: string };

// The bytes of FILE, or of stdin for "-" (a2a put -).
export function fileSource(file: string): AsyncIterable<Uint8Array> {
  if (file === "-") {
    if (isTTY(0)) throw new A2AError("EUSAGE", "a2a put - reads the bytes from stdin, and stdin is a terminal: give FILE, or pipe the bytes in (tar c dir | a2a put -)");
    return Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>;
  }
  checkFile(file);
  return Bun.file(file).stream() as unknown as AsyncIterable<Uint8Array>;
}

function checkFile(file: string): void {
  let st;
  try {
    st = statSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new A2AError("EUSAGE", `there is no file ${file}: give the path of a file to store, or - for stdin`, { data: { file } });
    throw new A2AError("EIO", `cannot read ${file} (${code ?? "error"}): check its permissions, or pipe it in (a2a put - < FILE)`, { data: { file, errno: code } });
  }
  if (!st.isFile()) throw new A2AError("EUSAGE", `${file} is not a regular file: give a file (a directory: tar c DIR | a2a put -)`, { data: { file } });
}

// Stores each file (all checked before the first is stored) and names it by its base name.
export async function attachFiles(bus: Bus, files: string[] | undefined): Promise<Attach[] | undefined> {
  if (!files?.length) return undefined;
  for (const f of files) {
    if (f === "-") throw new A2AError("EUSAGE", "--attach takes files, not stdin: store stdin first (d=$(a2a put -)) and attach a file, or attach the file itself");
    checkFile(f);
  }
  const out: Attach[] = [];
  for (const f of files) out.push({ digest: (await bus.blobs.put(fileSource(f))).digest, name: basename(f) });
  return out;
}

// Commander's collector for a repeatable --attach.
export const collect = (value: string, previous: string[] = []) => [...previous, value];
