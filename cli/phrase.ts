// How the shell user reads a remedy: arguments are flags (`--if-version 2`), operations are
// commands (`a2a status NAME --json`). The MCP server has its own (cli/mcp/phrase.ts).

import { render, type Phrasebook } from "../lib/core/errors";

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());

export const SHELL: Phrasebook = {
  arg: (name, value) => `--${kebab(name)}${value === undefined ? "" : " " + value}`,
  op: (name, args) => ["a2a", name, ...args.map((a) => render([a], SHELL))].join(" "),
};
