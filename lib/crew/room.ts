// The crew room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { runCrew } from "./supervisor";
export { followLog } from "./follow";
export { controlCrew, crewStatus, findWorker, listCrews } from "./status";
