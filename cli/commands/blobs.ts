// `a2a put` and `a2a get`: files of any size stored by digest (lib/blobs/; docs/PROTOCOL.md
// §19), streamed both ways, so `ssh host a2a put - < big.tar` and `a2a get sha256:... > x` work.

import type { Command } from "commander";
import { openUserFile } from "../../lib/core/user-file";
import { A2AError } from "../../lib/core/errors";
import { fileSource } from "../attach";
import { json, out } from "../io";
import { action, command, type Ctx } from "../run";

// Where a get's bytes go: stdout, or FILE by way of a temp file beside it, renamed over it only
// once the bytes are checked (a damaged blob never stands at FILE).
function sink(file: string | undefined) {
  const onFile = <T>(step: () => T): T => {
    try {
      return step();
    } catch (e) {
      const errno = e instanceof A2AError ? e.data.errno : undefined;
      throw new A2AError("EIO", `writing ${file} failed (${errno ?? "error"}): give -o a file in a directory that exists and you may write to, with room for it (the store is fine)`, { data: { file, errno } });
    }
  };
  const f = file === undefined ? undefined : onFile(() => openUserFile(file));
  return {
    write: (bytes: Uint8Array) => (f ? onFile(() => f.write(bytes)) : out(bytes)),
    commit: () => f && onFile(() => f.commit()),
    abandon: () => f?.abandon(),
  };
}

export const commands = {
  put: (p: Command) =>
    command(p, "put", {
      summary: "store a file of any size by its SHA-256 and print sha256:HEX (a2a get gives it back)",
      description: "Store the bytes of FILE (or of stdin, with -) in the store, named by their SHA-256, and print that name, sha256:HEX, on stdout. The bytes are streamed: any size the store's disk holds, in bounded memory. Storing the same bytes twice keeps one copy. Until the put ends nothing is visible; a put that fails or is killed leaves the store as it was. Send, publish and task done name stored files with --attach; a2a gc removes a blob no record names once it is an hour old.",
      examples: ["a2a put build.log", "d=$(tar c out/ | a2a put -) && a2a send reviewer \"the build: $d\"", "ssh buildbox a2a put - < dataset.parquet"],
      json: "print {digest, size, fresh} as JSON (fresh: false when the bytes were there already)",
    })
      .argument("<file>", "the file to store; - for stdin")
      .action(action(async (c: Ctx, file: string) => {
        const r = await c.bus.blobs.put(fileSource(file));
        out(c.json ? json(r) : `${r.digest}\n`);
      })),

  get: (p: Command) =>
    command(p, "get", {
      summary: "write a stored blob (sha256:HEX) to stdout or to FILE, checking its digest",
      description: "Write the bytes of blob DIGEST (sha256:HEX, as a2a put printed it) to stdout, or to FILE with -o (written beside it, then renamed over it once checked). The bytes are streamed in bounded memory and checked against the digest: a blob that is truncated or damaged in the store fails with exit 1 naming it, and -o leaves FILE as it was. A digest the store does not hold exits 3.",
      examples: ["a2a get sha256:9f86d0818...0a08 -o build.log", "a2a get \"$d\" | tar x", "ssh buildbox a2a get \"$d\" > dataset.parquet"],
      json: "with -o, print {digest, size, file} as JSON",
    })
      .argument("<digest>", "sha256:HEX")
      .option("-o, --output <file>", "write to FILE instead of stdout")
      .action(action(async (c: Ctx, digest: string, o: { output?: string }) => {
        await c.bus.blobs.stat(digest); // a digest the store does not hold: nothing is written
        const to = sink(o.output);
        let r;
        try {
          r = await c.bus.blobs.get(digest, to.write);
          to.commit();
        } catch (e) {
          to.abandon();
          throw e;
        }
        if (o.output) c.confirm({ ...r, file: o.output }, `wrote ${r.digest} to ${o.output} (${r.size} bytes)`);
      })),
};
