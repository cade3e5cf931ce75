// Slots in an export (lib/move/format.ts: a slot line, then from version 3 its run's chunks on
// slot_chunk lines of their own, so no line holds a whole run): the check of their order as an
// import reads them, and their writing into the store.

import { A2AError } from "../core/errors";
import type { SlotRecord } from "../slots/record";
import type { ReadResult, SlotStorage } from "../slots/storage";
import type { ExportRecord } from "./format";
import type { Verdict } from "./import";

// A slot's chunk lines follow its slot line, numbered on from the chunks that line holds, and
// no further than its record counts. A break in that is damage at the line that shows it.
export function slotSequence() {
  let open: { name: string; next: number; upTo: number } | undefined;
  const bad = (line: number, why: string) =>
    new A2AError("EUSAGE", `line ${line} of the export is damaged (${why}): nothing was written from it; repair the file or take a new export, then import again (what was imported before it is whole, and stays)`, { data: { line, why } });
  return {
    check(r: ExportRecord | { kind: "end" }, line: number) {
      if (r.kind === "slot_chunk") {
        if (!open || open.name !== r.name || r.n !== open.next || r.n > open.upTo) throw bad(line, `a chunk of slot ${r.name} out of order, or past its run`);
        open.next++;
        return;
      }
      open = r.kind === "slot" ? { name: r.record.name, next: r.chunks.length + 1, upTo: r.record.chunks } : undefined;
    },
  };
}

// What the store holds against `rec`: undefined when it may be written (lib/move/import.ts against).
type Against = (have: { version: number } | undefined, rec: { version: number }) => Verdict | undefined;

// Slots written from their lines (slotSequence has checked their order): the run's chunks
// first, each under the slot's exclusion and only while the store's record is still older, then
// the record that counts them, once its last chunk is in (or the next line comes: `finish`); an engine's
// change writes one chunk at a time. An older run's chunks go first: a reader of that run takes
// its missing chunks as dropped by a new run, as it does when a run is replaced. `counted`
// gets each slot's verdict once its record is written or refused.
export function slotWriter(slots: SlotStorage, against: Against, counted: (v: Verdict, name: string) => void) {
  let open: { rec: SlotRecord; verdict: Verdict | undefined } | undefined;
  const verdictOf = (rec: SlotRecord) => (cur: ReadResult): Verdict | undefined =>
    cur.kind === "corrupt" ? "kept" : against(cur.kind === "ok" ? cur.record : cur.last, rec);

  async function chunk(n: number, text: string): Promise<Verdict> {
    const at = open;
    if (!at) return "kept"; // slotSequence lets no chunk line come without its slot line
    if (!at.verdict) {
      const verdict = verdictOf(at.rec);
      at.verdict = await slots.change(at.rec.name, (cur) => ({ value: verdict(cur), ...(verdict(cur) ? {} : { chunk: { n, text } }) }));
      if (!at.verdict) {
        if (n >= at.rec.chunks) await finish(); // its last chunk: the record need not wait for the next line
        return "imported";
      }
    }
    if (n >= at.rec.chunks) await finish();
    return at.verdict;
  }

  async function finish(): Promise<void> {
    if (!open) return;
    const { rec, verdict } = open;
    open = undefined;
    if (verdict) return counted(verdict, rec.name);
    const check = verdictOf(rec);
    counted(await slots.change(rec.name, (cur) => {
      const v = check(cur);
      return v ? { value: v } : { value: "imported" as const, record: rec };
    }), rec.name);
  }

  return {
    async slot(rec: SlotRecord, inline: string[]): Promise<void> {
      await finish();
      const verdict = verdictOf(rec);
      const first = await slots.change(rec.name, (cur) => {
        const v = verdict(cur);
        const old = cur.kind === "ok" ? cur.record : cur.kind === "absent" ? cur.last : undefined;
        return { value: v, dropChunks: !v && !!old && old.chunks > 0 };
      });
      open = { rec, verdict: first };
      for (let n = 1; n <= inline.length && open; n++) await chunk(n, inline[n - 1]);
      if (open && (rec.chunks <= inline.length || rec.state === "cleared")) await finish(); // no chunk line follows
    },
    chunk,
    finish,
  };
}
