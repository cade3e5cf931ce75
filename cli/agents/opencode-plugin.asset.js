// a2a for opencode: written by `a2a setup opencode`, which owns this file
// (`a2a setup opencode --remove` deletes it). Each hook runs `a2a hook EVENT --agent opencode`,
// which decides; a2a failing never stops the session: one line in opencode's log, and it goes on.
//   each model request      session-start (first), user-prompt-submit: a2a's words join the system prompt
//   session idle            stop: while unread mail waits, prompt the session with the reason;
//                           else wake: one a2a waiter while the session sits idle (ended when a
//                           turn starts), whose answer prompts the session with a wake (or says
//                           in opencode's log that the loop guard holds)
//   write/edit/apply_patch  pre-tool-use: refuse the edit of a file another agent reserved
//   permission/question     notification: the session asks its user (a2a peers: needs-you), and
//                           when answered, works again
import { spawn } from "node:child_process";

const A2A = __A2A__;
const STOP_ARGS = __STOP_ARGS__;
const STOP_LIMIT_SEC = __STOP_LIMIT_SEC__; // the stop hook's wait and 30 s more
const EDIT_TOOLS = ["write", "edit", "multiedit", "apply_patch", "patch"];

// a2a's answer to one hook ({context}, {block} or {deny}), or undefined: nothing to say, or a2a
// failed (logged), or the process was ended (a wake waiter when a turn starts: not a failure).
// The process is in `running` until it ends; `spawned` gets it (to end a waiter).
function runHook(event, input, log, running, spawned = () => {}) {
  return new Promise((resolve) => {
    const args = [...A2A.slice(1), "hook", event, "--agent", "opencode", ...(event === "stop" ? STOP_ARGS : [])];
    let out = "";
    let err = "";
    let done = false;
    const finish = (answer, problem) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      running.delete(child);
      if (problem) log(`a2a hook ${event}: ${problem}`);
      resolve(answer);
    };
    const child = spawn(A2A[0], args, { cwd: input.cwd, stdio: ["pipe", "pipe", "pipe"] });
    running.add(child);
    spawned(child);
    // A wake waits as long as the session sits idle: no limit but the end of its wait.
    const timer = event === "wake" ? undefined : setTimeout(() => child.kill(), (event === "stop" ? STOP_LIMIT_SEC : 10) * 1000);
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.stdin.on("error", () => {});
    child.on("error", (e) => finish(undefined, e.message));
    child.on("close", (code, signal) => {
      if (signal && event === "wake") return finish(undefined);
      if (code !== 0) return finish(undefined, err.trim().split("\n").pop() || `exit ${code}`);
      try {
        finish(out.trim() ? JSON.parse(out) : undefined);
      } catch {
        finish(undefined, "its answer is not JSON");
      }
    });
    child.stdin.end(JSON.stringify(input));
  });
}

// What a permission prompt or a question asks the user, as a2a peers shows it.
function asked(event) {
  const p = event.properties ?? {};
  if (event.type === "question.asked") return `question: ${p.questions?.[0]?.question ?? p.questions?.[0]?.header ?? "a question"}`;
  return `permission: ${p.permission ?? "a tool"}${p.patterns?.length ? ` (${p.patterns.join(", ")})` : ""}`;
}

export const A2ABus = async ({ client, directory }) => {
  const log = (message) => Promise.resolve(client.app.log({ body: { service: "a2a", level: "warn", message } })).catch(() => {});
  const turns = new Map(); // session id -> Promise of what a2a said this turn (in order, one hook at a time)
  const prompted = new Set(); // sessions a2a just prompted: their next message is a2a's continuation
  const continued = new Set(); // sessions whose turn is a2a's continuation
  const prompts = new Map(); // session id -> the text of the prompt that started its turn
  const running = new Set(); // hook processes not ended yet: a stop --wait outlives `opencode run` otherwise
  process.once("exit", () => running.forEach((child) => child.kill()));
  const hook = (event, input, spawned) => runHook(event, input, log, running, spawned);
  // One waiter per opencode process: its sessions share one a2a name (the directory's), so one
  // batch of mail wakes one session, the last to go idle.
  let waiter; // {id, child}: the `a2a hook wake` process while session `id` sits idle
  const endWait = () => {
    waiter?.child.kill();
    waiter = undefined;
  };
  // Prompts session `id` with a2a's reason to look (a stop's block or a wake), marked as a2a's.
  const prompt = async (id, text) => {
    prompted.add(id);
    try {
      await client.session.promptAsync({ path: { id }, body: { parts: [{ type: "text", text }] } });
    } catch (e) {
      prompted.delete(id);
      log(`a2a: could not continue the session: ${e.message}`);
    }
  };
  // While a session sits idle one waiter asks a2a whether mail wakes it; a turn that starts
  // first (the user's prompt) ends the waiter, so a wake never follows the user into a turn.
  const waitForWake = (id) => {
    endWait();
    const me = { id };
    hook("wake", { cwd: directory }, (child) => ((me.child = child), (waiter = me))).then((answer) => {
      if (waiter !== me) return; // ended: a turn started
      waiter = undefined;
      if (answer?.block) prompt(id, answer.block);
      else if (answer?.held) log(answer.held);
    });
  };
  return {
    "chat.message": async ({ sessionID }, output) => {
      endWait();
      turns.set(sessionID, (turns.get(sessionID) ?? Promise.resolve(null)).then((said) => (said === null ? null : [])));
      if (prompted.delete(sessionID)) continued.add(sessionID);
      else continued.delete(sessionID);
      const text = (output?.parts ?? []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      prompts.set(sessionID, text);
    },
    "experimental.chat.system.transform": async ({ sessionID }, output) => {
      if (!sessionID) return;
      const next = (turns.get(sessionID) ?? Promise.resolve(null)).then(async (said) => {
        const now = said ?? [];
        for (const event of said === null ? ["session-start", "user-prompt-submit"] : ["user-prompt-submit"]) {
          // The user's prompt (not a2a's continuation or wake) starts a2a's loop guard over.
          const prompt = continued.has(sessionID) ? undefined : prompts.get(sessionID) ?? "";
          const answer = await hook(event, { cwd: directory, continuation: continued.has(sessionID), prompt });
          if (answer?.context) now.push(answer.context);
        }
        return now;
      });
      turns.set(sessionID, next);
      output.system.push(...(await next));
    },
    event: async ({ event }) => {
      if (event.type === "session.status" && event.properties.status?.type === "busy") return endWait();
      if (event.type === "permission.asked" || event.type === "question.asked") return void hook("notification", { cwd: directory, asks: asked(event) });
      if (["permission.replied", "question.replied", "question.rejected"].includes(event.type)) return void hook("notification", { cwd: directory, answered: true });
      if (event.type !== "session.idle") return;
      const id = event.properties.sessionID;
      const answer = await hook("stop", { cwd: directory, continuation: continued.has(id) });
      if (answer?.block) return prompt(id, answer.block);
      waitForWake(id);
    },
    "tool.execute.before": async ({ tool }, output) => {
      if (!EDIT_TOOLS.includes(tool)) return;
      const answer = await hook("pre-tool-use", { cwd: directory, tool, args: output.args });
      if (answer?.deny) throw new Error(answer.deny);
    },
  };
};
