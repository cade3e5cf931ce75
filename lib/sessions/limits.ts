// The bounds of what the session hooks do, which front ends word their help and texts by: kept
// apart from storage so a front end may read them without opening anything.
export const MAX_BLOCKS = 3; // consecutive Stop blocks in one turn (a worker, `--wait`, may allow more)
export const SHOWN_MAX = 5; // messages whose text a prompt hook shows; the rest are counted
