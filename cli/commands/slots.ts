// The slot commands: start, publish, wait, append, tail, status, clear, watch. Each is
// parse -> one lib/slots call -> format; how a command ends (output, exit status, signals)
// is cli/run.ts's, errors go as A2AError to cli/main.ts.

import type { Command } from "commander";
import { fstatSync } from "node:fs";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import { watchSlots } from "../../lib/slots/events";
import type { SlotRecord } from "../../lib/slots/record";
import { appendChunk, clearAll, clearSlot, listSlots, publishSlot, startSlot } from "../../lib/slots/slot";
import { tailSlot } from "../../lib/slots/tail";
import { waitSlots } from "../../lib/slots/wait";
import { age, preview, size, table } from "../format";
import { durationMs, durationSec, err, json, out, parseCount, payload } from "../io";
import { action, command, end, type Ctx } from "../run";

const count = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseCount(v, flag));

export const commands = {
  start: (p: Command) =>
    command(p, "start", {
      summary: "announce that work on NAME has begun",
      description: "Announce that work on NAME has begun: status shows it running with TASK, and `a2a tail` can follow what `a2a append` streams into it. A published slot goes back to running (its streamed chunks are dropped); waiters keep waiting for the next publish. With --exclusive, a slot that is running (and not expired) is refused with exit 4 naming its holder, so two agents cannot both believe they own NAME.",
      examples: ['a2a start researcher "scraping competitor prices"', "a2a start build --ttl 2h", "a2a start deploy --exclusive || echo 'someone else is deploying'"],
      json: "print the record as JSON",
    })
      .argument("<name>", "slot name")
      .argument("[task]", "what the work is, shown by status", "")
      .option("--ttl <duration>", "expire the record after this long (e.g. 30m, 2h)")
      .option("--exclusive", "refuse (exit 4) if NAME is running and not expired")
      .action(action(async (c: Ctx, name: string, task: string, o) => {
        const rec = await startSlot(c.store, name, task, { ttlSec: durationSec(o.ttl, "--ttl"), exclusive: !!o.exclusive });
        out(c.json ? json(rec) : `started ${rec.name} (version ${rec.version})\n`);
      })),

  publish: (p: Command) =>
    command(p, "publish", {
      summary: "publish RESULT on NAME, waking every waiter",
      description: "Publish RESULT on NAME, waking every waiter. RESULT '-' or a piped stdin reads stdin; any UTF-8 text, passed through byte for byte. Each publish raises the slot's version; --if-version makes it a compare-and-set (exit 4 if someone else published first).",
      examples: ['a2a publish researcher "42 prices found"', "jq . report.json | a2a publish researcher", "a2a publish config --if-version 3 --file config.json"],
      json: "print the record as JSON",
    })
      .argument("<name>", "slot name")
      .argument("[result]", "the result text, or '-' for stdin")
      .option("--file <path>", "read the result from a file")
      .option("--ttl <duration>", "expire the record after this long")
      .option("--if-version <n>", "publish only if the slot is still at version N (0 = absent); else exit 4")
      .action(action(async (c: Ctx, name: string, result: string | undefined, o) => {
        const body = payload(result, o.file, c.store.maxBytes, "the result");
        const rec = await publishSlot(c.store, name, body, { ttlSec: durationSec(o.ttl, "--ttl"), ifVersion: count(o.ifVersion, "--if-version") });
        out(c.json ? json(rec) : `published ${rec.name} (version ${rec.version}, ${size(rec.size)})\n`);
      })),

  wait: (p: Command) =>
    command(p, "wait", {
      summary: "block until NAME (or several) is published and print the result",
      description:
        "Block until every NAME is published (--any: the first), then print. One NAME prints the raw result, so x=$(a2a wait researcher) works; several print each under a '==> NAME <==' header. Returns at once if already published. Exit 124 on timeout, 128+N when stopped by a signal (130 for Ctrl-C).",
      examples: ["summary=$(a2a wait researcher)", "a2a wait scraper parser indexer --timeout 10m", "a2a wait a b c --any --json", "a2a wait config --after-version 3"],
      json: "print the record (one name) or an object of records keyed by name",
    })
      .argument("<names...>", "slot names")
      .option("--timeout <seconds>", "give up after this long (exit 124); default: wait forever")
      .option("--any", "return when the first of the names is published")
      .option("--after-version <n>", "only count a publish newer than version N (one you have already seen)")
      .action(action(async (c: Ctx, names: string[], o) => {
        const unique = [...new Set(names)];
        const outcome = await waitSlots(c.store, unique, {
          any: !!o.any,
          afterVersion: count(o.afterVersion, "--after-version"),
          timeoutMs: durationMs(o.timeout, "--timeout"),
          signal: c.signal(),
        });
        const found = end(c, outcome, {
          timeout: (pending) => text`timed out waiting for ${pending.join(", ")}: nothing published in time; raise ${arg("timeout")} or check the producer (${op("status", pending[0])})`,
        });
        out(renderWait(unique, found, c.json));
      })),

  append: (p: Command) =>
    command(p, "append", {
      summary: "stream a chunk of partial output into running slot NAME",
      description: "Add CHUNK to the streamed output of slot NAME for `a2a tail NAME --follow` to print as it lands; a slot that does not exist yet starts running, a published one refuses (exit 4: `a2a start NAME` begins a new run). CHUNK '-' or a piped stdin reads stdin; the text is stored as given, so end it with a newline if lines are wanted.",
      examples: ["a2a append researcher $'page 3 of 10 done\\n'", "make 2>&1 | a2a append build -"],
      json: "print the record as JSON",
    })
      .argument("<name>", "slot name")
      .argument("[chunk]", "the text, or '-' for stdin")
      .option("--file <path>", "read the chunk from a file")
      .action(action(async (c: Ctx, name: string, chunk: string | undefined, o) => {
        const rec = await appendChunk(c.store, name, payload(chunk, o.file, c.store.maxBytes, "the chunk"));
        out(c.json ? json(rec) : `appended chunk ${rec.chunks} to ${rec.name}\n`);
      })),

  tail: (p: Command) =>
    command(p, "tail", {
      summary: "print the streamed chunks of NAME (--follow: until it is published)",
      description: "Print the chunks streamed into NAME by `a2a append`, in order. With --follow, keep printing as chunks land and exit 0 once the slot is published and every chunk is out; a new start follows the new run from its first chunk. Exit 3 if there is no such slot (without --follow), 124 on --timeout, 128+N on a signal.",
      examples: ["a2a tail researcher", "a2a tail build --follow", "a2a tail build --after 10 --json"],
      json: "one JSON object per chunk: {name, n, text}",
    })
      .argument("<name>", "slot name")
      .option("-f, --follow", "keep printing chunks as they land; exit when the slot is published")
      .option("--after <n>", "skip the first N chunks")
      .option("--timeout <seconds>", "with --follow, give up after this long (exit 124)")
      .action(action(async (c: Ctx, name: string, o) => {
        const print = (chunk: string, n: number) => out(c.json ? json({ name, n, text: chunk }) : chunk);
        const opts = { after: count(o.after, "--after") ?? 0, follow: !!o.follow, timeoutMs: durationMs(o.timeout, "--timeout") };
        const outcome = await tailSlot(c.store, name, { ...opts, signal: o.follow ? c.signal() : undefined }, print);
        const res = end(c, outcome, { timeout: () => text`timed out following ${name}: it was not published in time; raise ${arg("timeout")}` });
        if (res.state === "absent") throw new A2AError("ENOTFOUND", text`no slot named ${name}: check the name (${op("status")})`);
      })),

  status: (p: Command) =>
    command(p, "status", {
      summary: "list slots, newest first",
      description: "List slots, newest first: state (running, with its chunk count, or done), task, age, size and a preview of the result. Exit 3 if named slots do not exist. A record that is not valid is skipped with a warning on stderr.",
      examples: ["a2a status", "a2a status researcher --json"],
      json: "full records as a JSON array",
    })
      .argument("[names...]", "only these slots")
      .action(action(async (c: Ctx, names: string[]) => {
        const { records, skipped } = await listSlots(c.store, names.length ? names : undefined);
        for (const s of skipped) err(`a2a: warning: slots/${s}.json is not a valid record; skipped (a2a clear ${s} removes it)\n`);
        if (names.length && records.length === 0) {
          if (c.json) out(json(records));
          throw new A2AError("ENOTFOUND", `no slot named ${names.join(", ")}: check the name (a2a status lists all)`);
        }
        if (c.json) return out(json(records));
        if (records.length === 0) return out("no slots yet: a2a start NAME or a2a publish NAME RESULT creates one\n");
        out(table(
          ["NAME", "STATE", "TASK", "AGE", "SIZE", "PREVIEW"],
          records.map((r) => [
            r.name,
            r.state === "done" ? "done" : r.chunks ? `running(${r.chunks})` : "running",
            preview(r.task, 30),
            age(r.updated_at),
            r.state === "done" ? size(r.size) : "-",
            preview(r.result ?? "", 40),
          ]),
        ));
      })),

  clear: (p: Command) =>
    command(p, "clear", {
      summary: "remove slots (and their streamed chunks)",
      description: "Remove the named slots, or every slot with --all, with their streamed chunks. A waiter keeps waiting for the next publish. Exit 3 if a named slot does not exist (the others are still removed).",
      examples: ["a2a clear researcher", "a2a clear --all"],
      json: "print {cleared, missing} as JSON",
    })
      .argument("[names...]", "slot names")
      .option("--all", "remove every slot")
      .action(action(async (c: Ctx, names: string[], o) => {
        if (o.all && names.length) throw new A2AError("EUSAGE", "both --all and names given: use one");
        if (!o.all && !names.length) throw new A2AError("EUSAGE", "nothing to clear: name the slots, or pass --all");
        let cleared: string[];
        const missing: string[] = [];
        if (o.all) cleared = await clearAll(c.store);
        else {
          cleared = [];
          for (const n of names) ((await clearSlot(c.store, n)) ? cleared : missing).push(n);
        }
        out(c.json ? json({ cleared, missing }) : cleared.length ? `cleared ${cleared.join(", ")}\n` : "");
        if (missing.length) throw new A2AError("ENOTFOUND", `no slot named ${missing.join(", ")}: nothing to clear (a2a status lists slots)`);
      })),

  watch: (p: Command) =>
    command(p, "watch", {
      summary: "print one line per slot event (started, appended, published, cleared) until interrupted",
      description: "Print one line per slot event (started, appended, published, cleared) as it happens, for all slots or the named ones; slots as they are when it starts are not reported. Runs until stopped (128+N on a signal) or for --timeout, a run length: reaching it is a normal end, exit 0.",
      examples: ["a2a watch", "a2a watch researcher writer --json | while read -r ev; do ...; done", "a2a watch --timeout 10m"],
      json: "one JSON object per line",
    })
      .argument("[names...]", "only these slots (default: all)")
      .option("--timeout <seconds>", "stop after this long (exit 0)")
      .action(action(async (c: Ctx, names: string[], o) => {
        const outcome = await watchSlots(
          c.store,
          names,
          (e) => {
            if (c.json) return out(json(e));
            const what = e.event === "published" ? ` (${size(e.size ?? 0)}) ${preview(e.preview ?? "", 50)}`
              : e.event === "appended" ? ` chunk ${e.chunks}`
              : e.event === "started" && e.task ? ` ${preview(e.task, 50)}` : "";
            out(`${isoTime(e.at)} ${e.event} ${e.name} v${e.version}${what}\n`);
          },
          { timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() },
        );
        end(c, outcome, { timeout: "ok" });
      })),
};

function renderWait(names: string[], found: Map<string, SlotRecord>, asJson: boolean): string {
  if (asJson) {
    // Keys in the order asked (found holds them in the order they were published).
    return names.length === 1 ? json(found.get(names[0])) : json(Object.fromEntries(names.filter((n) => found.has(n)).map((n) => [n, found.get(n)])));
  }
  if (names.length === 1) {
    const result = found.get(names[0])!.result ?? "";
    // Byte for byte into pipes; a newline for a person at a terminal.
    return fstatSync(1).isCharacterDevice() && !result.endsWith("\n") ? result + "\n" : result;
  }
  return names
    .filter((n) => found.has(n))
    .map((n) => {
      const result = found.get(n)!.result ?? "";
      return `==> ${n} <==\n${result}${result.endsWith("\n") ? "" : "\n"}`;
    })
    .join("\n");
}
