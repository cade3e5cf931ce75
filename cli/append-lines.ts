// `a2a append NAME --lines`: a producer's output streamed into a slot by one process.

import type { SlotRecord } from "../lib/slots/record";
import { done, ended } from "../lib/core/outcome";
import { stdinLines } from "./io";
import { end, type Ctx } from "./run";
import { utf8Length } from "../lib/core/utf8";

// `append --lines`: stdin as it comes, in chunks cut before one would pass the size limit.
// Without `flushMs`, a chunk is what stdin has brought so far: the lines already read are
// appended together once no more are waiting (setImmediate runs after the lines already in
// hand), so a lone line is on the bus at once and a flood costs an append per burst, not one
// per line. With `flushMs`, the lines gathered since an interval's first one make its chunk.
// Appends run one at a time, in order. A stop signal ends the reading, appends what was
// gathered, and exits 128+N; a published slot (exit 4) or a failed append stops it.
export async function appendLines(c: Ctx, name: string, flushMs: number | undefined): Promise<{ count: number; last?: SlotRecord }> {
  const limit = c.bus.settings.maxBytes;
  const signal = c.signal();
  let count = 0;
  let last: SlotRecord | undefined;
  let chain: Promise<void> = Promise.resolve();
  const add = (text: string) => (chain = chain.then(async () => {
    last = await c.bus.slots.append(name, text);
    count++;
  }));
  let batch = "";
  let batchBytes = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let soon: ReturnType<typeof setImmediate> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (soon) clearImmediate(soon);
    soon = undefined;
    if (batch) add(batch);
    batch = "";
    batchBytes = 0;
    return chain;
  };
  const lines = stdinLines(limit, "the chunk")[Symbol.asyncIterator]();
  const stopped = new Promise<"stopped">((resolve) => signal.addEventListener("abort", () => resolve("stopped"), { once: true }));
  for (;;) {
    const next = await Promise.race([lines.next(), stopped]);
    if (next === "stopped" || next.done) break;
    const line = next.value;
    const n = utf8Length(line);
    if (batchBytes + n > limit) await flush();
    batch += line;
    batchBytes += n;
    if (flushMs === undefined) soon ??= setImmediate(() => void flush().catch(() => {}));
    else timer ??= setTimeout(() => void flush().catch(() => {}), flushMs); // a failure surfaces at the next await of chain
    await Promise.race([chain, Promise.resolve()]);
  }
  await flush();
  end(c, signal.aborted ? ended("aborted", null, [name]) : done(null), { timeout: "ok" });
  return { count, last };
}

