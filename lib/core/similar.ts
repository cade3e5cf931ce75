// "Did you mean": the name a typo most likely meant. Commands and flags get that from commander;
// names (slots, recipients) get it here, where a typo costs most: `a2a wait researchr` would
// block for ever beside a live `researcher`, and `a2a send revieweer` would deliver into an
// inbox nobody reads.

// Edit distance with adjacent swaps (optimal string alignment), stopping early past `limit`.
function distance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur.push(d);
      best = Math.min(best, d);
    }
    if (best > limit) return limit + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length];
}

// The candidate nearest to `name`, if near enough to be a slip of the keyboard: 1 edit for a
// name of 3 or 4 characters, 2 up to 12, 3 beyond; case differences count as none. Names of
// one or two characters get no suggestion (every other short name is one edit away), nor does
// a name of a numbered series for another of it (own1 for own7). Ties go
// to the candidate listed first. Undefined when `name` itself is among the candidates.
export function closest(name: string, candidates: Iterable<string>): string | undefined {
  if (name.length <= 2) return undefined;
  const limit = name.length <= 4 ? 1 : name.length <= 12 ? 2 : 3;
  const lower = name.toLowerCase();
  let best: { name: string; d: number } | undefined;
  const series = (n: string) => n.replace(/\d+/g, "#");
  for (const c of candidates) {
    if (c === name) return undefined;
    if (series(c) === series(name)) continue; // worker-1 and worker-2: a numbered series, not a typo
    const d = distance(lower, c.toLowerCase(), limit);
    if (d <= limit && (!best || d < best.d)) best = { name: c, d };
  }
  return best?.name;
}
