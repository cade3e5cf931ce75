// The results table: one row per figure, with its baseline ratio and its goal. Goals are
// checked against the same run's numbers (a ratio to the floor, or an absolute bound), and
// a row is "met", "MISSED", or informational (no goal). Rendered as text for the terminal
// and as markdown for bench/RESULTS.md.

import { fmtMs, fmtRatio, summarize, type Summary } from "./stats";
import { mdTable, textTable } from "./table";

export type Get = (key: string) => Summary | undefined;

export interface Goal {
  text: string;
  met?: boolean; // undefined: informational or not checkable in this run
}

export interface RowSpec {
  section: string;
  label: string;
  key: string;
  base?: { key: string; name: string };
  goal?: (s: Summary, get: Get) => Goal;
}

export interface Row {
  spec: RowSpec;
  s?: Summary;
  cells: string[];
  goal?: Goal;
  error?: string;
}

export const HEADER = ["measure", "n", "p50", "p90", "p99", "max", "vs base p50/p99", "goal", "result"];

export function buildRows(specs: RowSpec[], series: Record<string, number[]>, errors: Record<string, string>): Row[] {
  const cache = new Map<string, Summary | undefined>();
  const get: Get = (key) => {
    if (!cache.has(key)) cache.set(key, series[key]?.length ? summarize(series[key]) : undefined);
    return cache.get(key);
  };
  const rows: Row[] = [];
  for (const spec of specs) {
    const s = get(spec.key);
    const methodId = spec.key.split(":")[0];
    if (!s) {
      const error = errors[methodId];
      if (error) rows.push({ spec, cells: [spec.label, "0", "-", "-", "-", "-", "-", "-", `FAILED: ${error}`], error });
      continue; // not run in this invocation
    }
    const b = spec.base && get(spec.base.key);
    const ratio = b ? `${fmtRatio(s.p50 / b.p50)} / ${fmtRatio(s.p99 / b.p99)} ${spec.base!.name}` : "";
    const goal = spec.goal?.(s, get);
    const verdict = goal?.met === undefined ? "" : goal.met ? "met" : "MISSED";
    rows.push({
      spec, s, goal,
      cells: [spec.label, String(s.n), fmtMs(s.p50), fmtMs(s.p90), fmtMs(s.p99), fmtMs(s.max), ratio, goal?.text ?? "", verdict],
    });
  }
  return rows;
}

function bySection(rows: Row[]): Map<string, Row[]> {
  const m = new Map<string, Row[]>();
  for (const r of rows) (m.get(r.spec.section) ?? m.set(r.spec.section, []).get(r.spec.section)!).push(r);
  return m;
}

export function renderText(rows: Row[]): string {
  let out = "";
  for (const [section, rs] of bySection(rows)) {
    out += `\n${section} (ms)\n` + textTable([HEADER, ...rs.map((r) => r.cells)]);
  }
  return out;
}

export function renderMarkdown(rows: Row[]): string {
  let out = "";
  for (const [section, rs] of bySection(rows)) {
    out += `\n### ${section} (ms)\n\n` + mdTable([HEADER, ...rs.map((r) => r.cells)]);
  }
  return out;
}

export function missed(rows: Row[]): Row[] {
  return rows.filter((r) => r.goal?.met === false || r.error);
}
