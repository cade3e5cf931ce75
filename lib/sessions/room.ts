// The session hooks' operations (and whoami), as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { promptSubmit, serveQueue, sessionStart, stopDecision, waitForWork } from "./hooks";
export { endWait, holdTask, markState, peersWithState, sessionState, waitState, whileWaiting } from "./state";
export { whoami } from "./whoami";
export { keepWake, promptedBy, wakeCheck } from "./wake";
