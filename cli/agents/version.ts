// An agent CLI's version, for doctor: from the package.json of the npm package its command is a
// link into (no process started: Gemini CLI takes ~3 s to print its version), else from
// `COMMAND --version` (its first line), else undefined.

import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";

export async function agentVersion(bin: string, npm: string): Promise<string | undefined> {
  try {
    for (let dir = dirname(realpathSync(bin)); dir !== dirname(dir); dir = dirname(dir)) {
      let pkg: { name?: string; version?: string } | undefined;
      try {
        pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      } catch {
        continue;
      }
      if (pkg?.name === npm && typeof pkg.version === "string") return pkg.version;
    }
  } catch {
    // not a link we can follow: ask the command
  }
  const p = Bun.spawn({ cmd: [bin, "--version"], stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  const timer = setTimeout(() => p.kill(), 15_000);
  const [text, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
  clearTimeout(timer);
  const line = text.split("\n")[0].trim();
  return code === 0 && line ? line.slice(0, 80) : undefined;
}
