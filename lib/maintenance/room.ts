// The store's maintenance (init, gc, describe, audit, a server's checks and SQL), as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { auditShared } from "./audit";
export { clockSkew, describeStore } from "./describe";
export { gcStore, removeTombstone } from "./gc";
export { initStore, serverChecks, serverSql } from "./server";
