// The work-queue commands: `task` (add, claim, renew, done, fail, wait, list, show, retry,
// cancel); leases on names are cli/commands/leases.ts. Each subcommand is parse -> one lib/tasks
// call -> format; how it ends (output, exit status, signals) is cli/run.ts's.
//
// The scripting form of a claim: `task claim Q --sh` prints shell assignments (TASK_ID,
// TASK_TOKEN, TASK_ATTEMPT, TASK_QUEUE, TASK_EXPIRES_AT, TASK_PAYLOAD), each value in single
// quotes, so `claim=$(a2a task claim Q --wait --sh) && eval "$claim"` keeps claim's exit status
// (3 nothing claimable, 124 timed out) and can never run the payload: it is untrusted input.
// Without --sh or --json the payload goes raw to stdout (like `wait`) and the handle to stderr.

import { attachFiles, collect } from "../attach";
import type { Command } from "commander";
import { fstatSync } from "node:fs";
import { A2AError, arg, op, text } from "../../lib/core/errors";
import { isoTime } from "../../lib/core/time";
import type { TaskClaim } from "../../lib/tasks/claim";
import type { TaskState } from "../../lib/tasks/record";
import type { DamagedChain, TaskView } from "../../lib/tasks/state";
import { age, damagedWarning, preview, table } from "../format";
import { durationMs, durationSec, err, json, out, parseCount, payload } from "../io";
import { action, command, end, type Ctx } from "../run";
import { shellWait } from "../shell-wait";

const AS_TASK = ["--as <name>", "who claims (default: $A2A_AGENT, else HOST.PID)"] as const;

// --after A --after B, --after A,B: every id given.
const ids = (v: string, prev: string[] = []) => [...prev, ...v.split(/[\s,]+/).filter(Boolean)];

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function claimText(c: TaskClaim, form: "json" | "sh" | "raw"): string {
  if (form === "json") return json(c);
  if (form === "sh") {
    const vars: [string, string | number][] = [
      ["TASK_ID", c.id], ["TASK_TOKEN", c.token], ["TASK_ATTEMPT", c.attempt], ["TASK_QUEUE", c.queue], ["TASK_EXPIRES_AT", c.expires_at], ["TASK_PAYLOAD", c.payload],
    ];
    return vars.map(([k, v]) => `${k}=${shq(String(v))}\n`).join("");
  }
  return raw(c.payload);
}

// Byte for byte into pipes; a newline for a person at a terminal.
const raw = (s: string) => (fstatSync(1).isCharacterDevice() && !s.endsWith("\n") ? s + "\n" : s);

function showText(t: TaskView): string {
  const lines: [string, string][] = [
    ["id", t.id], ["queue", t.queue],
    ["state", t.state + (t.blocked_by.length ? ` (waiting for ${t.blocked_by.join(", ")})` : "")],
    ["attempt", `${t.attempt} (${t.attempts_left} of ${t.max_attempts} left in this round)`],
  ];
  if (t.assignee) lines.push(["assignee", `${t.assignee}, lease until ${isoTime(t.lease_expires_at!)}`]);
  if (t.after.length) lines.push(["after", t.after.join(", ")]);
  if (t.key) lines.push(["key", t.key]);
  if (t.deadline) lines.push(["deadline", isoTime(t.deadline)]);
  lines.push(["created", isoTime(t.created_at)], ["updated", isoTime(t.updated_at)]);
  if (t.reason) lines.push(["reason", t.reason]);
  for (const a of t.attempts) lines.push([`attempt ${a.attempt}`, `${a.outcome} (${a.assignee}, ${isoTime(a.ended_at)}): ${a.reason}`]);
  const w = Math.max(...lines.map(([k]) => k.length));
  let s = lines.map(([k, v]) => `${k.padEnd(w)}  ${v}\n`).join("");
  s += `payload (${t.size} bytes):\n${t.payload}${t.payload.endsWith("\n") || !t.payload ? "" : "\n"}`;
  if (t.result !== null) s += `result:\n${t.result}${t.result.endsWith("\n") || !t.result ? "" : "\n"}`;
  return s;
}

function taskCommands(t: Command): void {
  command(t, "add", {
    summary: "add a task to QUEUE; prints its id",
    description: "Add a task to QUEUE with PAYLOAD ('-' or a piped stdin reads stdin, --file a file) and print its id. --key makes a retried add create nothing twice (the same key gives the same id); --after makes it claimable only once every listed task is done, and dead if one of them dies. An unknown --after id or a payload over the limit is refused with exit 2 and nothing written. (--after names tasks that exist already, so no cycle can be formed.)",
    examples: ['id=$(a2a task add build "compile src/a.c")', 'a2a task add build "link" --after "$a" --after "$b"', "jq -c .[] jobs.json | while read -r j; do a2a task add jobs \"$j\" --key \"$j\"; done"],
    json: "print {id, queue, created} (created false: the key named an existing task)",
  })
    .argument("<queue>", "queue name")
    .argument("[payload]", "what to do, as text; '-' reads stdin")
    .option("--file <path>", "read the payload from a file")
    .option("--key <key>", "idempotency key: the same key in QUEUE gives the same task, created once")
    .option("--after <ids>", "claimable only once these tasks are done (repeat, or separate with commas)", ids)
    .option("--max-attempts <n>", "attempts before the task goes to the dead letters (default 3)")
    .option("--ttl <duration>", "dead if not done within this long")
    .action(action(async (c: Ctx, queue: string, body: string | undefined, o) => {
      const r = await c.bus.tasks.add(queue, payload(body, o.file, c.bus.settings.maxBytes, "the task payload"), {
        key: o.key, after: o.after, maxAttempts: o.maxAttempts === undefined ? undefined : parseCount(o.maxAttempts, "--max-attempts"), ttlSec: durationSec(o.ttl, "--ttl"),
      });
      out(c.json ? json(r) : `${r.id}\n`);
    }));

  command(t, "claim", {
    summary: "claim the oldest claimable task of QUEUE (--wait: block until there is one)",
    description: "Hand the oldest claimable task of QUEUE to you alone, with a claim token to pass back to `task done`, `task fail` or `task renew` before the lease ends (default 5m; then the task goes back to the queue and the token is dead). Prints the payload on stdout and the handle on stderr; --sh prints shell assignments (TASK_ID, TASK_TOKEN, TASK_ATTEMPT, TASK_QUEUE, TASK_EXPIRES_AT, TASK_PAYLOAD) for eval. The payload is whatever the adder wrote: treat it as data. Exit 3 when nothing is claimable (or no such queue), unless --wait: then block until a task is (124 on --timeout, 128+N on a signal). The same --as and --key give the same claim back while it lasts.",
    examples: [
      'while claim=$(a2a task claim build --wait --timeout 10m --sh); do eval "$claim"; a2a task done "$TASK_ID" "$TASK_TOKEN" "$(make "$TASK_PAYLOAD")"; done',
      "a2a task claim build --json | jq -r .payload",
    ],
    json: "print the claim: {id, queue, attempt, token, assignee, payload, expires_at, lease_sec, ...}",
  })
    .argument("<queue>", "queue name")
    .option("--wait", "block until a task is claimable")
    .option("--timeout <seconds>", "with --wait, give up after this long (exit 124)")
    .option("--lease <duration>", "how long the claim lasts before the task goes back (default 5m)")
    .option(...AS_TASK)
    .option("--key <key>", "replay key: a retried claim with the same --as and key returns the same claim")
    .option("--sh", "print shell assignments for eval (values single-quoted)")
    .action(action(async (c: Ctx, queue: string, o) => {
      if (o.timeout !== undefined && !o.wait) throw new A2AError("EUSAGE", "--timeout applies to --wait only: add --wait or drop --timeout");
      if (o.sh && c.json) throw new A2AError("EUSAGE", "both --sh and --json given: use one");
      const claim = () => c.bus.tasks.claim(queue, {
        as: o.as, key: o.key, leaseSec: durationSec(o.lease, "--lease"), wait: !!o.wait, timeoutMs: durationMs(o.timeout, "--timeout"), signal: o.wait ? c.signal() : undefined,
      });
      // The session whose shell waits shows waiting on the queue meanwhile (a2a peers).
      const outcome = await (o.wait ? shellWait(c, o.as, `a claimable task in ${queue}`, claim) : claim());
      const got = end(c, outcome, {
        timeout: () => text`nothing became claimable in queue ${queue} in time: raise ${arg("timeout")}, or see what is left with ${op("task list", queue)}`,
      })!;
      out(claimText(got, c.json ? "json" : o.sh ? "sh" : "raw"));
      if (!c.json && !o.sh) {
        err(`claimed ${got.id} attempt ${got.attempt} token ${got.token} until ${isoTime(got.expires_at)}${got.replayed ? " (replayed)" : ""}: finish with a2a task done ${got.id} ${got.token} RESULT\n`);
      }
    }));

  command(t, "renew", {
    summary: "extend the lease of a task you hold",
    description: "Extend the lease of the task you claimed, so it is not handed to another worker while you are still on it: by --lease, else by the lease the claim was given. Exit 4 if TOKEN is no longer current (the lease ran out and the task was reassigned, or it is done, failed or cancelled), with what happened; nothing changes.",
    examples: ['a2a task renew "$TASK_ID" "$TASK_TOKEN" --lease 10m'],
    json: "print {id, attempt, expires_at}",
    quiet: true,
  })
    .argument("<id>", "task id")
    .argument("<token>", "the claim token task claim printed")
    .option("--lease <duration>", "the new lease, from now (default: the claim's)")
    .action(action(async (c: Ctx, id: string, token: string, o) => {
      const r = await c.bus.tasks.renew(id, token, { leaseSec: durationSec(o.lease, "--lease") });
      c.confirm(r, `renewed ${r.id} attempt ${r.attempt} until ${isoTime(r.expires_at)}`);
    }));

  command(t, "done", {
    summary: "finish a task you hold, with its RESULT",
    description: "Mark the task you claimed done with RESULT (optional; '-' reads stdin, --file a file): `task wait` returns it and the tasks that wait for this one become claimable. Exit 4 if TOKEN is no longer current (the lease ran out and the task was reassigned, or it is already done or cancelled), with what happened; nothing changes.",
    examples: ['a2a task done "$TASK_ID" "$TASK_TOKEN" "built ok"', 'make 2>&1 | a2a task done "$TASK_ID" "$TASK_TOKEN" -', 'a2a task done "$TASK_ID" "$TASK_TOKEN" "the build" --attach dist.tar.gz'],
    json: "print {id, queue, attempt, state}",
    quiet: true,
  })
    .argument("<id>", "task id")
    .argument("<token>", "the claim token task claim printed")
    .argument("[result]", "the result text, or '-' for stdin")
    .option("--file <path>", "read the result from a file")
    .option("--attach <file>", "store FILE (any size) and hand it over with the result; repeat for more", collect)
    .action(action(async (c: Ctx, id: string, token: string, result: string | undefined, o) => {
      const body = result === undefined && o.file === undefined ? "" : payload(result, o.file, c.bus.settings.maxBytes, "the result");
      const r = await c.bus.tasks.complete(id, token, body, await attachFiles(c.bus, o.attach));
      c.confirm(r, `done ${r.id} (attempt ${r.attempt})`);
    }));

  command(t, "fail", {
    summary: "give up a task you hold: back to the queue, or dead",
    description: "Give up the task you claimed, with --reason: it goes back to the queue for another attempt, or to the queue's dead letters once its attempts are used up (--max-attempts of task add, default 3) or with --no-retry. Exit 4 if TOKEN is no longer current; nothing changes.",
    examples: ['a2a task fail "$TASK_ID" "$TASK_TOKEN" --reason "tests failed"', 'a2a task fail "$TASK_ID" "$TASK_TOKEN" --reason "bad input" --no-retry'],
    json: "print {id, queue, attempt, state, reason} (state ready: it will be retried)",
    quiet: true,
  })
    .argument("<id>", "task id")
    .argument("<token>", "the claim token task claim printed")
    .option("--reason <text>", "why it failed (kept with the attempt)")
    .option("--no-retry", "dead at once, no further attempt")
    .action(action(async (c: Ctx, id: string, token: string, o) => {
      const r = await c.bus.tasks.fail(id, token, { reason: o.reason, retry: o.retry });
      c.confirm(r, r.state === "dead" ? `failed ${r.id} attempt ${r.attempt}: dead (${r.reason})` : `failed ${r.id} attempt ${r.attempt}: back in queue ${r.queue}`);
    }));

  command(t, "wait", {
    summary: "block until tasks are done and print their results (exit 1 if one is dead)",
    description: "Block until every task ID is done, then print the results: one ID prints its raw result, so x=$(a2a task wait $id) works; several print each under a '==> ID <==' header. If one of them is dead (its attempts used up, cancelled, a dependency dead), exit 1 with its reason at once. Exit 3 for an unknown id, 124 on --timeout, 128+N on a signal.",
    examples: ['out=$(a2a task wait "$id")', 'a2a task wait "$a" "$b" --timeout 30m --json'],
    json: "print the task (one id) or an object of tasks keyed by id; a dead task is printed, then exit 1",
  })
    .argument("<ids...>", "task ids")
    .option("--timeout <seconds>", "give up after this long (exit 124)")
    .action(action(async (c: Ctx, list: string[], o) => {
      const unique = [...new Set(list)];
      const outcome = await c.bus.tasks.wait(unique, { timeoutMs: durationMs(o.timeout, "--timeout"), signal: c.signal() });
      const r = end(c, outcome, {
        timeout: (pending) => text`timed out waiting for task ${pending.join(", ")}: not done in time; raise ${arg("timeout")} or look at it with ${op("task show", pending[0])}`,
      })!;
      if (r.state === "dead") {
        const d = r.tasks[0];
        if (c.json) out(json(d));
        const back =
          d.retry_id === d.id ? text`put it back with ${op("task retry", d.id)}`
          : d.retry_id ? text`it comes back when ${d.retry_id} does: ${op("task retry", d.retry_id)}`
          : text`no retry brings it back (${op("task cancel", d.id)} ends it)`;
        throw new A2AError("EFAILED", [...text`task ${d.id} is dead: ${d.reason ?? "no reason given"}; see ${op("task show", d.id)}, or `, ...back], { data: { id: d.id, retry_id: d.retry_id ?? null } });
      }
      if (c.json) return out(json(unique.length === 1 ? r.tasks[0] : Object.fromEntries(r.tasks.map((v) => [v.id, v]))));
      if (unique.length === 1) return out(raw(r.tasks[0].result ?? ""));
      out(r.tasks.map((v) => `==> ${v.id} <==\n${v.result ?? ""}${(v.result ?? "").endsWith("\n") ? "" : "\n"}`).join("\n"));
    }));

  command(t, "list", {
    summary: "list tasks (of QUEUE), oldest first",
    description: "List tasks, oldest first, of QUEUE or of every queue: id, queue, state (ready, claimed, blocked, done, dead), attempt, assignee, age and a preview of the payload. --state shows one state only (dead: the dead letters). A task whose record is damaged is left out, with a warning on stderr naming its file (`a2a task cancel ID` marks it dead). Exit 3 if QUEUE does not exist.",
    examples: ["a2a task list build", "a2a task list build --state dead", "a2a task list --json | jq 'group_by(.state)'"],
    json: "print the tasks as a JSON array",
  })
    .argument("[queue]", "only this queue")
    .option("--state <state>", "only tasks in this state: ready, claimed, blocked, done or dead")
    .action(action(async (c: Ctx, queue: string | undefined, o) => {
      const damaged: DamagedChain[] = [];
      const tasks = await c.bus.tasks.list({ queue, state: o.state as TaskState | undefined, damaged });
      if (damaged.length) err(damagedWarning(damaged));
      if (queue !== undefined && !tasks.length && !await c.bus.tasks.queueExists(queue)) {
        throw new A2AError("ENOTFOUND", text`no queue ${queue} in this store: check the name (${op("task list")} lists every queue)`, { data: { queue } });
      }
      if (c.json) return out(json(tasks));
      if (!tasks.length) return out(queue === undefined && o.state === undefined ? "no tasks yet: a2a task add QUEUE PAYLOAD adds one\n" : "no such tasks\n");
      out(table(
        ["ID", "QUEUE", "STATE", "ATTEMPT", "ASSIGNEE", "AGE", "PAYLOAD"],
        tasks.map((v) => [v.id, v.queue, v.state, `${v.max_attempts - v.attempts_left}/${v.max_attempts}`, v.assignee ?? "-", age(v.created_at), preview(v.payload, 40)]),
      ));
    }));

  command(t, "show", {
    summary: "show one task: state, attempts and their reasons, payload, result",
    description: "Show task ID in full: its state (blocked: by which tasks), attempts with each one's outcome and reason, holder and lease, dependencies, payload and result. Exit 3 if there is no such task.",
    examples: ['a2a task show "$id"', 'a2a task show "$id" --json | jq .attempts'],
    json: "print the task as JSON (the claim token is never shown)",
  })
    .argument("<id>", "task id")
    .action(action(async (c: Ctx, id: string) => {
      const v = await c.bus.tasks.show(id);
      out(c.json ? json(v) : showText(v));
    }));

  command(t, "retry", {
    summary: "put a dead task back in its queue, with fresh attempts",
    description: "Put a dead task (a dead letter) back in its queue with a fresh round of attempts; its dependants wait for it again. Old claim tokens stay dead. Exit 4 if the task is not dead, or dead only because a dependency is (retry that one).",
    examples: ['a2a task retry "$id"', "a2a task list build --state dead --json | jq -r '.[].id' | xargs -n1 a2a task retry"],
    json: "print the task as JSON",
    quiet: true,
  })
    .argument("<id>", "task id")
    .action(action(async (c: Ctx, id: string) => {
      const v = await c.bus.tasks.retry(id);
      c.confirm(v, `retried ${v.id}: ${v.state} in queue ${v.queue}`);
    }));

  command(t, "cancel", {
    summary: "cancel a task that is not done (dead, reason cancelled)",
    description: "Cancel a task that is not done: it becomes dead with reason \"cancelled\" (and its dependants with it); a worker holding it is refused (exit 4) when it renews or finishes. Exit 4 if the task is already done. A task whose record is damaged is written dead above the damaged file, from its last readable version (a retry then brings that back).",
    examples: ['a2a task cancel "$id" --reason "not needed any more"'],
    json: "print the task as JSON",
    quiet: true,
  })
    .argument("<id>", "task id")
    .option("--reason <text>", "why (kept as the reason)")
    .action(action(async (c: Ctx, id: string, o) => {
      const v = await c.bus.tasks.cancel(id, { reason: o.reason });
      c.confirm(v, `cancelled ${v.id}`);
    }));
}

export const commands = {
  task: (p: Command) => {
    const t = command(p, "task", {
      summary: "work queues: add tasks, claim one at a time, finish, wait for results",
      description: "Work queues: a lead adds tasks to a queue (with dependencies: --after), workers claim the oldest claimable one each, with a token and a lease, and finish it (done, with a result) or give it up (fail). A crashed worker's task goes back to the queue when its lease runs out; a task that keeps failing goes to the dead letters. Subcommands: add, claim, renew, done, fail, wait, list, show, retry, cancel.",
      examples: [
        'a=$(a2a task add build "compile a"); a2a task add build "link" --after "$a"',
        'while claim=$(a2a task claim build --wait --sh); do eval "$claim"; a2a task done "$TASK_ID" "$TASK_TOKEN" "$(./build.sh "$TASK_PAYLOAD")"; done',
        'a2a task wait "$a"',
      ],
      json: "every subcommand takes --json",
    });
    taskCommands(t);
    return t;
  },
};
