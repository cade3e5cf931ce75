// The store's maintenance (init, gc, describe, audit), as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { initStore } from "../core/init";
export { auditShared } from "./audit";
export { clockSkew, describeStore } from "./describe";
export { gcStore } from "./gc";
