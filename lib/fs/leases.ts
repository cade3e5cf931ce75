// The file engine's lease storage (lib/leases/storage.ts): a leased name is a chain,
// leases/NAME/NNNNNNNN.json, one file per version, each created exclusively (lib/fs/chain.ts:
// a compare-and-set by link that needs no lock, cannot be left held by a dead process, and
// cannot be broken by a frozen one). docs/FILE-ENGINE.md §10 and §12 are the layout.

import type { Store } from "../core/config";
import { appendVersion, changeChain, readHead } from "./chain";
import { entries } from "./io";
import { ensureDir } from "./guard";
import { isValidName, leaseDir, leasesDir } from "./paths";
import type { LeaseHead, LeaseRecord, LeaseStorage } from "../leases/storage";

const decoder = (name: string) => (r: any): LeaseRecord | undefined =>
  r.a2a === 1 && r.name === name && Number.isInteger(r.version) && (r.holder === null || typeof r.holder === "string") && typeof r.expires_at === "number" ? r : undefined;
const encode = (r: LeaseRecord) => JSON.stringify(r) + "\n";

const headOf = (h: { version: number; value: LeaseRecord | undefined; damaged?: LeaseHead["damaged"] }): LeaseHead => ({ version: h.version, record: h.value, ...(h.damaged ? { damaged: h.damaged } : {}) });

export function fileLeases(store: Store): LeaseStorage {
  return {
    head: async (name, repair = false) => headOf(readHead(store, leaseDir(store, name), decoder(name), repair)),
    names: async () => leaseNames(store),
    change: async (name, next, opts = {}) => {
      // A refused renew or release must leave the store as it was: only a take makes the directory.
      if (opts.create) ensureDir(store, leaseDir(store, name));
      const r = changeChain(store, leaseDir(store, name), decoder(name), encode, (h) => {
        const n = next(headOf(h));
        return n && { ...n, version: 0 };
      }, undefined, opts.repair);
      return { head: headOf(r.head), changed: r.changed };
    },
    restore: async (rec) => {
      const dir = leaseDir(store, rec.name);
      if (readHead(store, dir, decoder(rec.name), true).version >= rec.version) return false;
      ensureDir(store, dir);
      return appendVersion(store, dir, rec, encode);
    },
  };
}

export const leaseNames = (store: Store): string[] => entries(store, leasesDir(store)).filter(isValidName).sort();
