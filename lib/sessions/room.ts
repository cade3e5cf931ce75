// The session hooks' operations (and whoami), as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { noteThread, promptSubmit, serveQueue, sessionStart, stopDecision, threadOf, waitForWork } from "./hooks";
export { endWait, holdTask, markAnswered, markShellWait, markState, peersWithState, sessionState, waitState } from "./state";
export { whoami } from "./whoami";
export { keepWake, promptedBy, wakeCheck } from "./wake";
