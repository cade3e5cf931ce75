// The slot commands: start, publish, wait, append, tail, status, clear, watch. Each is
// parse -> one lib/slots call -> format; how a command ends (output, exit status, signals)
// is cli/run.ts's, errors go as A2AError to cli/main.ts.

import { attachFiles, collect } from "../attach";
import type { Command } from "commander";
import { fstatSync } from "node:fs";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import type { SlotRecord } from "../../lib/slots/record";
import type { Bus } from "../../lib/bus";
import { liveLine } from "../progress";
import { preview, size } from "../format";
import { columns, durationMs, durationSec, err, json, out, parseCount, payload } from "../io";
import { action, command, end, type Ctx } from "../run";
import { shellWait } from "../shell-wait";
import { appendLines } from "../append-lines";
import { statusTable } from "../format";

const count = (v: string | undefined, flag: string) => (v === undefined ? undefined : parseCount(v, flag));

export const commands = {
  start: (p: Command) =>
    command(p, "start", {
      summary: "announce that work on NAME has begun",
      description: "Announce that work on NAME has begun: status shows it running with TASK, and `a2a tail` can follow what `a2a append` streams into it. A published slot goes back to running (its streamed chunks are dropped); waiters keep waiting for the next publish. With --exclusive, a slot that is running (and not expired) is refused with exit 4 naming its holder, so two agents cannot both believe they own NAME.",
      examples: ['a2a start researcher "scraping competitor prices"', "a2a start build --ttl 2h", "a2a start deploy --exclusive || echo 'someone else is deploying'"],
      json: "print the record as JSON",
      quiet: true,
    })
      .argument("<name>", "slot name")
      .argument("[task]", "what the work is, shown by status", "")
      .option("--ttl <duration>", "expire the record after this long (e.g. 30m, 2h)")
      .option("--exclusive", "refuse (exit 4) if NAME is running and not expired")
      .action(action(async (c: Ctx, name: string, task: string, o) => {
        const rec = await c.bus.slots.start(name, task, { ttlSec: durationSec(o.ttl, "--ttl"), exclusive: !!o.exclusive });
        c.confirm(rec, `started ${rec.name} (version ${rec.version})`);
      })),

  publish: (p: Command) =>
    command(p, "publish", {
      summary: "publish RESULT on NAME, waking every waiter",
      description: "Publish RESULT on NAME, waking every waiter. RESULT '-' or a piped stdin reads stdin; any UTF-8 text, passed through byte for byte. Each publish raises the slot's version; --if-version makes it a compare-and-set (exit 4 if someone else published first).",
      examples: ['a2a publish researcher "42 prices found"', "jq . report.json | a2a publish researcher", "a2a publish config --if-version 3 --file config.json", 'a2a publish screenshots "the login page" --attach login.png', 'a2a publish lock "mine" --if-version 0 -q   # create only: exit 4 if it exists'],
      json: "print the record as JSON",
      quiet: true,
    })
      .argument("<name>", "slot name")
      .argument("[result]", "the result text, or '-' for stdin")
      .option("--file <path>", "read the result from a file")
      .option("--ttl <duration>", "expire the record after this long")
      .option("--if-version <n>", "publish only if the slot is still at version N (0 = absent); else exit 4")
      .option("--attach <file>", "store FILE (any size) and publish it with the result; repeat for more", collect)
      .action(action(async (c: Ctx, name: string, result: string | undefined, o) => {
        const body = payload(result, o.file, c.bus.settings.maxBytes, "the result");
        const rec = await c.bus.slots.publish(name, body, { ttlSec: durationSec(o.ttl, "--ttl"), ifVersion: count(o.ifVersion, "--if-version"), attach: await attachFiles(c.bus, o.attach) });
        c.confirm(rec, `published ${rec.name} (version ${rec.version}, ${size(rec.size)})`);
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
        const line = await liveLine(async () => `waiting for ${(await Promise.all(unique.map((n) => slotState(c.bus, n)))).join(", ")}`);
        const opts = { any: !!o.any, afterVersion: count(o.afterVersion, "--after-version"), timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() };
        const outcome = await shellWait(c, undefined, unique.length === 1 ? `slot ${unique[0]}` : `${o.any ? "any of" : "all of"} slots ${unique.join(", ")}`, () => c.bus.slots.wait(unique, opts)).finally(line.stop);
        // Waiting before the publisher starts is the usual case: a name close to another is
        // only worth a word once the wait has run out.
        const meant: string[] = [];
        if (outcome.kind === "timeout") for (const n of outcome.pending) {
          const m = await c.bus.slots.similar(n);
          if (m) meant.push(`no slot named ${n} has ever been written: did you mean ${m}?`);
        }
        const found = end(c, outcome, {
          timeout: (pending) => [...text`timed out waiting for ${pending.join(", ")}: nothing published in time; raise ${arg("timeout")} or check the producer (${op("status", pending[0])})`, ...(meant.length ? [`; ${meant.join("; ")}`] : [])],
        });
        out(renderWait(unique, found, c.json));
        // The result stays byte for byte on stdout; what came with it is said on stderr.
        if (!c.json && !c.quiet) for (const [n, r] of found) for (const a of r.attachments ?? []) err(`a2a: ${n} has an attachment ${JSON.stringify(a.name)} (${a.size} bytes, ${a.type}): a2a get ${a.digest} -o FILE\n`);
      })),

  append: (p: Command) =>
    command(p, "append", {
      summary: "stream a chunk of partial output into running slot NAME",
      description: "Add CHUNK to the streamed output of slot NAME for `a2a tail NAME --follow` to print as it lands; a slot that does not exist yet starts running, a published one refuses (exit 4: `a2a start NAME` begins a new run). CHUNK '-' or a piped stdin reads all of stdin as one chunk; the text is stored as given, so end it with a newline if lines are wanted. With --lines, one process streams stdin as it comes (the lines that arrived together as one chunk, so a lone line lands at once and a flood costs one append per burst; or a chunk per --flush interval), and exits when stdin ends: `make 2>&1 | a2a append build --lines`.",
      examples: ["a2a append researcher $'page 3 of 10 done\\n'", "make 2>&1 | a2a append build --lines", "./crawl.sh | a2a append crawl --lines --flush 200ms", "a2a append build --file step1.log"],
      json: "print the record as JSON (with --lines: the last one)",
      quiet: true,
    })
      .argument("<name>", "slot name")
      .argument("[chunk]", "the text, or '-' for stdin")
      .option("--file <path>", "read the chunk from a file")
      .option("--lines", "read stdin as it comes: the lines that arrived together as one chunk, until stdin ends")
      .option("--flush <duration>", "with --lines: gather the lines of each interval into one chunk (e.g. 50ms, 1s)")
      .action(action(async (c: Ctx, name: string, chunk: string | undefined, o) => {
        if (o.flush !== undefined && !o.lines) throw new A2AError("EUSAGE", "--flush applies to --lines only: add --lines or drop --flush");
        const meant = await c.bus.slots.similar(name);
        if (meant) err(`a2a: warning: no slot named ${name}, so this starts one; did you mean ${meant}?\n`);
        if (o.lines) {
          if (chunk !== undefined && chunk !== "-") throw new A2AError("EUSAGE", "both a chunk argument and --lines given: --lines reads stdin; pipe the text in or drop --lines");
          if (o.file !== undefined) throw new A2AError("EUSAGE", "both --file and --lines given: use one (--lines reads stdin: a2a append NAME --lines < FILE)");
          const r = await appendLines(c, name, durationMs(o.flush, "--flush"));
          return c.confirm(r.last ?? null, `appended ${r.count} chunk(s) to ${name}`);
        }
        const rec = await c.bus.slots.append(name, payload(chunk, o.file, c.bus.settings.maxBytes, "the chunk"));
        c.confirm(rec, `appended chunk ${rec.chunks} to ${rec.name}`);
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
        const line = o.follow ? await liveLine(async () => `following ${await slotState(c.bus, name)}`) : undefined;
        const print = (chunk: string, n: number) => {
          const text = c.json ? json({ name, n, text: chunk }) : chunk;
          line?.clear();
          out(text);
          line?.wrote(text);
        };
        const opts = { after: count(o.after, "--after") ?? 0, follow: !!o.follow, timeoutMs: durationMs(o.timeout, "--timeout") };
        const outcome = await c.bus.slots.tail(name, { ...opts, signal: o.follow ? c.signal() : undefined }, print).finally(() => line?.stop());
        const res = end(c, outcome, { timeout: () => text`timed out following ${name}: it was not published in time; raise ${arg("timeout")}` });
        if (res.state === "absent") throw new A2AError("ENOTFOUND", text`no slot named ${name}: check the name (${op("status")})`);
      })),

  status: (p: Command) =>
    command(p, "status", {
      summary: "list slots, newest first (--watch: keep the table current)",
      description: "List slots, newest first: state (running, with its chunk count, or done), task, age, size and a preview of the result. The table fits $COLUMNS or the terminal's width by shortening tasks and previews, never names. Exit 3 if named slots do not exist, unless --missing-ok (then they are just not listed: `a2a status cfg --json --missing-ok | jq '.[0].version // 0'` reads version 0 for an absent slot). A record that is not valid is skipped with a warning on stderr. With --watch, the table is redrawn in place whenever a slot changes (on a terminal; otherwise each redraw is printed after a '-- TIME --' line), until stopped (128+N on a signal) or for --timeout, a run length (exit 0).",
      examples: ["a2a status", "a2a status researcher --json", "v=$(a2a status config --json --missing-ok | jq '.[0].version // 0')", "a2a status --watch"],
      json: "full records as a JSON array, always an array, even for one name (--watch: one array per line, per change)",
    })
      .argument("[names...]", "only these slots")
      .option("--missing-ok", "a named slot that does not exist is not an error (exit 0); it is left out")
      .option("--watch", "redraw the table as slots change, until interrupted")
      .option("--timeout <seconds>", "with --watch, stop after this long (exit 0)")
      .action(action(async (c: Ctx, names: string[], o) => {
        if (o.timeout !== undefined && !o.watch) throw new A2AError("EUSAGE", "--timeout applies to --watch only: add --watch or drop --timeout");
        const only = names.length ? names : undefined;
        const shown = (records: SlotRecord[]) =>
          records.length ? statusTable(records, columns()) : names.length ? "" : "no slots yet: a2a start NAME or a2a publish NAME RESULT creates one\n";
        if (!o.watch) {
          const { records, skipped } = await c.bus.slots.list(only);
          for (const s of skipped) err(`a2a: warning: slots/${s}.json is not a valid record; skipped (a2a clear ${s} removes it)\n`);
          if (names.length && records.length === 0 && !o.missingOk) {
            if (c.json) out(json(records));
            throw new A2AError("ENOTFOUND", text`no slot named ${names.join(", ")}: check the name (${op("status")} lists all), or pass ${arg("missingOk")} to read an absent slot as version 0`);
          }
          return out(c.json ? json(records) : shown(records));
        }
        // In place on a terminal: home, the table, clear to the end (no flicker, no scrollback).
        const tty = fstatSync(1).isCharacterDevice();
        const draw = async () => {
          const { records } = await c.bus.slots.list(only);
          if (c.json) return out(json(records));
          const stamp = isoTime(Date.now() / 1000);
          out(tty ? `\x1b[H\x1b[2K${stamp}  ${records.length} slot(s)  (Ctrl-C stops)\n\x1b[2K\n${shown(records).replace(/\n/g, "\x1b[K\n")}\x1b[J` : `-- ${stamp} --\n${shown(records)}`);
        };
        if (tty && !c.json) out("\x1b[H\x1b[2J");
        await draw();
        // Redraws are serialised and coalesced: a burst of changes costs one more draw. A draw
        // that fails (stdout closed by `| head`, a store that refuses a read) ends the watch, and
        // the command ends the way that failure ends any command.
        let drawing: Promise<void> | undefined;
        let again = false;
        let failed: { error: unknown } | undefined;
        const stop = new AbortController();
        const redraw = () => {
          if (drawing) return void (again = true);
          drawing = (async () => {
            do {
              again = false;
              await draw();
            } while (again);
          })()
            .catch((error) => {
              failed ??= { error };
              stop.abort();
            })
            .finally(() => (drawing = undefined));
        };
        const signal = AbortSignal.any([c.signal(), stop.signal]);
        const outcome = await c.bus.slots.watch(names, redraw, { timeoutMs: durationMs(o.timeout, "--timeout"), signal });
        await drawing;
        if (failed) throw failed.error;
        end(c, outcome, { timeout: "ok" });
      })),

  clear: (p: Command) =>
    command(p, "clear", {
      summary: "remove slots (and their streamed chunks)",
      description: "Remove the named slots, or every slot with --all, with their streamed chunks. A waiter keeps waiting for the next publish. Exit 3 if a named slot does not exist (the others are still removed).",
      examples: ["a2a clear researcher", "a2a clear --all"],
      json: "print {cleared, missing} as JSON",
      quiet: true,
    })
      .argument("[names...]", "slot names")
      .option("--all", "remove every slot")
      .action(action(async (c: Ctx, names: string[], o) => {
        if (o.all && names.length) throw new A2AError("EUSAGE", "both --all and names given: use one");
        if (!o.all && !names.length) throw new A2AError("EUSAGE", "nothing to clear: name the slots, or pass --all");
        let cleared: string[];
        const missing: string[] = [];
        if (o.all) cleared = await c.bus.slots.clearAll();
        else {
          cleared = [];
          for (const n of names) ((await c.bus.slots.clear(n)) ? cleared : missing).push(n);
        }
        if (c.json || cleared.length) c.confirm({ cleared, missing }, `cleared ${cleared.join(", ")}`);
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
        const outcome = await c.bus.slots.watch(names,
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

// A slot as the live line shows it: "build (running: make all, 12 chunks)".
async function slotState(bus: Bus, name: string): Promise<string> {
  const r = await bus.slots.get(name);
  if (!r) return `${name} (not started)`;
  if (r.state === "done") return `${name} (done, version ${r.version})`;
  return `${name} (running${r.task ? ": " + preview(r.task, 40) : ""}${r.chunks ? `, ${r.chunks} chunk${r.chunks === 1 ? "" : "s"}` : ""})`;
}


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
