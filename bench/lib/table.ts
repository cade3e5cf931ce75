// Rendering of the results table: aligned text for the terminal, GitHub markdown for
// bench/RESULTS.md. Cells are strings; the first row is the header.

export function textTable(rows: string[][], rightAlignFrom = 1): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i >= rightAlignFrom && i < r.length - 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ").trimEnd();
  const sep = widths.map((w) => "-".repeat(w)).join("  ");
  return [line(rows[0]), sep, ...rows.slice(1).map(line)].join("\n") + "\n";
}

export function mdTable(rows: string[][]): string {
  const esc = (c: string) => c.replace(/\|/g, "\\|");
  const line = (r: string[]) => "| " + r.map(esc).join(" | ") + " |";
  return [line(rows[0]), "|" + rows[0].map(() => "---").join("|") + "|", ...rows.slice(1).map(line)].join("\n") + "\n";
}
