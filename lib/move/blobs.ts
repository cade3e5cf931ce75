// Blobs in an export (lib/move/format.ts: blob_part and blob lines): the check of their order
// and bytes as an import reads them, and their writing into the store.

import { A2AError } from "../core/errors";
import type { BlobStorage, Upload } from "../blobs/storage";
import type { ExportRecord } from "./format";
import type { Verdict } from "./import";

// A blob's lines must come whole and in order: its parts from 0, each once, then its blob line,
// whose size, part count and digest the parts must match (the bytes are hashed as they pass),
// with no other line among them. A break in that is damage at the line that shows it.
export function blobSequence() {
  let open: { digest: string; n: number; size: number; hash: Bun.CryptoHasher } | undefined;
  const bad = (line: number, why: string) =>
    new A2AError("EUSAGE", `line ${line} of the export is damaged (${why}): nothing was written from it; repair the file or take a new export, then import again (what was imported before it is whole, and stays)`, { data: { line, why } });
  return {
    check(r: ExportRecord | { kind: "end" }, line: number) {
      if (r.kind === "blob_part") {
        if (r.n === 0) {
          if (open) throw bad(line, `blob ${open.digest} ends without its blob line`);
          open = { digest: r.digest, n: -1, size: 0, hash: new Bun.CryptoHasher("sha256") };
        }
        if (!open || open.digest !== r.digest || r.n !== open.n + 1) throw bad(line, `a part of blob ${r.digest} out of order`);
        const bytes = Buffer.from(r.data, "base64");
        open.hash.update(bytes);
        open.size += bytes.length;
        open.n = r.n;
        return;
      }
      if (r.kind === "blob") {
        const got = open ?? { digest: r.digest, n: -1, size: 0, hash: new Bun.CryptoHasher("sha256") };
        open = undefined;
        if (got.digest !== r.digest || got.n + 1 !== r.parts || got.size !== r.size) throw bad(line, `blob ${r.digest}'s parts do not add up to it`);
        if (`sha256:${got.hash.digest("hex")}` !== r.digest) throw bad(line, `blob ${r.digest}'s bytes do not hash to its digest`);
        return;
      }
      if (open) throw bad(line, `blob ${open.digest} ends without its blob line`);
    },
  };
}

// Blobs written from their lines (blobSequence has checked their order and digest before each
// line comes here): a blob the store holds already is skipped, part by part; else its parts
// stream into an upload committed by its blob line.
export function blobWriter(blobs: BlobStorage) {
  let up: Upload | undefined;
  let skip = false;
  return {
    async part(digest: string, n: number, data: string): Promise<Verdict> {
      const hex = digest.slice("sha256:".length);
      if (n === 0) {
        skip = (await blobs.stat(hex)) !== undefined;
        up = skip ? undefined : await blobs.begin();
      }
      if (skip || !up) return "already";
      await up.write(Buffer.from(data, "base64"));
      return "imported";
    },
    async end(digest: string, size: number): Promise<Verdict> {
      const hex = digest.slice("sha256:".length);
      if (!up && !skip) up = (await blobs.stat(hex)) ? undefined : await blobs.begin(); // an empty blob has no parts
      const u = up;
      up = undefined;
      skip = false;
      if (!u) return "already";
      return (await u.commit(hex, size)).fresh ? "imported" : "already";
    },
  };
}
