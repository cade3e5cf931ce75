// How long `a2a gc` keeps final task and lease chains (docs/PROTOCOL.md §14): a rule of the task
// room that every engine's sweep keeps (lib/fs/task-sweep.ts on files, lib/pg/gc.ts on rows).

export const TASK_KEEP_SEC = 7 * 86400; // a done task
export const DEAD_KEEP_SEC = 30 * 86400; // a dead one: dead letters are kept longer, for their reasons and a retry
export const LEASE_KEEP_SEC = 86400; // a lease chain free that long
