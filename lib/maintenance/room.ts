// The store's maintenance (init, gc, describe, audit, a server's checks and SQL), as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { auditShared } from "./audit";
export { clockSkew, describeStore } from "./describe";
export { gcStore } from "./gc";
export { removeTombstone } from "../fs/gc"; // the file engine's own: doctor's probe slot on a directory
export { initStore, serverChecks, serverSql } from "./server";
