#!/usr/bin/env bun
// Entry point of the `a2a` binary. `a2a --version` is answered here, before anything else is
// loaded: node:fs alone would add ~1.5 ms to a bare Bun start. Every other call goes to
// cli/dispatch.ts.
import pkg from "../package.json" with { type: "json" };

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  await Bun.write(Bun.stdout, pkg.version + "\n").catch(async (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") return; // the reader left: nothing to say (as io.ts's out())
    await Bun.write(Bun.stderr, `a2a: writing to stdout failed (${e.code ?? "error"}): free space there or redirect the output elsewhere\n`);
    process.exit(1);
  });
} else await import("./dispatch");
