// An export (docs/PROTOCOL.md §18) of `n` ready tasks, as a file store's export writes them:
// over four queues, each with an add key, every fourth after the one before. Its lines, the
// header first and the end line last, without their newlines. For tests/e2e/pg-import.test.ts
// and bench/pg.ts (import).
export function taskExport(n: number): string[] {
  const lines = [JSON.stringify({ a2a: "export", version: 1, engine: "file", exported_at: 1796539932.172 })];
  let prev = "";
  for (let i = 0; i < n; i++) {
    const id = `${1796539932149000 + i}-${(0x10000000 + i).toString(16)}`;
    const payload = `task ${i}`;
    const after = i % 4 === 3 ? [{ queue: `q${(i - 1) % 4}`, id: prev }] : [];
    const record = { a2a: 1, id, queue: `q${i % 4}`, version: 1, state: "ready", payload, size: payload.length, key: `k${i}`, after, max_attempts: 3, ttl_sec: null, deadline: null, created_at: 1796539932.155, updated_at: 1796539932.155, attempt: 0, round_from: 0, claim: null, attempts: [], result: null, reason: null, host: "vm", pid: 1 };
    lines.push(JSON.stringify({ kind: "task", record }));
    prev = id;
  }
  lines.push(JSON.stringify({ kind: "end", records: n }));
  return lines;
}
