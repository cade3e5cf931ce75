// The messaging commands: send, recv, inbox, ack, whoami, peers, pub, sub, allow, deny,
// policy. Each is parse -> one lib/ call -> format; errors are thrown as A2AError to main.ts.
// Who you are: --as NAME, else $A2A_AGENT (lib/presence/identity.ts). Exit codes: 0 ok, 1 refused by
// the recipient's policy (EDENIED) or inbox full (EFULL), 2 usage, 3 not found, 124 timeout.

import type { Command } from "commander";
import { A2AError, arg, op, text } from "../lib/core/errors";
import { frameMessage, frameTopicMessage } from "../lib/frame";
import { requireAgent } from "../lib/presence/identity";
import { whoami } from "../lib/whoami";
import { sendMessage, type SendResult } from "../lib/mail/send";
import { ack, listInbox } from "../lib/mail/inbox";
import { settle } from "./outcome";
import { receive, request } from "../lib/mail/receive";
import { type ReceivedMessage } from "../lib/mail/message";
import { checkScope, listPeers } from "../lib/presence/peers";
import { allowSenders, denySenders, readPolicy, setPolicyMode, checkMode, type Policy } from "../lib/mail/policy";
import { subscribeTopics } from "../lib/topics/subscribe";
import { publishTopic } from "../lib/topics/log";
import { closeWatches } from "../lib/core/watch";
import { ctx } from "./context";
import { age, preview, table } from "./format";
import { closeStdout, json, out, outStrict, parseCount, parseDuration, payload } from "./io";

const examples = (lines: string[]) => "\nExamples:\n" + lines.map((l) => "  $ " + l).join("\n") + "\n";
const AS = ["--as <name>", "who you are (default: $A2A_AGENT)"] as const;

// A signal ends a blocking command between messages (never between writing a message out and
// marking it read, nor between printing and moving a cursor); the reason is the signal's name.
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
function stopOnSignals(): AbortSignal {
  const ac = new AbortController();
  for (const sig of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) process.once(sig, () => ac.abort(sig));
  return ac.signal;
}

// A wait ended by a signal exits as if killed by it (128 + N, e.g. 130 for Ctrl-C), like
// `a2a wait`: a script can tell it from a timeout (124).
function endInterrupted(signal: AbortSignal, store: Parameters<typeof closeWatches>[0]): void {
  process.exitCode = 128 + (SIGNALS[signal.reason as keyof typeof SIGNALS] ?? SIGNALS.SIGTERM);
  closeStdout();
  closeWatches(store);
}

const timeoutMs = (o: { timeout?: string }) => (o.timeout === undefined ? undefined : parseDuration(o.timeout, "--timeout") * 1000);
const render = (m: ReceivedMessage, asJson: boolean) => (asJson ? json(m) : frameMessage(m));
const sentLine = (r: SendResult) => (r.duplicate ? `already sent ${r.id} to ${r.to} (same --key): not delivered again\n` : `sent ${r.id} to ${r.to}\n`);

function policyLine(p: Policy): string {
  const list = (l: string[]) => (l.length ? l.join(", ") : "nobody");
  return `${p.agent}: policy ${p.mode}${p.mode === "allowlist" ? `, allowed: ${list(p.allow)}` : ""}, denied: ${list(p.deny)}\n`;
}

export function registerMessageCommands(program: Command): void {
  program
    .command("send")
    .summary("send MESSAGE to agent TO's inbox (waits there until read)")
    .description("Deliver MESSAGE to TO's inbox. It waits there until TO reads it, even if TO is not running. MESSAGE '-' or a piped stdin reads stdin. Exit 1 if TO's policy refuses you or its inbox is full.")
    .argument("<to>", "recipient agent name")
    .argument("[message]", "the text, or '-' for stdin")
    .option(...AS)
    .option("--file <path>", "read the message from a file")
    .option("--reply-to <id>", "mark this message as the answer to message ID")
    .option("--key <key>", "idempotency key: a retry with the same key delivers nothing twice")
    .option("--wait-reply", "then block until a reply (a message with reply_to = this id) arrives and print it")
    .option("--timeout <seconds>", "with --wait-reply, give up after this long (exit 124)")
    .option("--json", "print {id, from, to, sent_at, size, duplicate} (and the reply) as JSON")
    .addHelpText("after", examples([
      'a2a send bob "the schema changed: see docs/schema.md" --as alice',
      "git diff | A2A_AGENT=alice a2a send reviewer -",
      'a2a send bob "deploy done" --key deploy-42',
      'answer=$(a2a send oracle "which port?" --wait-reply --timeout 60 --json | jq -r .reply.body)',
    ]))
    .action(async (to: string, message: string | undefined, o, cmd: Command) => {
      const c = ctx(cmd);
      const me = requireAgent(c.store, o.as, "send").name;
      const body = payload(message, o.file, c.store.maxBytes, "the message");
      const opts = { replyTo: o.replyTo, key: o.key };
      if (!o.waitReply) {
        if (o.timeout !== undefined) throw new A2AError("EUSAGE", "--timeout applies to --wait-reply only: add --wait-reply or drop --timeout");
        const r = await sendMessage(c.store, me, to, body, opts);
        return out(c.json ? json(r) : sentLine(r));
      }
      const signal = stopOnSignals();
      const outcome = await request(c.store, me, to, body, { ...opts, timeoutMs: timeoutMs(o), signal }, (s, m) =>
        outStrict(c.json ? json({ ...s, reply: m }) : sentLine(s) + frameMessage(m)),
      );
      const { sent } = outcome.value;
      settle(outcome, () => text`no reply to ${sent.id} from ${to} arrived in time: it will wait in your inbox (${op("recv")}); raise ${arg("timeout")} to wait longer`);
      if (outcome.kind === "aborted") {
        process.stderr.write(`a2a: interrupted before ${to} replied to ${sent.id}: its reply will wait in your inbox (a2a recv)\n`);
        return endInterrupted(signal, c.store);
      }
      closeStdout();
      closeWatches(c.store);
    });

  program
    .command("recv")
    .summary("print your oldest unread message (--all: every one) and mark it read")
    .description("Print unread messages oldest first, each framed as untrusted input from its sender, and mark them read once written out. Several readers of one inbox never get the same message. Prints nothing when there is none (exit 0), unless --wait.")
    .option(...AS)
    .option("--wait", "block until a message arrives")
    .option("--timeout <seconds>", "with --wait, give up after this long (exit 124)")
    .option("--peek", "print without marking read (a2a ack ID marks read)")
    .option("--all", "every unread message, not just the oldest")
    .option("--json", "one JSON object per message: id, from, user, to, body, sent_at, reply_to, ...")
    .addHelpText("after", examples([
      "a2a recv --as bob",
      "A2A_AGENT=bob a2a recv --wait --timeout 5m",
      "while m=$(a2a recv --as worker --wait --json); do echo \"$m\" | jq -r .body | sh; done",
    ]))
    .action(async (o, cmd: Command) => {
      const c = ctx(cmd);
      const me = requireAgent(c.store, o.as, "recv").name;
      if (o.timeout !== undefined && !o.wait) throw new A2AError("EUSAGE", "--timeout applies to --wait only: add --wait or drop --timeout");
      const signal = o.wait ? stopOnSignals() : undefined;
      const outcome = await receive(
        c.store, me,
        { wait: !!o.wait, peek: !!o.peek, max: o.all ? Infinity : 1, timeoutMs: timeoutMs(o), signal },
        (msgs) => outStrict(msgs.map((m) => render(m, c.json)).join(c.json ? "" : "\n")),
      );
      const got = settle(outcome, () => text`no message for ${me} arrived in time: raise ${arg("timeout")}, or check who writes to ${me} (${op("peers")})`);
      if (signal && !got) return endInterrupted(signal, c.store);
      if (!got) return;
      if (!got.length && !c.json) process.stderr.write(`a2a: no unread messages for ${me}\n`);
      closeStdout();
      closeWatches(c.store);
    });

  program
    .command("inbox")
    .summary("list your unread and recently read messages (--held: refused senders' mail)")
    .option(...AS)
    .option("--held", "list mail held aside because its sender is not allowed")
    .option("--limit <n>", "at most N per list (default 20)")
    .option("--json", "print {agent, unread, read, held, counts} as JSON")
    .addHelpText("after", examples(["a2a inbox --as bob", "a2a inbox --held --as bob"]))
    .action((o, cmd: Command) => {
      const c = ctx(cmd);
      const me = requireAgent(c.store, o.as, "inbox").name;
      const l = listInbox(c.store, me, o.limit === undefined ? 20 : Math.max(1, parseCount(o.limit, "--limit")));
      if (c.json) return out(json(o.held ? { agent: l.agent, held: l.held, counts: l.counts } : l));
      const rows = (ms: ReceivedMessage[]) => ms.map((m) => [m.id, m.from, m.user, age(m.sent_at), m.state, preview(m.body, 50)]);
      const head = ["ID", "FROM", "USER", "AGE", "STATE", "PREVIEW"];
      if (o.held) {
        return out(l.held.length ? table(head, rows(l.held)) : `no held mail for ${me}\n`);
      }
      let text = `${me}: ${l.counts.unread} unread, ${l.counts.read} read, ${l.counts.held} held\n`;
      if (l.unread.length) text += "\nunread (oldest first):\n" + table(head, rows(l.unread));
      if (l.read.length) text += "\nrecently read:\n" + table(head, rows(l.read));
      if (l.counts.held) text += `\n${l.counts.held} held from senders your policy refuses: a2a inbox --held\n`;
      out(text);
    });

  program
    .command("ack")
    .summary("mark messages read (after recv --peek)")
    .argument("<ids...>", "message ids")
    .option(...AS)
    .option("--json", "print {acked, already, missing} as JSON")
    .addHelpText("after", examples(["a2a ack 1764507972123000-3f2a-1k3d-a9c2e1 --as bob"]))
    .action((ids: string[], o, cmd: Command) => {
      const c = ctx(cmd);
      const r = ack(c.store, requireAgent(c.store, o.as, "ack").name, ids);
      out(c.json ? json(r) : [...r.acked.map((i) => `read ${i}\n`), ...r.already.map((i) => `already read ${i}\n`)].join(""));
      if (r.missing.length) throw new A2AError("ENOTFOUND", `no message ${r.missing.join(", ")} in this inbox: check the id (a2a inbox)`);
    });

  program
    .command("whoami")
    .summary("say which agent name you act as, and your inbox state")
    .option(...AS)
    .option("--json", "print as JSON")
    .addHelpText("after", examples(["A2A_AGENT=alice a2a whoami", "a2a whoami --as bob --json"]))
    .action((o, cmd: Command) => {
      const c = ctx(cmd);
      const w = whoami(c.store, requireAgent(c.store, o.as, "whoami"), process.cwd());
      out(c.json ? json(w) : `${w.name} (from ${w.source}) on ${w.host} as OS user ${w.user}: ${w.unread} unread, policy ${w.policy}, store ${w.store}\n`);
    });

  program
    .command("peers")
    .summary("list live agents (a2a mcp sessions); stale ones are swept")
    .option("--scope <scope>", "all, machine (this host), directory (this cwd) or repo (this git root)", "all")
    .option("--json", "print {peers, gone} as JSON")
    .addHelpText("after", examples(["a2a peers", "a2a peers --scope repo --json"]))
    .action((o, cmd: Command) => {
      const c = ctx(cmd);
      const l = listPeers(c.store, checkScope(o.scope), { cwd: process.cwd() });
      if (c.json) return out(json(l));
      let text = l.peers.length
        ? table(["NAME", "HOST", "PID", "CWD", "SEEN", "SUMMARY"], l.peers.map((p) => [p.name, p.host, String(p.pid), p.cwd, age(p.heartbeat), preview(p.summary, 40)]))
        : `no live peers (scope ${o.scope})\n`;
      if (l.gone.length) text += `gone (removed now; their inboxes are kept): ${l.gone.map((p) => p.name).join(", ")}\n`;
      out(text);
    });

  program
    .command("pub")
    .summary("publish MESSAGE on TOPIC: every subscriber sees it")
    .argument("<topic>", "dot-separated topic, e.g. build.status")
    .argument("[message]", "the text, or '-' for stdin")
    .option(...AS)
    .option("--file <path>", "read the message from a file")
    .option("--json", "print the message record as JSON")
    .addHelpText("after", examples(['a2a pub build.status "tests green" --as ci', "tail -1 log | a2a pub alerts.disk -"]))
    .action((topic: string, message: string | undefined, o, cmd: Command) => {
      const c = ctx(cmd);
      const from = o.as ?? c.store.agent ?? "";
      const m = publishTopic(c.store, topic, payload(message, o.file, c.store.maxBytes, "the message"), from);
      out(c.json ? json(m) : `published ${m.topic} #${m.id}\n`);
    });

  program
    .command("sub")
    .summary("print the messages of topics matching PATTERN (* one word, > the rest)")
    .description("Print messages of every topic matching PATTERN, in order per topic. With --as NAME the position is kept on disk, so the next run resumes where this one stopped (no loss, no duplicate). A subscriber starts at messages published after its first run, or at the beginning with --from-start.")
    .argument("<pattern>", "topic pattern, e.g. build.status, build.*, build.>")
    .option("--as <name>", "durable subscriber name: resume from the last message printed")
    .option("-f, --follow", "keep printing messages as they are published")
    .option("--from-start", "topics this subscriber has no position in start at their first message")
    .option("--timeout <seconds>", "with --follow, stop after this long (exit 0)")
    .option("--json", "one JSON object per message: topic, id, from, body, sent_at")
    .addHelpText("after", examples(["a2a sub 'build.>' --from-start", "a2a sub 'customer.*.health' --as cs-agent --follow", "a2a sub alerts --as pager --json"]))
    .action(async (pattern: string, o, cmd: Command) => {
      const c = ctx(cmd);
      if (o.timeout !== undefined && !o.follow) throw new A2AError("EUSAGE", "--timeout applies to --follow only: add --follow or drop --timeout");
      await subscribeTopics(
        c.store, pattern,
        { name: o.as, follow: !!o.follow, fromStart: !!o.fromStart, timeoutMs: timeoutMs(o), signal: o.follow ? stopOnSignals() : undefined },
        (m) => outStrict(c.json ? json(m) : frameTopicMessage(m)),
      );
      closeStdout();
      closeWatches(c.store);
    });

  program
    .command("allow")
    .summary("accept mail from NAMES (releases their held mail)")
    .argument("<names...>", "sender names")
    .option(...AS)
    .option("--json", "print the policy as JSON")
    .addHelpText("after", examples(["a2a allow alice bob --as carol", "a2a policy allowlist --as carol"]))
    .action(async (names: string[], o, cmd: Command) => {
      const c = ctx(cmd);
      const r = await allowSenders(c.store, requireAgent(c.store, o.as, "allow").name, names);
      out(c.json ? json({ ...r.policy, released: r.released }) : policyLine(r.policy) + (r.released ? `${r.released} held message(s) released to unread\n` : ""));
    });

  program
    .command("deny")
    .summary("refuse mail from NAMES, whatever the policy")
    .argument("<names...>", "sender names")
    .option(...AS)
    .option("--json", "print the policy as JSON")
    .addHelpText("after", examples(["a2a deny spammer --as carol"]))
    .action(async (names: string[], o, cmd: Command) => {
      const c = ctx(cmd);
      const p = await denySenders(c.store, requireAgent(c.store, o.as, "deny").name, names);
      out(c.json ? json(p) : policyLine(p));
    });

  program
    .command("policy")
    .summary("show or set who may write to you: open (anyone) or allowlist (a2a allow)")
    .argument("[mode]", "open or allowlist; omit to show the current policy")
    .option(...AS)
    .option("--json", "print the policy as JSON")
    .addHelpText("after", examples(["a2a policy allowlist --as carol", "a2a policy --as carol"]))
    .action(async (mode: string | undefined, o, cmd: Command) => {
      const c = ctx(cmd);
      const me = requireAgent(c.store, o.as, "policy").name;
      const p = mode === undefined ? readPolicy(c.store, me) : await setPolicyMode(c.store, me, checkMode(mode));
      out(c.json ? json(p) : policyLine(p));
    });
}
