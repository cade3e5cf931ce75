// The peer record: what a running agent says of itself, and which holder wrote it. A pure module
// (no storage), so the rules (peers.ts, presence.ts) and every engine agree on "ours".
//
//   {"a2a":1,"name","host","pid","cwd","git_root","tty","summary","started_at","heartbeat","heartbeat_ms","client"}
//   (times: unix seconds; client: the MCP client's name and version from its initialize request,
//   "codex-mcp-client 0.171.0", null until it is known; absent in records of earlier releases)

export interface Peer {
  a2a: 1;
  name: string;
  host: string;
  pid: number;
  cwd: string;
  git_root: string | null;
  tty: string | null;
  summary: string;
  started_at: number;
  heartbeat: number;
  heartbeat_ms: number;
  client?: string | null;
}

// The record as every engine keeps it (one JSON object: the fields in the order above), and a
// value read back as a peer record, or undefined (torn, foreign, not a record at all).
export const encodePeer = (p: Peer): string => JSON.stringify(p);
export const peerOf = (v: any): Peer | undefined =>
  v && typeof v === "object" && v.a2a === 1 && typeof v.name === "string" && typeof v.heartbeat === "number" ? (v as Peer) : undefined;

// The same holder: one process's presence, whatever its heartbeat and summary say now.
export const samePeer = (a: Peer, b: Peer) => a.host === b.host && a.pid === b.pid && a.started_at === b.started_at;
