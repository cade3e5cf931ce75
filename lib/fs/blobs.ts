// The file engine's blob storage (lib/blobs/storage.ts): blob HEX is the file
// blobs/sha256/HEX, read-only, whose bytes hash to HEX (and, in a shared store, the copies
// members keep of it: blob-files.ts). docs/FILE-ENGINE.md §14a is the layout.
//
// A put streams into a temp file of tmp/ (the store's one staging place, on the same
// filesystem), fsyncs it, and links it to its name: the link is the instant the blob exists,
// whole. A put killed before it leaves only the temp file, which gc removes after an hour
// (lib/fs/atomic.ts TMP_STALE_MS). A second put of the same bytes finds the name taken
// (EEXIST), checks that the file there holds those bytes, drops its copy and touches the
// blob's time, so gc's grace period counts from the newest put. The file is read-only, so an
// agent given its path (MCP) cannot change it in place by mistake.
//
// In a shared store any member can create a file wherever a name is free, and a file's owner
// can always change or remove it: blobs/ and blobs/sha256/ are sticky (nobody removes
// another's blob), a put that finds the name held by another member's file (right bytes or
// not) links its own copy beside it, a file is trusted only once its bytes hash to the name,
// and a blob read from another member's file is `sealed: false` (its owner could change it
// after any check).

import { closeSync, readSync, statSync, utimesSync, type Stats } from "node:fs";
import { dirname } from "node:path";
import type { Store } from "../core/config";
import type { BlobStorage, Upload } from "../blobs/storage";
import { CHUNK } from "../blobs/storage";
import { scratchFile, stageFile, type Staged } from "./atomic";
import { A2AError, op, text } from "../core/errors";
import { entries, lstatIf } from "./io";
import { checkStore, ensureDir, myUid, removeFile } from "./guard";
import { userName } from "./owner";
import { blobFile, blobsDir } from "./paths";
import { blobFileHolds, copyPath, filesOf, hexOfName, holdsSoon, openBlob, pick, pickSoon, sealedBy, sealedFile } from "./blob-files";

export { blobFileHolds } from "./blob-files";

const planted = (store: Store, path: string, st: Stats) =>
  new A2AError("EIO", text`${path} holds other bytes than its name says (put there by OS user ${userName(store, st.uid)}, or damaged): nothing was stored; ask that user or the store's owner to remove it (rm ${path}), then store the file again; ${op("doctor")} names such files`, {
    data: { path, owner: userName(store, st.uid) },
  });

// A blob's time is its file's: only its owner may set it (another's stays: gc's grace then
// counts from its own put, and only its owner's gc may remove it).
function touch(path: string, st: Stats): void {
  if (st.uid !== myUid()) return;
  const now = new Date();
  try {
    utimesSync(path, now, now);
  } catch {
    // removed meanwhile: the record's check finds it gone
  }
}

// Links the staged bytes of blob `hex` under its name, or, when another member's file holds
// the name, as this user's own copy.
function keep(store: Store, staged: Staged, hex: string, size: number): { fresh: boolean } {
  const dest = blobFile(store, hex);
  const there = lstatIf(dest, true);
  if (there && !sealedBy(store, there)) return keepCopy(store, staged, hex, size);
  // A file of ours under the name that is not these bytes is replaced.
  if (there && !blobFileHolds(dest, hex, size) && !removeFile(store, dest)) throw planted(store, dest, there);
  if (staged.link(dest) === "made") return { fresh: true };
  const st = lstatIf(dest, true);
  if (!st) throw new A2AError("EIO", `${dest} was removed while this put stored the same bytes: store the file again`, { data: { path: dest } });
  if (!sealedBy(store, st)) return keepCopy(store, staged, hex, size); // another member's put came first
  if (!blobFileHolds(dest, hex, size)) throw planted(store, dest, st);
  touch(dest, st);
  return { fresh: false };
}

function keepCopy(store: Store, staged: Staged, hex: string, size: number): { fresh: boolean } {
  let dest = copyPath(store, hex);
  const there = lstatIf(dest, true);
  if (there?.isFile() && there.uid === myUid()) {
    if (blobFileHolds(dest, hex, size)) {
      touch(dest, there);
      return { fresh: false };
    }
    removeFile(store, dest);
  } else if (there) {
    dest = copyPath(store, hex, true); // a name someone else took: readers pass over that file
  }
  if (staged.link(dest) === "made") return { fresh: true };
  throw new A2AError("EIO", `${dest} was taken while this put stored its own copy there: store the file again`, { data: { path: dest } });
}

// The uid of the store's owner (its root's), who alone with root may own blobs/ and
// blobs/sha256/ in a shared store: the owner of a sticky directory may still remove anything in
// it, and close it to the others' puts.
const storeOwner = (store: Store) => statSync(store.root).uid;
const trusted = (store: Store, uid: number) => uid === storeOwner(store) || uid === 0;

// blobs/sha256/, ready for a put: in a shared store, refused when a member other than the
// store's owner made it or blobs/ (a store of an earlier release, where whoever put first made
// them), or when they are missing and this user may not make them.
function blobsHome(store: Store): void {
  checkStore(store); // its marker says whether the store is shared
  if (store.shared) {
    const owner = userName(store, storeOwner(store));
    for (const dir of [dirname(blobsDir(store)), blobsDir(store)]) {
      const st = lstatIf(dir, true);
      if (st && !trusted(store, st.uid)) {
        throw new A2AError("EIO", text`${dir} belongs to OS user ${userName(store, st.uid)}, not to the store's owner (OS user ${owner}) or root: that member could remove any blob in it or close it to the others' puts, so nothing is stored there; ask root to give it to ${owner} (chown ${owner} ${dir}), then store the file again; ${op("doctor")} names such directories`, {
          data: { path: dir, owner: userName(store, st.uid) },
        });
      }
      if (!st && !trusted(store, myUid())) {
        throw new A2AError("EIO", text`${dir} is missing in this shared store, and only its owner (OS user ${owner}) or root may make it (whoever makes it could remove any member's blob): ask ${owner} to run any a2a command on the store (${op("doctor")}), which makes it, then store the file again`, {
          data: { path: dir },
        });
      }
    }
  }
  ensureDir(store, blobsDir(store), "sticky");
}

function upload(store: Store): Upload {
  blobsHome(store);
  const staged = stageFile(store);
  return {
    write: async (bytes) => staged.write(bytes),
    async commit(hex, size) {
      try {
        return keep(store, staged, hex, size);
      } finally {
        staged.abort(); // the temp file a link did not take
      }
    },
    abort: async () => staged.abort(),
  };
}

async function* chunks(fd: number): AsyncIterable<Uint8Array> {
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK);
      const n = readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) return;
      yield buf.subarray(0, n);
    }
  } finally {
    closeSync(fd);
  }
}

export function fileBlobs(store: Store): BlobStorage {
  // The names of blobs/sha256/ as list() read them: gc and export go on from that one reading.
  let listed: string[] | undefined;
  const find = (hex: string) => pick(store, hex, listed);
  return {
    begin: async () => upload(store),
    // A get or a resource (stat, then read) hashes another member's file in pieces: a2a mcp
    // goes on answering meanwhile.
    stat: async (hex) => {
      const found = await pickSoon(store, hex, listed);
      return found && { hex, size: found.st.size, at: found.st.mtimeMs };
    },
    async read(hex) {
      const found = await pickSoon(store, hex, listed);
      const open = found && openBlob(found.path);
      return open && chunks(open.fd);
    },
    sealed: (hex) => find(hex)?.sealed ?? true,
    scratch: () => scratchFile(store),
    // Handed out only when nobody else can change the file. This user's own (any, in a private
    // store) was checked by the put that made it, and is not read again: a result naming a 1 GB
    // attachment costs no hash. Root's, in a shared store, is checked, yielding as it reads.
    async path(hex) {
      const f = sealedFile(store, hex);
      if (!f) return undefined;
      return !store.shared || f.st.uid === myUid() || (await holdsSoon(f, hex)) ? f.path : undefined;
    },
    // This user's files of the blob: its name's and its own copy's.
    async touch(hex) {
      for (const path of [blobFile(store, hex), copyPath(store, hex)]) {
        const st = lstatIf(path, true);
        if (st?.isFile()) touch(path, st);
      }
    },
    // One entry a blob, whatever its copies; its time is its newest file's.
    async list() {
      const dir = blobsDir(store);
      listed = entries(store, dir);
      const newest = new Map<string, number>();
      for (const name of listed) {
        const hex = hexOfName(name);
        const st = hex && lstatIf(`${dir}/${name}`, true);
        if (hex && st && st.isFile()) newest.set(hex, Math.max(newest.get(hex) ?? 0, st.mtimeMs));
      }
      return [...newest].flatMap(([hex, at]) => {
        const found = find(hex);
        return found ? [{ hex, size: found.st.size, at }] : [];
      });
    },
    // Every file of the blob older than `before` that this user may remove: in a shared store's
    // sticky directory, its own (the directory's owner, when it is the store's, and root: any).
    async remove(hex, before) {
      const dirUid = lstatIf(blobsDir(store), true)?.uid;
      const dirOwner = dirUid !== undefined && store.shared && trusted(store, dirUid) ? dirUid : undefined;
      let removed = false;
      for (const f of filesOf(store, hex, listed)) {
        if (f.st.mtimeMs >= before) continue;
        if (store.shared && myUid() !== 0 && f.st.uid !== myUid() && dirOwner !== myUid()) continue;
        if (removeFile(store, f.path)) removed = true;
      }
      return removed;
    },
    // An unfinished put is a temp file of tmp/, which gc's sweep of temp files removes (lib/fs/gc.ts).
    sweep: async () => 0,
  };
}
