// How a model reads a remedy: arguments are tool parameters (`if_version: 2`), operations are
// tools (`agent_status`); an operation with no tool is named as the shell command a person
// would run (the CLI's phrasing, cli/phrase.ts), so the model can relay it to its user.

import { render, type Phrasebook } from "../../lib/core/errors";
import { SHELL } from "../phrase";

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());

// The tool that does what a CLI command does, where there is one.
const TOOL: Record<string, string> = {
  status: "agent_status",
  start: "agent_start",
  publish: "agent_publish",
  clear: "agent_clear",
  wait: "agent_wait",
  tail: "agent_tail",
  inbox: "check_messages",
  recv: "check_messages",
  peers: "list_peers",
  whoami: "whoami",
  send: "send_message",
  "task add": "task_add",
  "task claim": "task_claim",
  "task list": "task_list",
  "task show": "task_show",
  "task retry": "task_retry",
  "lease take": "lease_take",
  "lease list": "lease_list",
  reserve: "reserve_files",
  release: "release_files",
  reservations: "list_reservations",
};

export const MODEL: Phrasebook = {
  arg: (name, value) => (value === undefined ? snake(name) : `${snake(name)}: ${JSON.stringify(value)}`),
  op: (name, args) => {
    const tool = TOOL[name];
    if (!tool) return `the shell command \`${render([{ op: name, args }], SHELL)}\` (ask your user to run it)`;
    const params = args.filter((a) => typeof a === "string").join(", ");
    return `${tool}(${params})`;
  },
};
