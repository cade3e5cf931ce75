// `a2a hook EVENT [--agent ID]`: a coding agent's command hook (Claude Code's by default; the
// others speak their own dialect, cli/agents/ID.ts hook). The agent runs it with the event's JSON
// on stdin (cwd, stop_hook_active for Stop, the tool call for pre-tool-use, ...) and reads the
// answer on stdout; in Claude Code's format:
//   session-start        {"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":...}}
//   user-prompt-submit   the same for UserPromptSubmit, only when new mail arrived
//   stop                 {"decision":"block","reason":...} while unread mail waits; nothing otherwise
//   pre-tool-use         {"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//                        "permissionDecisionReason":...}} when Edit, Write, MultiEdit or NotebookEdit
//                        would write a file another agent reserved exclusively (lib/reservations/
//                        reserve.ts blockers); nothing otherwise (Claude Code goes on as without a hook)
//   notification         nothing; the session is marked needs-you, on what it asks its user
//                        (working again on {answered: true}: opencode's plugin tells; idle on
//                        Claude Code's idle_prompt, which asks nothing)
//   wake                 opencode and Gemini CLI only: waits while the session sits idle until mail
//                        should wake it (cli/hook-wake.ts), then answers the wake
// Each event also marks the session's state (lib/sessions/state.ts): session-start idle,
// user-prompt-submit working, a stop let go idle (a blocked one stays working; a worker waiting
// for work is waiting meanwhile), notification needs-you.
// What is remembered is lib/sessions/hooks.ts, what is said cli/agents/hook-text.ts; the session's name is the one its
// `a2a mcp` server has (lib/presence/session-name.ts), so mail sent to the name `a2a whoami`
// prints is the mail announced here.
//
// Invariants:
// - a hook never stands in the session's way: a failure is one line on stderr and exit 1,
//   which Claude Code shows and goes on; never exit 2, which it would read as "block". For
//   pre-tool-use that means a store a2a cannot read lets the edit through (reservations are
//   advisory: a broken bus must not stop an agent's work), and the user sees the line; so does
//   a store that has not answered within 3 s. Input it cannot read is the other way round: the
//   file it names is unknown, so the call is denied, saying why (hook-input.ts reads any size);
// - pre-tool-use runs before every file edit: a tool that writes no file is answered before
//   the store is opened, and the session's name is worked out only when someone else holds
//   the file;
// - it runs on every prompt and stop, so it loads only what it needs and writes nothing
//   unless something new is shown or the session's state changes (lib/sessions/hooks.ts, state.ts);
// - `stop --wait DUR` waits at most DUR for the next message; SIGTERM (Claude Code's hook
//   timeout) ends the wait and lets the session stop.

import type { Command } from "commander";
import { A2AError, asA2AError, EXIT, phrase } from "../../lib/core/errors";
import { MAX_BLOCKS } from "../../lib/sessions/limits";
import type { A2AEvent, HookFormat, HookInput } from "../agents/agent";
import { denyText, promptText, sessionStartText, stopText } from "../agents/hook-text";
import { AGENTS, agentIds } from "../agents/index";
import { writerNoun } from "../frame";
import { readHookInput } from "../hook-input";
import { nextWake } from "../hook-wake";
import { durationMs, err, isTTY, out, parseCount } from "../io";
import { SHELL } from "../phrase";
import { action, command, type Ctx } from "../run";

const EVENTS: A2AEvent[] = ["session-start", "user-prompt-submit", "stop", "pre-tool-use", "notification", "wake"];

const CHECK_DEADLINE_MS = 3000;

// PreToolUse: deny the edit of a file another agent holds exclusively; silent otherwise.
async function preToolUse(c: Ctx, format: HookFormat, input: HookInput, cwd: string): Promise<void> {
  const paths = input.files ?? [];
  if (!paths.length) return;
  // Who "I" am is the session's name as the other hooks have it ($A2A_AGENT, else the name of this
  // session's a2a mcp): blockers asks for it only when someone holds the file.
  //
  // A store that does not answer (a database server behind a dead network: its connect
  // timeout is 10 s, Claude Code's for this hook too) would hold every edit that long: after
  // CHECK_DEADLINE_MS the edit goes ahead unchecked, said on stderr as any failure. Said and
  // ended here: the runner's teardown would wait for the connection still being made (~5 s).
  const where = c.bus.where;
  const timer = setTimeout(() => {
    err(`a2a: hook pre-tool-use: the store ${where} did not answer within ${CHECK_DEADLINE_MS / 1000} s: the edit goes ahead unchecked; a2a doctor says what is wrong\n`);
    process.exit(EXIT.FAILURE);
  }, CHECK_DEADLINE_MS);
  const held = await c.bus.reservations.blockers(paths, { cwd }).finally(() => clearTimeout(timer));
  if (!held.length) return;
  const named = paths.find((p) => held.some((h) => p === h.path || p.endsWith("/" + h.path))) ?? paths[0];
  out(format.deny(denyText(named, held)));
}

function readInput(): Record<string, unknown> {
  // Run by hand: there is no event to read. io.ts's isTTY, not process.stdin.isTTY, whose
  // stream Bun builds on first touch: that cost every hook ~5 ms of CPU.
  if (isTTY(0)) return {};
  const v = readHookInput();
  return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
}

// A tool call the hook cannot read might write a reserved file: it is denied, saying why, the
// way the agent shows a denial (never let through with a line the model does not see).
function undecided(format: HookFormat, e: unknown): string {
  return format.deny(`a2a: this edit was not checked against the reservations of other agents and is denied: ${phrase(asA2AError(e), SHELL)}. Retry it; if this persists, tell the user (a2a doctor)`);
}

export const commands = {
  hook: (p: Command) =>
    command(p, "hook", {
      summary: "a coding agent's hook: announce mail at session start and prompts, hold a stop while mail waits, deny edits of reserved files, keep the session's state",
      description:
        "Run as a coding agent's command hook (a2a setup AGENT installs them): reads the event's JSON on stdin and answers in that agent's hook format: Claude Code's by default, --agent codex, gemini, opencode, copilot or qwen for theirs (their events are mapped onto these; see README, Other coding agents). session-start: who this session is on the bus and how much mail waits. user-prompt-submit: the unread mail that arrived since the last prompt, as context framed as untrusted input (it stays unread). stop: while unread mail waits, block the stop with a reason telling the model to call check_messages; never twice for the same mail after a continuation, at most --max-blocks times in a row. stop --wait DUR (a worker session): claimable tasks of the queues the session serves (those it called task_claim on) hold it too, and when nothing waits, wait up to DUR for the next message or such a task before letting the session stop. pre-tool-use (for the tools that write files: Edit, Write, MultiEdit, NotebookEdit in Claude Code; apply_patch in Codex; write_file, replace in Gemini CLI; write, edit, multiedit, apply_patch in opencode, through its a2a plugin; create, edit in Copilot CLI; write_file, edit, notebook_edit in Qwen Code): deny the edit when another agent holds the file exclusively (a2a reserve), naming the holder, their pattern, reason and expiry; silent otherwise, and when the store cannot be read (one line on stderr, exit 1: the edit goes ahead). Input of any size is read (a long string keeps only its apply_patch header lines); input that cannot be read as JSON is denied, saying why. notification (Claude Code's Notification, Gemini CLI's, Copilot CLI's, Qwen Code's, opencode's permission.asked and question.asked through its a2a plugin): the session asks its user something (a permission prompt, a question): it is marked needs-you; opencode's plugin also tells when the user answered (answered: true): working again; Claude Code's idle_prompt (its prompt idle a minute) asks nothing and marks idle. wake (--agent opencode: a2a's plugin runs it while a session sits idle; --agent gemini: the model runs it as a background shell command, whose end Gemini CLI brings into the idle session): wait until the wake rule says new mail should wake the idle session (one wake per batch, a loop guard, rate bounds), then answer the wake's text, which says the mail is another agent's data and how to read it, never its body. Every event keeps the session's state that a2a peers shows (session-start: idle; user-prompt-submit: working; a stop let go: idle; notification: needs-you). The session's name is the one its a2a mcp server has (see a2a whoami). Exit 0; 1 with one line on stderr when something failed (never 2, which Claude Code, Codex, Gemini CLI, Copilot CLI and Qwen Code read as a block).",
      examples: [
        "echo '{\"cwd\":\"'$PWD'\"}' | a2a hook session-start",
        "a2a hook stop --wait 5m   # in the Stop hook of a worker session (hook timeout above 300)",
        "echo '{\"tool_name\":\"Edit\",\"tool_input\":{\"file_path\":\"'$PWD'/src/api.ts\"},\"cwd\":\"'$PWD'\"}' | a2a hook pre-tool-use",
      ],
      json: "accepted, as by every command: the answer is always the agent's hook JSON",
    })
      .argument("<event>", "session-start, user-prompt-submit, stop, pre-tool-use, notification or wake")
      .option("--wait <duration>", "stop only: wait this long for the next message when nothing waits (e.g. 5m)")
      .option("--agent <id>", `the agent whose hook this is: ${agentIds()} (default claude)`, "claude")
      .option("--max-blocks <n>", `stop only: at most this many blocks in a row (default ${MAX_BLOCKS}, or 100 with --wait)`)
      .action(action(async (c: Ctx, event: string, o: { agent: string; wait?: string; maxBlocks?: string }) => {
        try {
          const format = Object.hasOwn(AGENTS, o.agent) ? AGENTS[o.agent].hook : undefined;
          if (!format) throw new A2AError("EUSAGE", `unknown --agent ${JSON.stringify(o.agent)}: a2a hook speaks for ${Object.values(AGENTS).filter((a) => a.hook).map((a) => a.id).join(", ")}`);
          if (!EVENTS.includes(event as A2AEvent)) throw new A2AError("EUSAGE", `unknown hook event ${JSON.stringify(event)}: use session-start, user-prompt-submit, stop, pre-tool-use, notification or wake`);
          const waitMs = durationMs(o.wait, "--wait");
          if (waitMs !== undefined && event !== "stop") throw new A2AError("EUSAGE", "--wait is for the stop hook only: a2a hook stop --wait 5m");
          const maxBlocks = o.maxBlocks === undefined ? (waitMs ? 100 : MAX_BLOCKS) : Math.max(1, parseCount(o.maxBlocks, "--max-blocks"));
          const ev = event as A2AEvent;
          let raw: Record<string, unknown>;
          try {
            raw = readInput();
          } catch (e) {
            if (ev === "pre-tool-use") return out(undecided(format, e));
            throw e;
          }
          const input = format.input(raw, ev);
          const cwd = input.cwd ?? process.cwd();
          if (ev === "pre-tool-use") return await preToolUse(c, format, input, cwd);
          const me = await c.bus.presence.sessionName(cwd);
          const say = (text: string | undefined) => (text ? out(text) : undefined);
          if (ev === "notification") {
            if (input.asks) await c.bus.sessions.mark(me.name, "needs-you", input.asks);
            else if (input.answered) await c.bus.sessions.answered(me.name);
            // Its prompt sat idle (no dialog open) since its last answer: idle, whatever a failed
            // hook left.
            else if (input.idle) await c.bus.sessions.mark(me.name, "idle");
            return;
          }
          // Codex's thread id, for its wake (codex queue --thread): from the first event that gives it.
          if (o.agent === "codex" && (ev === "session-start" || ev === "user-prompt-submit")) await c.bus.sessions.noteThread(me.name, input.session);
          if (ev === "session-start") {
            const text = sessionStartText(c.bus.where, me.name, me.why, await c.bus.sessions.start(me.name));
            // A compaction (Claude Code's automatic one runs mid-turn) starts no session: the state stays.
            if (!input.compacted) await c.bus.sessions.mark(me.name, "idle");
            return say(format.context(ev, text));
          }
          if (ev === "user-prompt-submit") {
            const text = promptText(me.name, await c.bus.sessions.prompt(me.name), writerNoun(c.bus.engine));
            await c.bus.sessions.mark(me.name, "working");
            // A prompt that is not a2a's wake is the user's: the wakes' loop guard starts over.
            if (input.prompt !== undefined) await c.bus.sessions.prompted(me.name, input.prompt);
            return text ? say(format.context(ev, text)) : undefined;
          }
          if (ev === "wake") {
            if (!format.wake) throw new A2AError("EUSAGE", `a2a hook wake is for opencode and gemini: ${o.agent} has its wakes from its a2a mcp`);
            const a = await nextWake(c, me.name, format.wake.read, format.wake.endOnHold);
            return a ? out(format.wake.answer(a)) : undefined;
          }
          const continuation = input.continuation;
          let d = await c.bus.sessions.stop(me.name, continuation, maxBlocks, !!waitMs);
          if (!d.block && waitMs && d.unread === 0) {
            await c.bus.sessions.mark(me.name, "waiting", "mail or tasks");
            const got = await c.bus.sessions.waitForWork(me.name, waitMs, c.signal());
            if (got.kind === "done") d = await c.bus.sessions.stop(me.name, continuation, maxBlocks, true);
          }
          await c.bus.sessions.mark(me.name, d.block ? "working" : "idle");
          if (d.block) out(format.block(stopText(me.name, d)));
        } catch (e) {
          // Exit 1 whatever the failure (EIO's status): Claude Code reads 2 as "block".
          throw new A2AError("EIO", `hook ${event}: ${phrase(asA2AError(e), SHELL)}`, { cause: e });
        }
      })),
};
