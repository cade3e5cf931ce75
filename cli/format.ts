// Human-readable renderings shared by commands: ages, sizes, previews, tables.

import type { SlotRecord } from "../lib/slots/record";
import type { DamagedChain } from "../lib/tasks/state";

export function age(sec: number, now = Date.now() / 1000): string {
  const d = Math.max(0, now - sec);
  if (d < 60) return `${Math.floor(d)}s`;
  if (d < 3600) return `${Math.floor(d / 60)}m`;
  if (d < 86400) return `${Math.floor(d / 3600)}h`;
  return `${Math.floor(d / 86400)}d`;
}

export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}K`;
  return `${(bytes / 1024 / 1024).toFixed(1)}M`;
}

// One line, control characters shown as spaces, cut to `width` with an ellipsis.
export function preview(text: string, width: number): string {
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return flat.length > width ? flat.slice(0, width - 1) + "…" : flat;
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd() + "\n";
  return line(header) + rows.map(line).join("");
}

// The status table, fitted to `width` when there is one. Names, states, ages and sizes are
// never cut (a cut name would be a name that does not exist); the task and the preview share
// what is left (the task at most 40%), down to their headers' widths; when even that does not
// fit, TASK is left out, then PREVIEW, so no line runs past the width unless the names alone
// are wider. Without a width (a pipe) they are cut at 30 and 40 characters.
export function statusTable(records: SlotRecord[], width: number | undefined): string {
  const head = ["NAME", "STATE", "TASK", "AGE", "SIZE", "PREVIEW"];
  const rows = records.map((r) => [
    r.name,
    r.state === "done" ? "done" : r.chunks ? `running(${r.chunks})` : "running",
    preview(r.task, Infinity),
    age(r.updated_at),
    r.state === "done" ? size(r.size) : "-",
    preview(r.result ?? "", Infinity),
  ]);
  let taskW = 30;
  let prevW = 40;
  let keep = [0, 1, 2, 3, 4, 5];
  if (width !== undefined) {
    const w = (i: number) => Math.max(head[i].length, ...rows.map((r) => r[i].length));
    const room = width - (w(0) + w(1) + w(3) + w(4) + 2 * 3); // for TASK and PREVIEW, with their separators
    const [TASK, PREVIEW] = [head[2].length, head[5].length];
    if (room >= 2 + TASK + 2 + PREVIEW) {
      taskW = Math.max(TASK, Math.min(w(2), Math.floor(room * 0.4), room - 4 - PREVIEW));
      prevW = room - 4 - taskW;
    } else if (room >= 2 + PREVIEW) {
      keep = [0, 1, 3, 4, 5];
      prevW = room - 2;
    } else keep = [0, 1, 3, 4];
  }
  for (const r of rows) {
    r[2] = preview(r[2], taskW);
    r[5] = preview(r[5], prevW);
  }
  return table(
    keep.map((i) => head[i]),
    rows.map((r) => keep.map((i) => r[i])),
  );
}

// The warning for task and lease chains a command passed over because their head is damaged
// (one line, the first three named with their repair).
export function damagedWarning(ds: DamagedChain[]): string {
  const repair = (d: DamagedChain) => (d.kind === "task" ? `a2a task cancel ${d.name} marks it dead` : `a2a lease release ${d.name} --as NAME frees it`);
  const named = ds.slice(0, 3).map((d) => `${d.file} is ${d.why} (${repair(d)})`).join("; ");
  return `a2a: warning: skipped ${ds.length} damaged task(s) or lease(s): ${named}${ds.length > 3 ? `; and ${ds.length - 3} more` : ""}\n`;
}
