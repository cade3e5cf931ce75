// Summary statistics of latency samples (ms). Percentiles use linear interpolation between
// the two nearest ranks (R type 7), so p99 of 300 samples sits between the 3rd and 4th largest.

export interface Summary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  min: number;
  mean: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    p50: percentile(s, 0.5),
    p90: percentile(s, 0.9),
    p99: percentile(s, 0.99),
    max: s.length ? s[s.length - 1] : NaN,
    min: s.length ? s[0] : NaN,
    mean: s.length ? mean : NaN,
  };
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 0.5);
}

// Three significant digits, like the anchors: 0.0702, 0.229, 4.26, 47.4, 2006.
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return "-";
  if (ms >= 1000) return ms.toFixed(0);
  if (ms >= 100) return ms.toFixed(0);
  if (ms >= 10) return ms.toFixed(1);
  if (ms >= 1) return ms.toFixed(2);
  return ms.toFixed(3);
}

export function fmtRatio(r: number): string {
  if (!Number.isFinite(r)) return "-";
  return r >= 100 ? `${r.toFixed(0)}x` : r >= 10 ? `${r.toFixed(1)}x` : `${r.toFixed(2)}x`;
}

export function shuffle<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}

export const randBetween = (lo: number, hi: number) => lo + Math.random() * (hi - lo);
