// Moving a bus (a2a export, a2a import), as the bus (lib/bus.ts) loads it: one module, so one chunk.
export { exportStore } from "./export";
export { importStore } from "./import";
