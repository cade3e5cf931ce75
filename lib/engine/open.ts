// Opening a store: its settings read once (lib/core/config.ts readStore), then its engine chosen
// once. A directory gets the file engine here; a database URL gets the PostgreSQL engine from
// lib/bus.ts, which loads that engine's code only then (a dynamic import, so a file-store
// command never loads it).

import { readStore, type Store, type StoreOptions } from "../core/config";
import { fileEngine } from "../fs/engine";

export function openStore(opts: StoreOptions = {}): Store {
  const store = readStore(opts);
  if (store.url === undefined) store.engine = fileEngine(store);
  return store;
}
