// The task room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { addTask, addTasks } from "./add";
export { cancelTask, retryTask } from "./admin";
export { claimTask, unclaimTask } from "./claim";
export { completeTask, failTask, renewTask } from "./holder";
export { claimable, listTasks, showTask, waitTasks } from "./query";
export { queueExists } from "./state";
