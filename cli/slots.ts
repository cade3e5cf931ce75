// The slot commands: start, publish, wait, append, tail, status, clear, gc, watch.
// Each is parse -> one lib/ call -> format; errors are thrown as A2AError to cli/main.ts.

import type { Command } from "commander";
import { fstatSync } from "node:fs";
import { A2AError, arg, op, text } from "../lib/core/errors";
import { settle } from "./outcome";
import { appendChunk, clearAll, clearSlot, listSlots, publishSlot, startSlot } from "../lib/slots/slot";
import { gcStore } from "../lib/gc";
import { waitSlots } from "../lib/slots/wait";
import { tailSlot } from "../lib/slots/tail";
import { watchSlots } from "../lib/slots/events";
import { closeWatches } from "../lib/core/watch";
import type { SlotRecord } from "../lib/slots/record";
import { ctx } from "./context";
import { closeStdout, json, out, parseCount, parseDuration, payload } from "./io";
import { age, isoTime, preview, size, table } from "./format";

const examples = (lines: string[]) => "\nExamples:\n" + lines.map((l) => "  $ " + l).join("\n") + "\n";

// Ends a blocking command the fast way: output first, EOF to the reader, then teardown.
function finishWaiting(c: { store: Parameters<typeof closeWatches>[0] }, text: string): void {
  out(text);
  closeStdout();
  closeWatches(c.store);
}

export function registerSlotCommands(program: Command): void {
  program
    .command("start")
    .summary("announce that work on NAME has begun")
    .description("Announce that work on NAME has begun. A published slot goes back to running (its streamed chunks are dropped).")
    .argument("<name>", "slot name")
    .argument("[task]", "what the work is, shown by status", "")
    .option("--ttl <duration>", "expire the record after this long (e.g. 30m, 2h)")
    .option("--json", "print the record as JSON")
    .addHelpText("after", examples(['a2a start researcher "scraping competitor prices"', "a2a start build --ttl 2h"]))
    .action(async (name: string, task: string, o, cmd: Command) => {
      const c = ctx(cmd);
      const rec = await startSlot(c.store, name, task, { ttlSec: o.ttl === undefined ? undefined : parseDuration(o.ttl, "--ttl") });
      out(c.json ? json(rec) : `started ${rec.name} (version ${rec.version})\n`);
    });

  program
    .command("publish")
    .summary("publish RESULT on NAME, waking every waiter")
    .description("Publish RESULT on NAME, waking every waiter. RESULT '-' or a piped stdin reads stdin; any UTF-8 text, passed through byte for byte.")
    .argument("<name>", "slot name")
    .argument("[result]", "the result text, or '-' for stdin")
    .option("--file <path>", "read the result from a file")
    .option("--ttl <duration>", "expire the record after this long")
    .option("--if-version <n>", "publish only if the slot is still at version N (0 = absent); else exit 4")
    .option("--json", "print the record as JSON")
    .addHelpText("after", examples([
      'a2a publish researcher "42 prices found"',
      "jq . report.json | a2a publish researcher",
      "a2a publish config --if-version 3 --file config.json",
    ]))
    .action(async (name: string, result: string | undefined, o, cmd: Command) => {
      const c = ctx(cmd);
      const text = payload(result, o.file, c.store.maxBytes, "the result");
      const rec = await publishSlot(c.store, name, text, {
        ttlSec: o.ttl === undefined ? undefined : parseDuration(o.ttl, "--ttl"),
        ifVersion: o.ifVersion === undefined ? undefined : parseCount(o.ifVersion, "--if-version"),
      });
      out(c.json ? json(rec) : `published ${rec.name} (version ${rec.version}, ${size(rec.size)})\n`);
    });

  program
    .command("wait")
    .summary("block until NAME (or several) is published and print the result")
    .description(
      "Block until every NAME is published (--any: the first), then print. One NAME prints the raw result, so x=$(a2a wait researcher) works; several print each under a '==> NAME <==' header. Returns at once if already published. Exit 124 on timeout.",
    )
    .argument("<names...>", "slot names")
    .option("--timeout <seconds>", "give up after this long (exit 124); default: wait forever")
    .option("--any", "return when the first of the names is published")
    .option("--after-version <n>", "only count a publish newer than version N (one you have already seen)")
    .option("--json", "print the record (one name) or an object of records keyed by name")
    .addHelpText("after", examples([
      "summary=$(a2a wait researcher)",
      "a2a wait scraper parser indexer --timeout 10m",
      "a2a wait a b c --any --json",
      "a2a wait config --after-version 3",
    ]))
    .action(async (names: string[], o, cmd: Command) => {
      const c = ctx(cmd);
      const unique = [...new Set(names)];
      const outcome = await waitSlots(c.store, unique, {
        any: !!o.any,
        afterVersion: o.afterVersion === undefined ? undefined : parseCount(o.afterVersion, "--after-version"),
        timeoutMs: o.timeout === undefined ? undefined : parseDuration(o.timeout, "--timeout") * 1000,
      });
      // A signal (Ctrl-C) ends the process the default way, exit 128+N: never mistaken for 124.
      const found = settle(outcome, (pending) =>
        text`timed out waiting for ${pending.join(", ")}: nothing published in time; raise ${arg("timeout")} or check the producer (${op("status", pending[0])})`,
      );
      finishWaiting(c, renderWait(unique, found!, c.json));
    });

  program
    .command("append")
    .summary("stream a chunk of partial output into running slot NAME")
    .argument("<name>", "slot name")
    .argument("[chunk]", "the text, or '-' for stdin")
    .option("--file <path>", "read the chunk from a file")
    .option("--json", "print the record as JSON")
    .addHelpText("after", examples(['a2a append researcher "page 3 of 10 done\\n"', "make 2>&1 | a2a append build -"]))
    .action(async (name: string, chunk: string | undefined, o, cmd: Command) => {
      const c = ctx(cmd);
      const rec = await appendChunk(c.store, name, payload(chunk, o.file, c.store.maxBytes, "the chunk"));
      out(c.json ? json(rec) : `appended chunk ${rec.chunks} to ${rec.name}\n`);
    });

  program
    .command("tail")
    .summary("print the streamed chunks of NAME (--follow: until it is published)")
    .argument("<name>", "slot name")
    .option("-f, --follow", "keep printing chunks as they land; exit when the slot is published")
    .option("--after <n>", "skip the first N chunks")
    .option("--timeout <seconds>", "with --follow, give up after this long (exit 124)")
    .option("--json", "one JSON object per chunk: {name, n, text}")
    .addHelpText("after", examples(["a2a tail researcher", "a2a tail build --follow"]))
    .action(async (name: string, o, cmd: Command) => {
      const c = ctx(cmd);
      const print = (text: string, n: number) => out(c.json ? json({ name, n, text }) : text);
      const outcome = await tailSlot(
        c.store,
        name,
        {
          after: o.after === undefined ? 0 : parseCount(o.after, "--after"),
          follow: !!o.follow,
          timeoutMs: o.timeout === undefined ? undefined : parseDuration(o.timeout, "--timeout") * 1000,
        },
        print,
      );
      const res = settle(outcome, () => text`timed out following ${name}: it was not published in time; raise ${arg("timeout")}`);
      if (res?.state === "absent" && !o.follow) throw new A2AError("ENOTFOUND", text`no slot named ${name}: check the name (${op("status")})`);
      finishWaiting(c, "");
    });

  program
    .command("status")
    .summary("list slots, newest first")
    .argument("[names...]", "only these slots")
    .option("--json", "full records as a JSON array")
    .addHelpText("after", examples(["a2a status", "a2a status researcher --json"]))
    .action(async (names: string[], _o, cmd: Command) => {
      const c = ctx(cmd);
      const { records, skipped } = await listSlots(c.store, names.length ? names : undefined);
      for (const s of skipped) process.stderr.write(`a2a: warning: slots/${s}.json is not a valid record; skipped (a2a clear ${s} removes it)\n`);
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
    });

  program
    .command("clear")
    .summary("remove slots (and their streamed chunks)")
    .argument("[names...]", "slot names")
    .option("--all", "remove every slot")
    .option("--json", "print {cleared, missing} as JSON")
    .addHelpText("after", examples(["a2a clear researcher", "a2a clear --all"]))
    .action(async (names: string[], o, cmd: Command) => {
      const c = ctx(cmd);
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
    });

  program
    .command("gc")
    .summary("sweep expired slots, stale temp files, orphaned chunks, stale locks, and dead readers' claims")
    .option("--json", "print the report as JSON")
    .addHelpText("after", examples(["a2a gc", "a2a gc --json"]))
    .action(async (_o, cmd: Command) => {
      const c = ctx(cmd);
      const r = await gcStore(c.store);
      out(c.json ? json(r) : `swept ${r.expired.length} expired slot(s); removed ${r.tombstones} old tombstone(s), ${r.temp_files} temp file(s), ${r.orphan_streams.length} orphaned stream(s), ${r.stale_locks.length} stale lock(s); returned ${r.claims_recovered} abandoned message claim(s) to unread\n`);
    });

  program
    .command("watch")
    .summary("print one line per slot event (started, appended, published, cleared) until interrupted")
    .argument("[names...]", "only these slots (default: all)")
    .option("--timeout <seconds>", "stop after this long (exit 0)")
    .option("--json", "one JSON object per line")
    .addHelpText("after", examples(["a2a watch", "a2a watch researcher writer --json | while read -r ev; do ...; done"]))
    .action(async (names: string[], o, cmd: Command) => {
      const c = ctx(cmd);
      await watchSlots(
        c.store,
        names,
        (e) => {
          if (c.json) return out(json(e));
          const what = e.event === "published" ? ` (${size(e.size ?? 0)}) ${preview(e.preview ?? "", 50)}`
            : e.event === "appended" ? ` chunk ${e.chunks}`
            : e.event === "started" && e.task ? ` ${preview(e.task, 50)}` : "";
          out(`${isoTime(e.at)} ${e.event} ${e.name} v${e.version}${what}\n`);
        },
        {
          timeoutMs: o.timeout === undefined ? undefined : parseDuration(o.timeout, "--timeout") * 1000,
        },
      );
      finishWaiting(c, "");
    });
}

function renderWait(names: string[], found: Map<string, SlotRecord>, asJson: boolean): string {
  if (asJson) {
    // Keys in the order asked (found holds them in the order they were published).
    return names.length === 1 ? json(found.get(names[0])) : json(Object.fromEntries(names.filter((n) => found.has(n)).map((n) => [n, found.get(n)])));
  }
  if (names.length === 1) {
    const text = found.get(names[0])!.result ?? "";
    // Byte for byte into pipes; a newline for a person at a terminal.
    return fstatSync(1).isCharacterDevice() && !text.endsWith("\n") ? text + "\n" : text;
  }
  return names
    .filter((n) => found.has(n))
    .map((n) => {
      const text = found.get(n)!.result ?? "";
      return `==> ${n} <==\n${text}${text.endsWith("\n") ? "" : "\n"}`;
    })
    .join("\n");
}
