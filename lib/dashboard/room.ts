// The dashboard's read model and board actions, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { watchBus } from "./feed";
export { TASK_BOARD } from "./tasks";
export { agentRow, agentRows, livePeers, topicRow, topicRows } from "./view";
