// The topic commands: pub and sub. Each is parse -> one lib/topics call -> format; how a
// command ends is cli/run.ts's. A durable subscriber (--as) writes through io.outStrict, so
// its cursor never moves past a message its reader did not get (exit 1 on a closed stdout);
// an anonymous one keeps nothing, and a reader that leaves just ends it (exit 0).

import type { Command } from "commander";
import { A2AError } from "../../lib/core/errors";
import { frameTopicMessage, writerNoun } from "../frame";
import { age, table } from "../format";
import { durationMs, err, json, out, outStrict, payload } from "../io";
import { action, command, end, type Ctx } from "../run";

export const commands = {
  topics: (p: Command) =>
    command(p, "topics", {
      summary: "list topics with their message counts and subscribers",
      description: "List the topics on this store (or those matching PATTERN), each with its message count, when the last one was sent, and its named subscribers (`a2a sub --as NAME`) with how many messages each has not read yet. Anonymous subscribers keep no position, so they are not listed.",
      examples: ["a2a topics", "a2a topics 'build.>'", "a2a topics --json | jq '.[] | select(.subscribers == [])'"],
      json: "an array of {topic, messages, last_id, last_at, subscribers: [{name, position, unread}]}",
    })
      .argument("[pattern]", "only topics matching it (* one word, > the rest)", ">")
      .action(action(async (c: Ctx, pattern: string) => {
        const list = await c.bus.topics.list(pattern);
        if (c.json) return out(json(list));
        if (!list.length) return out(pattern === ">" ? "no topics yet: a2a pub TOPIC MESSAGE creates one\n" : `no topic matches ${pattern}\n`);
        out(table(
          ["TOPIC", "MESSAGES", "LAST", "SUBSCRIBERS"],
          list.map((t) => [
            t.topic,
            String(t.messages),
            t.last_at === null ? "-" : age(t.last_at),
            t.subscribers.length ? t.subscribers.map((s) => (s.unread ? `${s.name} (${s.unread} unread)` : s.name)).join(", ") : "-",
          ]),
        ));
      })),

  pub: (p: Command) =>
    command(p, "pub", {
      summary: "publish MESSAGE on TOPIC: every subscriber sees it",
      description: "Append MESSAGE to TOPIC's log: every subscriber whose pattern matches sees it, in order, now or on its next run. MESSAGE '-' or a piped stdin reads stdin. The sender is --as NAME, else $A2A_AGENT, else anonymous.",
      examples: ['a2a pub build.status "tests green" --as ci', "tail -1 log | a2a pub alerts.disk -"],
      json: "print the message record as JSON",
      quiet: true,
    })
      .argument("<topic>", "dot-separated topic, e.g. build.status")
      .argument("[message]", "the text, or '-' for stdin")
      .option("--as <name>", "who you are (default: $A2A_AGENT)")
      .option("--file <path>", "read the message from a file")
      .action(action(async (c: Ctx, topic: string, message: string | undefined, o) => {
        const from = o.as ?? c.bus.settings.agent ?? "";
        const m = await c.bus.topics.publish(topic, payload(message, o.file, c.bus.settings.maxBytes, "the message"), from);
        c.confirm(m, `published ${m.topic} #${m.id}`);
      })),

  sub: (p: Command) =>
    command(p, "sub", {
      summary: "print the messages of topics matching PATTERN (* one word, > the rest)",
      description: "Print messages of every topic matching PATTERN, in order per topic. Plain `a2a sub PATTERN` prints what the topics hold now and ends (nothing there: a note on stderr, exit 0). With --as NAME the position is kept on disk, so the next run resumes where this one stopped (no loss, no duplicate); a named subscriber starts at messages published after its first run, or at the beginning with --from-start. With --follow it keeps printing messages as they are published (without --as: from now on, unless --from-start), until stopped (128+N on a signal) or for --timeout, a run length: reaching it is a normal end, exit 0.",
      examples: ["a2a sub 'build.>' --from-start", "a2a sub 'customer.*.health' --as cs-agent --follow", "a2a sub alerts --as pager --json"],
      json: "one JSON object per message: topic, id, from, body, sent_at",
    })
      .argument("<pattern>", "topic pattern, e.g. build.status, build.*, build.>")
      .option("--as <name>", "durable subscriber name: resume from the last message printed")
      .option("-f, --follow", "keep printing messages as they are published")
      .option("--from-start", "topics this subscriber has no position in start at their first message")
      .option("--timeout <seconds>", "with --follow, stop after this long (exit 0)")
      .action(action(async (c: Ctx, pattern: string, o) => {
        if (o.timeout !== undefined && !o.follow) throw new A2AError("EUSAGE", "--timeout applies to --follow only: add --follow or drop --timeout");
        const write = o.as === undefined ? out : outStrict;
        // An anonymous one-shot read keeps no position, so "from now on" would always be empty:
        // it reads what the topics hold.
        const fromStart = !!o.fromStart || (o.as === undefined && !o.follow);
        const outcome = await c.bus.topics.subscribe(pattern,
          { name: o.as, follow: !!o.follow, fromStart, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.follow ? c.signal() : undefined },
          (m) => write(c.json ? json(m) : frameTopicMessage(m, writerNoun(c.bus.engine))),
        );
        const printed = end(c, outcome, { timeout: "ok" });
        if (printed === 0 && !o.follow && !c.json) err(o.as === undefined ? `a2a: no messages in topics matching ${pattern}\n` : `a2a: no new messages for ${o.as} in topics matching ${pattern}\n`);
      })),
};
