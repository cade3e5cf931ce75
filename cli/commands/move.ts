// `a2a export` and `a2a import`: a whole store as JSON lines, and loaded into a store of either
// engine (lib/move/; the format is docs/PROTOCOL.md "Export and import").

import { statSync } from "node:fs";
import type { Command } from "commander";
import { openUserFile } from "../../lib/core/user-file";
import { A2AError } from "../../lib/core/errors";
import type { ImportReport } from "../../lib/move/import";
import { err, isTTY, json, out } from "../io";
import { action, command, type Ctx } from "../run";

const FLUSH_BYTES = 256 * 1024;

const NOUNS: Record<string, string> = {
  blob_part: "blob part", blob: "blob", slot: "slot", slot_chunk: "stream chunk", inbox: "inbox", message: "message", policy: "policy", topic_message: "topic message",
  subscriber: "subscriber", task: "task", lease: "lease", names: "remembered names",
};

// Where the export goes: stdout, or FILE by way of a temp file beside it renamed over it once
// whole (lib/fs/atomic.ts openUserFile), so a cut-short export never stands where a whole one stood.
function sink(file: string | undefined) {
  let buf: string[] = [];
  let size = 0;
  // The output's failure is about FILE, never the store: say so.
  const onFile = <T>(step: () => T): T => {
    try {
      return step();
    } catch (e) {
      const errno = e instanceof A2AError ? e.data.errno : undefined;
      throw new A2AError("EIO", `writing the export to ${file} failed (${errno ?? "error"}): give -o a file in a directory that exists and you may write to, with room for it (the store is fine)`, { data: { file, errno } });
    }
  };
  const f = file === undefined ? undefined : onFile(() => openUserFile(file));
  const flush = () => {
    const text = buf.join("");
    buf = [];
    size = 0;
    if (f) onFile(() => f.write(text));
    else out(text);
  };
  return {
    write(line: string) {
      buf.push(line);
      size += line.length;
      if (size >= FLUSH_BYTES) flush();
    },
    finish() {
      flush();
      if (f) onFile(() => f.commit());
    },
    abandon: () => f?.abandon(),
  };
}

function importLine(r: ImportReport): string {
  const total = (v: "imported" | "already" | "kept") => Object.values(r.counts).reduce((n, c) => n + c[v], 0);
  const rows = Object.entries(r.counts)
    .filter(([, c]) => c.imported + c.already + c.kept > 0)
    .map(([k, c]) => `  ${NOUNS[k].padEnd(17)} imported ${c.imported}, already there ${c.already}${c.kept ? `, kept ${c.kept} (the store's differs)` : ""}`);
  return [`imported ${total("imported")} of ${r.records} records from a ${r.from} store's export; already there ${total("already")}, kept ${total("kept")}`, ...rows].join("\n") + "\n";
}

// Records kept are a conflict (exit 4) told after the report: the store's own record under a
// name the export also uses, which the import did not replace.
function keptError(r: ImportReport): A2AError | undefined {
  const n = Object.values(r.counts).reduce((a, c) => a + c.kept, 0);
  if (n === 0) return undefined;
  const named = r.kept.map((k) => `${NOUNS[k.kind]} ${k.name}`).join(", ") + (n > r.kept.length ? `, and ${n - r.kept.length} more` : "");
  return new A2AError(
    "ECONFLICT",
    `kept ${n} record${n === 1 ? "" : "s"} of this store that differ from the export's under the same name (${named}): nothing of the store's was replaced; compare them, and only where the store's is an older copy of the export's, import again with --replace-older`,
    { data: { kept: n, records: r.kept } },
  );
}

export const commands = {
  export: (p: Command) =>
    command(p, "export", {
      summary: "write the whole store as JSON lines (to move a bus to another store, or as a backup)",
      description: "Write the whole store as JSON lines to stdout, or to FILE with -o (written beside it, then renamed over it once whole): blobs (files handed over as attachments, each checked against its digest), slots with their versions and the chunks of their current run, inboxes with every message and its place (unread, read, held; a claim in flight counts as unread) and their policies, topics with their messages in order and the named subscribers' positions, tasks with their versions, states, attempts, dependencies and add keys, leases with their holder, fencing token (version) and expiry, and the agent names remembered per host and directory. Not moved: live peers (they announce themselves again), session records, the keys of mail sends, the keys of task claims, messages set aside as damaged, and who wrote each record (the importing store vouches for its own writer). `a2a import` loads it into a store of either engine. The format is docs/PROTOCOL.md \"Export and import\".",
      examples: ["a2a export -o bus.jsonl", "a2a export --dir ~/.a2a | a2a import --dir postgres://alice@db.example/team"],
      json: "with -o, print the counts per kind as JSON (the export itself is JSON lines either way)",
    })
      .option("-o, --output <file>", "write to FILE instead of stdout")
      .action(action(async (c: Ctx, o) => {
        const to = sink(o.output);
        let report;
        try {
          report = await c.bus.move.exportStore((line) => to.write(line));
          to.finish();
        } catch (e) {
          to.abandon();
          throw e;
        }
        if (report.damaged) err(`a2a: warning: passed over ${report.damaged} damaged record(s) that fail their checks (a2a doctor names them)\n`);
        if (o.output) {
          const n = Object.values(report.counts).reduce((a, b) => a + b, 0);
          c.confirm(report, `exported ${n} records to ${o.output}: ${Object.entries(report.counts).filter(([, v]) => v).map(([k, v]) => `${v} ${NOUNS[k]}`).join(", ") || "an empty store"}`);
        }
      })),

  import: (p: Command) =>
    command(p, "import", {
      summary: "load an a2a export into this store (either engine); importing twice changes nothing",
      description: "Load an export (a2a export) from FILE, or from stdin with - or no FILE, into the store (--dir, else $A2A_DIR): a directory or postgres://. Every record keeps its identity: slots, tasks and leases their versions, messages their ids and places, topic messages their numbers, subscribers their positions. A record already there is skipped and counted (already there). A record of the store's own under a name the export also uses (another slot, lease or policy of that name, another position, a topic number holding another message) is never replaced: it is kept, named, and the import ends with exit 4 once the rest is in; --replace-older lets the export's record replace an older version of it (a lower version, a position behind, a policy changed earlier), never a newer one. Importing the same export again changes nothing. A FILE is checked whole before anything is written: a damaged one writes nothing. From stdin each line is checked before it is written, and a damaged line stops the import there, naming it; the records before it are whole, and importing a whole export again completes it (as it completes an import that was killed). Imported mail and topic messages are written by you, as this store vouches.",
      examples: ["a2a export --dir ~/.a2a -o bus.jsonl && a2a import bus.jsonl --dir postgres://alice@db.example/team", "a2a import - --json < bus.jsonl"],
      json: "print {from, records, counts: {KIND: {imported, already, kept}}, kept: [{kind, name}]} as JSON (the first 50 kept)",
    })
      .argument("[file]", "the export to load; - or none: stdin")
      .option("--replace-older", "replace the store's record where it is an older version of the export's (for a store that is a copy of the export's source)")
      .action(action(async (c: Ctx, file: string | undefined, o: { replaceOlder?: boolean }) => {
        const input = file === undefined || file === "-" ? fromStdin() : fromFile(file);
        const r = await c.bus.move.importStore(input, { replaceOlder: o.replaceOlder === true });
        out(c.json ? json(r) : importLine(r));
        const kept = keptError(r);
        if (kept) throw kept;
      })),
};

function fromStdin() {
  if (isTTY(0)) throw new A2AError("EUSAGE", "a2a import reads an export from FILE or stdin, and stdin is a terminal: give FILE, or pipe an export in (a2a export | a2a import --dir ...)");
  return { open: () => Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>, again: false };
}

function fromFile(file: string) {
  let st;
  try {
    st = statSync(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new A2AError("EUSAGE", `there is no file ${file}: give the path of an export (a2a export -o FILE writes one)`, { data: { file } });
    throw new A2AError("EIO", `cannot read ${file} (${code ?? "error"}): check its permissions, or pipe it in`, { data: { file, errno: code } });
  }
  if (!st.isFile()) throw new A2AError("EUSAGE", `${file} is not a file: give the path of an export (a2a export -o FILE writes one)`, { data: { file } });
  return { open: () => Bun.file(file).stream() as unknown as AsyncIterable<Uint8Array>, again: true };
}
