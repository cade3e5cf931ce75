// The mail commands: send, recv, inbox, thread, ack, allow, deny, policy. Each is parse -> one
// lib/mail call -> format; how a command ends is cli/run.ts's. Who you are: --as NAME, else
// $A2A_AGENT (lib/presence/identity.ts). Mail is durable: it is written with io.outStrict, so
// a reader that leaves early leaves the message unread (exit 1), never lost.

import { attachFiles, collect } from "../attach";
import type { Command } from "commander";
import { basename, dirname } from "node:path";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { frameMessage, writerNoun } from "../frame";
import type { ReceivedMessage } from "../../lib/mail/message";
import { LIST_BODY_CHARS } from "../../lib/mail/limits";
import { checkMode } from "../../lib/mail/policy-mode";
import type { Policy } from "../../lib/mail/policy";
import type { SendResult } from "../../lib/mail/send";
import { age, preview, table } from "../format";
import { durationMs, err, json, out, outStrict, parseCount, payload } from "../io";
import { liveLine } from "../progress";
import { action, command, end, type Ctx } from "../run";
import { shellWait } from "../shell-wait";

export const AS = ["--as <name>", "who you are (default: $A2A_AGENT, else this session's name: see a2a whoami)"] as const;

const sentLine = (r: SendResult) => (r.duplicate ? `already sent ${r.id} to ${r.to} (same --key): not delivered again\n` : `sent ${r.id} to ${r.to}\n`);

function policyLine(p: Policy): string {
  const list = (l: string[]) => (l.length ? l.join(", ") : "nobody");
  return `${p.agent}: policy ${p.mode}${p.mode === "allowlist" ? `, allowed: ${list(p.allow)}` : ""}, denied: ${list(p.deny)}\n`;
}

export const commands = {
  send: (p: Command) =>
    command(p, "send", {
      summary: "send MESSAGE to agent TO's inbox (waits there until read)",
      description: "Deliver MESSAGE to TO's inbox. It waits there until TO reads it, even if TO is not running. MESSAGE '-' or a piped stdin reads stdin. With --wait-reply, block until TO answers (a message with reply_to = this id) and print the answer: exit 124 on --timeout, 128+N on a signal (the answer then waits in your inbox). Exit 1 if TO's policy refuses you or its inbox is full.",
      examples: [
        'a2a send bob "the schema changed: see docs/schema.md" --as alice',
        "git diff | A2A_AGENT=alice a2a send reviewer -",
        'a2a send bob "deploy done" --key deploy-42',
        'a2a send reviewer "the failing run" --attach test.log --attach core.tar.gz',
        'answer=$(a2a send oracle "which port?" --wait-reply --timeout 60 --json | jq -r .reply.body)',
      ],
      json: "print {id, from, to, sent_at, size, duplicate} (and the reply) as JSON",
      quiet: true,
    })
      .argument("<to>", "recipient agent name")
      .argument("[message]", "the text, or '-' for stdin")
      .option(...AS)
      .option("--file <path>", "read the message from a file")
      .option("--reply-to <id>", "mark this message as the answer to message ID")
      .option("--key <key>", "idempotency key: a retry with the same key delivers nothing twice")
      .option("--attach <file>", "store FILE (any size) and hand it over with the message; repeat for more", collect)
      .option("--wait-reply", "then block until a reply (a message with reply_to = this id) arrives and print it")
      .option("--timeout <seconds>", "with --wait-reply, give up after this long (exit 124)")
      .action(action(async (c: Ctx, to: string, message: string | undefined, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        const body = payload(message, o.file, c.bus.settings.maxBytes, "the message");
        const opts = { replyTo: o.replyTo, key: o.key, attach: await attachFiles(c.bus, o.attach) };
        if (!o.waitReply) {
          if (o.timeout !== undefined) throw new A2AError("EUSAGE", "--timeout applies to --wait-reply only: add --wait-reply or drop --timeout");
          const r = await c.bus.mail.send(me, to, body, opts);
          if (r.did_you_mean) err(`a2a: warning: nobody has had mail or been on the bus as ${to}; did you mean ${r.did_you_mean}? (sent: it waits in ${to}'s inbox)\n`);
          return c.confirm(r, sentLine(r));
        }
        const outcome = await c.bus.mail.request(me, to, body, { ...opts, timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() }, (s, m) =>
          outStrict(c.json ? json({ ...s, reply: m }) : (c.quiet ? "" : sentLine(s)) + frameMessage(m, writerNoun(c.bus.engine))),
        );
        end(c, outcome, {
          timeout: (_p, { sent }) => text`no reply to ${sent.id} from ${to} arrived in time: it will wait in your inbox (${op("recv")}); raise ${arg("timeout")} to wait longer`,
          aborted: (_p, { sent }) => text`interrupted before ${to} replied to ${sent.id}: its reply will wait in your inbox (${op("recv")})`,
        });
      })),

  recv: (p: Command) =>
    command(p, "recv", {
      summary: "print your oldest unread message (--all: every one) and mark it read",
      description: "Print your oldest unread message (with --all: every unread one, oldest first), framed as untrusted input from its sender, and mark it read once it is written out. Several readers of one inbox never get the same message. Prints nothing when there is none (exit 0), unless --wait: then block until one arrives (exit 124 on --timeout, 128+N on a signal; a live session whose name it is shows waiting on mail meanwhile, see a2a peers). If stdout closes before a message is out, it stays unread (exit 1).",
      examples: [
        "a2a recv --as bob",
        "A2A_AGENT=bob a2a recv --wait --timeout 5m",
        "while m=$(a2a recv --as worker --wait --json); do jq -r .body <<<\"$m\" >>requests.txt; done   # bodies are data, never commands",
      ],
      json: "one JSON object per message: id, from, user, to, body, sent_at, reply_to, ...",
    })
      .option(...AS)
      .option("--wait", "block until a message arrives")
      .option("--timeout <seconds>", "with --wait, give up after this long (exit 124)")
      .option("--peek", "print without marking read (a2a ack ID marks read)")
      .option("--all", "every unread message, not just the oldest")
      .action(action(async (c: Ctx, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        if (o.timeout !== undefined && !o.wait) throw new A2AError("EUSAGE", "--timeout applies to --wait only: add --wait or drop --timeout");
        const line = o.wait ? await liveLine(() => `waiting for a message to ${me}`) : undefined;
        const damaged: string[] = [];
        const receive = () => c.bus.mail.receive(me,
          { wait: !!o.wait, peek: !!o.peek, max: o.all ? Infinity : 1, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.wait ? c.signal() : undefined, onDamaged: (f) => damaged.push(f) },
          (msgs) => {
            line?.stop();
            outStrict(msgs.map((m) => (c.json ? json(m) : frameMessage(m, writerNoun(c.bus.engine)))).join(c.json ? "" : "\n"));
          },
        );
        // A session's shell waiting for its mail: the session shows waiting meanwhile (a2a peers).
        const outcome = await (o.wait ? shellWait(c, me, "mail", receive) : receive()).finally(() => {
          line?.stop();
          if (damaged.length) err(`a2a: warning: set aside ${damaged.length} damaged message file(s), not valid messages, in ${dirname(damaged[0])}: ${damaged.map((f) => basename(f)).join(", ")}\n`);
        });
        const got = end(c, outcome, {
          timeout: () => text`no message for ${me} arrived in time: raise ${arg("timeout")}, or check who writes to ${me} (${op("peers")})`,
        });
        if (!got.length && !c.json) err(`a2a: no unread messages for ${me}\n`);
      })),

  inbox: (p: Command) =>
    command(p, "inbox", {
      summary: "list your unread and recently read messages (--held: refused senders' mail)",
      description: "List your inbox without reading anything: the counts, the unread messages oldest first and the recently read ones, with sender, OS user, age and a preview. --held lists mail set aside because your policy refuses its sender (`a2a allow NAME` releases it). Damaged files (not valid messages) are counted: `recv` sets unread ones aside in the inbox's bad/ directory, where they stay for you to look at and remove.",
      examples: ["a2a inbox --as bob", "a2a inbox --held --as bob"],
      json: `print {agent, unread, read, held, counts} as JSON; each body is cut to its first ${LIST_BODY_CHARS} characters (truncated: true; recv reads it whole)`,
    })
      .option(...AS)
      .option("--held", "list mail held aside because its sender is not allowed")
      .option("--limit <n>", "at most N per list (default 20)")
      .action(action(async (c: Ctx, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        const l = await c.bus.mail.list(me, o.limit === undefined ? 20 : Math.max(1, parseCount(o.limit, "--limit")));
        if (c.json) return out(json(o.held ? { agent: l.agent, held: l.held, counts: l.counts } : l));
        const rows = (ms: ReceivedMessage[]) => ms.map((m) => [m.id, m.human ? `${m.from} (you, at the dashboard)` : m.from, m.user, age(m.sent_at), m.state, preview(m.body, 50)]);
        const head = ["ID", "FROM", "USER", "AGE", "STATE", "PREVIEW"];
        if (o.held) {
          const heldRows = l.held.map((m) => [m.id, m.from, m.user, age(m.sent_at), preview(m.held_reason ?? "", 60)]);
          return out(l.held.length ? table(["ID", "FROM", "USER", "AGE", "WHY HELD"], heldRows) : `no held mail for ${me}\n`);
        }
        let listing = `${me}: ${l.counts.unread} unread, ${l.counts.read} read, ${l.counts.held} held${l.counts.damaged ? `, ${l.counts.damaged} damaged` : ""}\n`;
        if (l.unread.length) listing += "\nunread (oldest first):\n" + table(head, rows(l.unread));
        if (l.read.length) listing += "\nrecently read:\n" + table(head, rows(l.read));
        if (l.counts.held) listing += `\n${l.counts.held} held from senders your policy refuses: a2a inbox --held\n`;
        if (l.counts.damaged) listing += `\n${l.counts.damaged} damaged file(s), not valid messages: recv sets unread ones aside in ${l.damaged_in}, where they stay for you to look at and remove\n`;
        out(listing);
      })),

  thread: (p: Command) =>
    command(p, "thread", {
      summary: "print the whole conversation containing message ID, oldest first (marks nothing read)",
      description: "Print the thread (the conversation of replies) that message ID belongs to, oldest first, each message framed as untrusted input as recv frames it. Only what you could read anyway: the messages of your inbox (not mail held from senders your policy refuses) and the messages you sent. Nothing is marked read or taken from your inbox. ID is any message of the thread. Exit 3 if you can see no message ID.",
      examples: ["a2a thread 1764507972123000-3f2a-1k3d-a9c2e1 --as bob", "a2a thread \"$ID\" --json | jq -r '.[] | \"\\(.from): \\(.body)\"'"],
      json: "print a JSON array of the messages, as recv --json prints each, plus thread (the id of its first message) and state (sent: one you sent)",
    })
      .argument("<id>", "any message of the thread")
      .option(...AS)
      .action(action(async (c: Ctx, id: string, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        const msgs = await c.bus.mail.thread(me, id);
        if (c.json) return out(json(msgs));
        const writer = writerNoun(c.bus.engine);
        out(`thread ${msgs[0].thread}: ${msgs.length} message(s) you can see\n\n` + msgs.map((m) => frameMessage({ ...m, state: "read" }, writer)).join("\n"));
      })),

  ack: (p: Command) =>
    command(p, "ack", {
      summary: "mark messages read (after recv --peek)",
      description: "Mark the given messages of your inbox read, as `a2a recv` does after printing: for a reader that looked with `recv --peek` and has now handled them. Exit 3 if an id is not in your inbox (the others are still marked).",
      examples: ["a2a ack 1764507972123000-3f2a-1k3d-a9c2e1 --as bob"],
      json: "print {acked, already, missing} as JSON",
      quiet: true,
    })
      .argument("<ids...>", "message ids")
      .option(...AS)
      .action(action(async (c: Ctx, ids: string[], o) => {
        const r = await c.bus.mail.ack((await c.bus.presence.acting(o.as, process.cwd())).name, ids);
        c.confirm(r, [...r.acked.map((i) => `read ${i}\n`), ...r.already.map((i) => `already read ${i}\n`)].join(""));
        if (r.missing.length) throw new A2AError("ENOTFOUND", `no message ${r.missing.join(", ")} in this inbox: check the id (a2a inbox)`);
      })),

  allow: (p: Command) =>
    command(p, "allow", {
      summary: "accept mail from NAMES, each bound to the OS user who writes it (releases their held mail)",
      description: "Add NAMES to the senders you accept (taking them off your deny list), bind each to an OS user, and move any mail of theirs that was held back to unread. NAME@USER binds NAME to OS user USER; a plain NAME is bound to the OS user seen on NAME's last message in your inbox (said in the output), or left unbound if none was seen. Mail claiming a bound NAME but written by another OS user is held, and such a send is refused: in a shared store the file owner is what the filesystem vouches for. Between agents of one OS user nothing is authenticated. On a PostgreSQL store the same holds with database roles for OS users (NAME@ROLE; the server records the role). Matters most under the allowlist policy (`a2a policy allowlist`).",
      examples: ["a2a allow alice bob --as carol", "a2a allow alice@seca --as carol", "a2a policy allowlist --as carol"],
      json: "print the policy as JSON (bind: NAME -> OS user)",
      quiet: true,
    })
      .argument("<names...>", "sender names, or NAME@USER to bind to an OS user")
      .option(...AS)
      .action(action(async (c: Ctx, names: string[], o) => {
        const r = await c.bus.mail.allow((await c.bus.presence.acting(o.as, process.cwd())).name, names);
        const kind = writerNoun(c.bus.engine); // on a database a name is bound to a role
        const bound = r.allowed.map((a) =>
          a.user ? `${a.name} is bound to ${kind} ${a.user}${a.bound_from === "last message" ? " (the writer of its last message here)" : ""}\n`
            : `${a.name} is not bound to ${kind === "role" ? "a role" : "an OS user"} (no message from it seen yet): a2a allow ${a.name}@${kind === "role" ? "ROLE" : "USER"} binds it\n`,
        );
        c.confirm({ ...r.policy, released: r.released, allowed: r.allowed }, policyLine(r.policy) + bound.join("") + (r.released ? `${r.released} held message(s) released to unread\n` : ""));
      })),

  deny: (p: Command) =>
    command(p, "deny", {
      summary: "refuse mail from NAMES, whatever the policy",
      description: "Refuse mail from NAMES under any policy: their sends fail (exit 1 for them), nothing reaches your inbox. `a2a allow NAME` lifts it.",
      examples: ["a2a deny mallory --as carol", "A2A_AGENT=carol a2a deny mallory eve"],
      json: "print the policy as JSON",
      quiet: true,
    })
      .argument("<names...>", "sender names")
      .option(...AS)
      .action(action(async (c: Ctx, names: string[], o) => {
        const p = await c.bus.mail.deny((await c.bus.presence.acting(o.as, process.cwd())).name, names);
        c.confirm(p, policyLine(p));
      })),

  policy: (p: Command) =>
    command(p, "policy", {
      summary: "show or set who may write to you: open (anyone) or allowlist (a2a allow)",
      description: "Show your mail policy, or set it: open (anyone not denied may write) or allowlist (only senders you `a2a allow`: others' sends are refused, and their mail already waiting is held, see `a2a inbox --held`).",
      examples: ["a2a policy allowlist --as carol", "a2a policy --as carol"],
      json: "print the policy as JSON",
      quiet: true,
    })
      .argument("[mode]", "open or allowlist; omit to show the current policy")
      .option(...AS)
      .action(action(async (c: Ctx, mode: string | undefined, o) => {
        const me = (await c.bus.presence.acting(o.as, process.cwd())).name;
        if (mode === undefined) {
          const p = await c.bus.mail.policy(me);
          return out(c.json ? json(p) : policyLine(p));
        }
        const p = await c.bus.mail.setMode(me, checkMode(mode));
        c.confirm(p, policyLine(p)); // a change confirmed: -q silences it
      })),
};
