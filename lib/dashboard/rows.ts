// The pure half of the dashboard's read model (lib/dashboard/view.ts): how far texts written by
// agents are cut, and a slot record as the row the page shows. Nothing here reads the store, so
// a front end may import it (docs/ENGINE.md); what reads the store is reached through the bus.

import type { SlotRecord } from "../slots/record";

export const PREVIEW_CHARS = 200;
export const BODY_CHARS = 4096;

export const cut = (s: string, n: number) => (s.length > n ? s.slice(0, n) : s);

export interface SlotRow {
  name: string;
  state: "running" | "done";
  task: string; // cut to PREVIEW_CHARS
  version: number;
  chunks: number;
  size: number;
  started_at: number;
  updated_at: number;
  published_at: number | null;
  preview: string; // the result's first PREVIEW_CHARS characters
  host: string;
  pid: number;
}

export function slotRow(r: SlotRecord): SlotRow {
  return {
    name: r.name,
    state: r.state === "done" ? "done" : "running",
    task: cut(r.task, PREVIEW_CHARS),
    version: r.version,
    chunks: r.chunks,
    size: r.size,
    started_at: r.started_at,
    updated_at: r.updated_at,
    published_at: r.published_at,
    preview: cut(r.result ?? "", PREVIEW_CHARS),
    host: r.host,
    pid: r.pid,
  };
}
