// What the idle wake drivers (bench/idle-wake/*.ts) share: the stand-in's requests awaited as
// they arrive (each request is the event), and a wait for the session to be idle.
import { a2a } from "../../tests/harness/run";

const LIMIT_MS = 120_000; // a bound for a step that does not come, so a broken run ends

export function arrivals<R>() {
  const all: R[] = [];
  const waiters = new Set<() => void>();
  return {
    add(r: R) {
      all.push(r);
      for (const w of [...waiters]) w();
    },
    // The first request from now on that `pred` picks.
    next(pred: (r: R) => boolean): Promise<R> {
      const from = all.length;
      return new Promise<R>((resolve, reject) => {
        const check = () => {
          const r = all.slice(from).find(pred);
          if (r) waiters.delete(check), clearTimeout(timer), resolve(r);
        };
        const timer = setTimeout(() => (waiters.delete(check), reject(new Error("the stand-in never got the request awaited"))), LIMIT_MS);
        timer.unref(); // a request no longer awaited does not keep the run alive
        waiters.add(check);
        check();
      });
    },
  };
}

export async function idle(store: string, name: string): Promise<void> {
  const r = await a2a(["wait-state", name, "idle", "--timeout", String(LIMIT_MS / 1000)], { dir: store });
  if (r.code !== 0) throw new Error(`wait-state ${name} idle: ${r.stderr}`);
}
