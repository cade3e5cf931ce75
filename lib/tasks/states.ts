// The states a task may be in, as names: what front ends offer as a filter (a2a task list
// --state, the MCP task_list tool) and lib/tasks/query.ts checks. Pure, so a front end may
// import it without reaching the store (docs/ENGINE.md). Stored states are what a record holds;
// "blocked" is derived on reading (lib/tasks/state.ts).

export type StoredState = "ready" | "claimed" | "done" | "dead";
export type TaskState = StoredState | "blocked";
export const TASK_STATES: readonly TaskState[] = ["ready", "claimed", "blocked", "done", "dead"];
