// Messaging commands (issue 4): not built yet.
import type { Command } from "commander";
export function registerMessageCommands(_program: Command): void {}
