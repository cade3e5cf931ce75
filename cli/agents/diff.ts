// A unified-style line diff of two texts, for showing what `a2a setup claude` changes: the
// common head and tail are cut first, so the LCS runs on the changed middle only (a settings
// file of thousands of lines with three new ones costs little), with 2 lines of context.

export function lineDiff(before: string, after: string, context = 2): string {
  const a = before === "" ? [] : before.replace(/\n$/, "").split("\n");
  const b = after === "" ? [] : after.replace(/\n$/, "").split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  if (!am.length && !bm.length) return "";
  // LCS table on the middle.
  const n = am.length, m = bm.length;
  const L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = am[i] === bm[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const mid: string[] = [];
  let i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && am[i] === bm[j]) mid.push("  " + am[i++]), j++;
    else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) mid.push("+ " + bm[j++]);
    else mid.push("- " + am[i++]);
  }
  const pre = a.slice(Math.max(0, head - context), head).map((l) => "  " + l);
  const post = a.slice(a.length - tail, a.length - tail + context).map((l) => "  " + l);
  return [`@@ line ${head - pre.length + 1} @@`, ...pre, ...mid, ...post].join("\n") + "\n";
}
