// `a2a hook EVENT`: a Claude Code command hook. Claude Code runs it with the event's JSON on
// stdin (session_id, cwd, hook_event_name, stop_hook_active for Stop, ...) and reads the
// answer on stdout in its documented format:
//   session-start        {"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":...}}
//   user-prompt-submit   the same for UserPromptSubmit, only when new mail arrived
//   stop                 {"decision":"block","reason":...} while unread mail waits; nothing otherwise
// What is remembered is lib/sessions/hooks.ts, what is said cli/claude/hook-text.ts; the session's name is the one its
// `a2a mcp` server has (lib/presence/session-name.ts), so mail sent to the name `a2a whoami`
// prints is the mail announced here.
//
// Invariants:
// - a hook never stands in the session's way: a failure is one line on stderr and exit 1,
//   which Claude Code shows and goes on; never exit 2, which it would read as "block";
// - it runs on every prompt and stop, so it loads only what it needs and writes nothing
//   unless something new is shown (lib/sessions/hooks.ts);
// - `stop --wait DUR` waits at most DUR for the next message; SIGTERM (Claude Code's hook
//   timeout) ends the wait and lets the session stop.

import type { Command } from "commander";
import { A2AError, asA2AError, phrase } from "../../lib/core/errors";
import { MAX_BLOCKS } from "../../lib/sessions/limits";
import { promptText, sessionStartText, stopText } from "../claude/hook-text";
import { writerNoun } from "../frame";
import { durationMs, json, out, parseCount, readStdin } from "../io";
import { SHELL } from "../phrase";
import { action, command, type Ctx } from "../run";

export const EVENTS = { "session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit", stop: "Stop" } as const;
type Event = keyof typeof EVENTS;

interface HookInput {
  cwd?: string;
  session_id?: string;
  hook_event_name?: string;
  stop_hook_active?: boolean;
}

function readInput(): HookInput {
  if (process.stdin.isTTY) return {}; // run by hand: there is no event to read
  const raw = readStdin(1024 * 1024, "the hook input").trim();
  if (!raw) return {};
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" ? v : {};
  } catch {
    throw new A2AError("EUSAGE", "the hook input on stdin is not JSON: a2a hook is meant to be run by Claude Code (see a2a setup claude)");
  }
}

const context = (event: string, text: string) => json({ hookSpecificOutput: { hookEventName: event, additionalContext: text } });

export const commands = {
  hook: (p: Command) =>
    command(p, "hook", {
      summary: "Claude Code hook: announce mail at session start and prompts, hold Stop while mail waits",
      description:
        "Run as a Claude Code command hook (a2a setup claude installs them): reads the event's JSON on stdin and answers in Claude Code's hook format. session-start: who this session is on the bus and how much mail waits. user-prompt-submit: the unread mail that arrived since the last prompt, as context framed as untrusted input (it stays unread). stop: while unread mail waits, block the stop with a reason telling the model to call check_messages; never twice for the same mail after a continuation, at most --max-blocks times in a row. stop --wait DUR (a worker session): when nothing waits, wait up to DUR for the next message before letting the session stop. The session's name is the one its a2a mcp server has (see a2a whoami). Exit 0; 1 with one line on stderr when something failed (never 2, which Claude Code reads as a block).",
      examples: [
        "echo '{\"cwd\":\"'$PWD'\"}' | a2a hook session-start",
        "a2a hook stop --wait 5m   # in the Stop hook of a worker session (hook timeout above 300)",
      ],
      json: "accepted, as by every command: the answer is always Claude Code's hook JSON",
    })
      .argument("<event>", "session-start, user-prompt-submit or stop")
      .option("--wait <duration>", "stop only: wait this long for the next message when nothing waits (e.g. 5m)")
      .option("--max-blocks <n>", `stop only: at most this many blocks in a row (default ${MAX_BLOCKS}, or 100 with --wait)`)
      .action(action(async (c: Ctx, event: string, o: { wait?: string; maxBlocks?: string }) => {
        try {
          if (!Object.hasOwn(EVENTS, event)) throw new A2AError("EUSAGE", `unknown hook event ${JSON.stringify(event)}: use session-start, user-prompt-submit or stop`);
          const waitMs = durationMs(o.wait, "--wait");
          if (waitMs !== undefined && event !== "stop") throw new A2AError("EUSAGE", "--wait is for the stop hook only: a2a hook stop --wait 5m");
          const maxBlocks = o.maxBlocks === undefined ? (waitMs ? 100 : MAX_BLOCKS) : Math.max(1, parseCount(o.maxBlocks, "--max-blocks"));
          const input = readInput();
          const cwd = typeof input.cwd === "string" && input.cwd ? input.cwd : process.cwd();
          const me = await c.bus.presence.sessionName(cwd);
          const ev = event as Event;
          if (ev === "session-start") return out(context(EVENTS[ev], sessionStartText(c.bus.where, me.name, me.why, await c.bus.sessions.start(me.name))));
          if (ev === "user-prompt-submit") {
            const text = promptText(me.name, await c.bus.sessions.prompt(me.name), writerNoun(c.bus.engine));
            return text ? out(context(EVENTS[ev], text)) : undefined;
          }
          const continuation = input.stop_hook_active === true;
          let d = await c.bus.sessions.stop(me.name, continuation, maxBlocks, !!waitMs);
          if (!d.block && waitMs && d.unread === 0) {
            const got = await c.bus.sessions.waitForWork(me.name, waitMs, c.signal());
            if (got.kind === "done") d = await c.bus.sessions.stop(me.name, continuation, maxBlocks, true);
          }
          if (d.block) out(json({ decision: "block", reason: stopText(me.name, d) }));
        } catch (e) {
          // Exit 1 whatever the failure (EIO's status): Claude Code reads 2 as "block".
          throw new A2AError("EIO", `hook ${event}: ${phrase(asA2AError(e), SHELL)}`, { cause: e });
        }
      })),
};
