// The presence room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { optionalAgent } from "./identity";
export { listPeers } from "./peers";
export { startPresence } from "./presence";
export { actingAgent, sessionName } from "./session-name";
