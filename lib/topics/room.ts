// The topic room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { publishTopic, readTopic } from "./log";
export { listTopics, subscribeTopics } from "./subscribe";
