// The architecture rules of the developers' guide that a grep can check: lib/ is the engine and
// imports no adapter library; store files are written only through lib/fs/atomic.ts; the watch
// primitive lives only in lib/fs/watch.ts; lib/ throws only A2AError; no test is switched off.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { BUILD_ARGS } from "../build";
import { ROOT } from "../harness/run";

function sources(dir: string, ext = /\.ts$/): string[] {
  return (readdirSync(join(ROOT, dir), { recursive: true }) as string[])
    .filter((f) => ext.test(f) && !f.includes("node_modules"))
    .map((f) => join(ROOT, dir, f))
    .sort();
}

// Source text without comments, so a comment that mentions an API does not count as a use.
function code(file: string): string {
  return readFileSync(file, "utf8")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

// [file, line] pairs where `re` matches the code of `files`.
function hits(files: string[], re: RegExp): string[] {
  const out: string[] = [];
  for (const f of files) {
    code(f)
      .split("\n")
      .forEach((line, i) => {
        if (re.test(line)) out.push(`${relative(ROOT, f)}:${i + 1}: ${line.trim()}`);
      });
  }
  return out;
}

// What a module imports at run time (type-only imports are gone), by Bun's own scanner: import
// and export-from statements, bare imports, require() and import() of literal paths.
const scanner = new Bun.Transpiler({ loader: "ts" });
const scan = (file: string) => scanner.scanImports(readFileSync(file, "utf8").replace(/^#!.*/, "")); // a shebang line is no import
const importsOf = (file: string): string[] => scan(file).map((i) => i.path);
const staticImportsOf = (file: string): string[] => scan(file).filter((i) => i.kind === "import-statement").map((i) => i.path);

const LIB = sources("lib");
const CLI = sources("cli");

describe("architecture", () => {
  test("there is something to check", () => {
    expect(LIB.map((f) => relative(ROOT, f))).toEqual(expect.arrayContaining(["lib/fs/atomic.ts", "lib/slots/slot.ts", "lib/core/watch.ts", "lib/fs/paths.ts"]));
    expect(CLI.length).toBeGreaterThan(0);
  });

  test("lib/ imports neither commander nor the MCP SDK (nor zod)", () => {
    expect(hits(LIB, /(from|import\(|require\()\s*["'](commander|@modelcontextprotocol\/[^"']*|zod)["']/)).toEqual([]);
  });

  // Moving a complete file (rename/link, e.g. a message from new/ to cur/) writes no content
  // and is atomic, so it is allowed; putting bytes into a file is atomic.ts's job alone.
  test("only lib/fs/atomic.ts (and user-file.ts, its twin for files outside a store) writes file content: no other write API in lib/ or cli/", () => {
    const others = [...LIB, ...CLI].filter((f) => !f.endsWith("lib/fs/atomic.ts") && !f.endsWith("lib/core/user-file.ts"));
    const writers = /\b(writeFileSync|appendFileSync|symlinkSync|copyFileSync|cpSync|truncateSync|ftruncateSync|createWriteStream|writeFile|appendFile|copyFile)\s*\(|Bun\.write\s*\((?!\s*Bun\.std(out|err)\b)|node:fs\/promises|\bfs\/promises/;
    expect(hits(others, writers)).toEqual([]);
    // Opening for writing counts too (reading through openSync is fine).
    expect(hits(others, /\bopenSync\s*\([^)]*(["'][wa]\+?x?["']|O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND)/)).toEqual([]);
    // writeSync (and Bun.write, above) only to the standard streams: fd 1 or 2, or cli/io.ts's writeAll(fd).
    expect(hits(others, /\bwriteSync\s*\((?!\s*[12]\s*,)/).filter((h) => !h.startsWith("cli/io.ts:"))).toEqual([]);
  });

  test("only lib/fs/watch.ts opens directory watches; chokidar stays out of the wake path", () => {
    const others = [...LIB, ...CLI].filter((f) => !f.endsWith("lib/fs/watch.ts"));
    expect(hits(others, /\bfs\.(watch|watchFile)\s*\(/)).toEqual([]);
    expect(hits(others, /import\s*\{[^}]*\b(watch|watchFile)\b[^}]*\}\s*from\s*["'](node:)?fs["']/)).toEqual([]);
    expect(hits([...LIB, ...CLI], /["']chokidar["']/)).toEqual([]);
  });

  test("lib/ throws only A2AError and never exits or prints", () => {
    expect(hits(LIB, /throw new (?!A2AError\b)\w+/)).toEqual([]);
    expect(hits(LIB, /process\.(exit|stdout|stderr)\b|console\.\w+\(/)).toEqual([]);
  });

  // Issue 32: lib/ returns codes and data, and names what a caller can do with arg()/op(): the
  // front ends phrase them (a model has no --since, no `a2a allow`).
  test("lib/ spells no CLI flag or command in what it says", () => {
    expect(hits(LIB, /["'`](--(since|from|dir|as)\b|[^"'`]*(\ba2a (allow|recv|send|clear|status)\b|run a2a doctor|of a2a init --print-sql|SQL a2a init|or a2a init\b|give --repo|\b(send|put|get|gc|recv|doctor) --[a-z]))/)).toEqual([]);
  });

  test("lib/ keeps no module-level mutable state", () => {
    expect(hits(LIB, /^(export\s+)?(let|var)\s/)).toEqual([]);
  });

  // Runtime state belongs in typed fields of the Store (lib/core/config.ts), not in fields
  // smuggled onto it through a cast ("store as Store & { _watches?: ... }").
  test("no state hidden on an object through a cast", () => {
    expect(hits([...LIB, ...CLI], /\bas\s+\w+\s*&\s*\{/)).toEqual([]);
    expect(hits([...LIB, ...CLI], /\bas\s+(any|unknown)\)\s*\.\s*_\w+\s*=|\.\s*_[a-z]\w*\s*\?\?=/)).toEqual([]);
  });

  test("every A2A_* setting is read in lib/core/config.ts only", () => {
    const others = [...LIB, ...CLI].filter((f) => !f.endsWith("lib/core/config.ts"));
    // A2A_DEBUG is read by cli/main.ts too: it must work when the store cannot even be opened.
    expect(hits(others, /\benv\s*(\.\s*A2A_(?!DEBUG\b)\w+|\[\s*["'`]A2A_)/)).toEqual([]);
  });

  // lib/ is layered: core/ at the bottom imports nothing above it; each concept imports core/
  // and only the concepts it builds on; the joins (sessions, the dashboard's read model, the
  // store's maintenance) sit above the concepts they join. Every lib file is in a room, except
  // lib/bus.ts, the seam on top (docs/ENGINE.md): it binds every room and nothing imports it.
  test("lib/ concepts import core/ and nothing sideways", () => {
    const allowed: Record<string, string[]> = {
      core: [],
      // The file engine's storage of each room whose rules reach storage through an interface
      // (lib/<room>/storage.ts): it implements that interface, with the room's record codec.
      fs: ["core", "engine", "slots", "mail", "leases", "reservations", "topics", "presence", "sessions", "tasks", "blobs", "search", "dashboard"],
      slots: ["core", "engine", "blobs"],
      blobs: ["core", "engine"],
      mail: ["core", "engine", "presence", "blobs"],
      topics: ["core", "engine"],
      presence: ["core", "engine"],
      tasks: ["core", "engine", "blobs"],
      leases: ["core", "engine", "tasks"],
      reservations: ["core", "engine", "presence", "tasks"],
      // a2a guard: git's hooks over the reservation rules, committer named as presence names it.
      guard: ["core", "presence", "reservations"],
      // (and, for a session's state, the task and the reservations it holds)
      sessions: ["core", "engine", "mail", "presence", "tasks", "reservations"],
      // fs: the file-only modules the next test names; sessions: each session's state
      // (lib/sessions/state.ts) on its agent's row.
      dashboard: ["core", "engine", "fs", "slots", "mail", "topics", "presence", "tasks", "leases", "reservations", "blobs", "sessions"],
      maintenance: ["core", "engine", "fs", "slots", "mail", "topics", "presence", "tasks", "leases", "reservations", "sessions", "blobs"],
      // a2a crew: a supervisor over the rooms it composes (a lease, task claims, the workers'
      // presence and state, their logs in slots, its control by mail).
      crew: ["core", "engine", "slots", "mail", "tasks", "leases", "presence", "sessions"],
      // Search: a join over the rooms it reads (mail's visibility rule, each room's records).
      search: ["core", "engine", "mail"],
      // a2a export and import: every room's storage, read and written through its interface.
      move: ["core", "engine", "slots", "mail", "topics", "presence", "tasks", "leases", "blobs"],
      // The PostgreSQL engine's storage of the rooms it keeps (issue 22), as fs/ is the file engine's;
      // its gc and the dashboard's feed on a database (the rooms' own, loaded on demand).
      pg: ["core", "engine", "slots", "mail", "tasks", "presence", "sessions", "topics", "leases", "reservations", "blobs", "search", "dashboard"],
      // The Engine (lib/engine/engine.ts): the interface over every room's storage interface,
      // types only; and the opening (open.ts), which gives a directory the file engine.
      engine: ["core", "fs", "slots", "mail", "tasks", "presence", "sessions", "topics", "leases", "reservations", "blobs", "search", "maintenance", "dashboard"],
    };
    // The Store (core/config.ts) holds its Engine, and the file engine's runtime state (its
    // directory watches, its inotify instance), typed: type imports, which load nothing.
    const typeOnly: Record<string, string[]> = { "core/config.ts": ["engine", "fs"] };
    const bad: string[] = [];
    for (const f of LIB) {
      const rel = relative(join(ROOT, "lib"), f);
      const from = rel.includes("/") ? rel.split("/")[0] : "(top)";
      if (from === "(top)" && rel !== "bus.ts") bad.push(`${rel} sits loose at lib/'s root: give it a room (a concept's folder, or a join's)`);
      for (const m of code(f).matchAll(/(import\s+type\s[^;]*?)?from\s+["'](\.[^"']+)["']/g)) {
        const target = relative(join(ROOT, "lib"), join(f, "..", m[2]));
        if (m[1] && typeOnly[rel]?.includes(target.split("/")[0])) continue;
        if (target.startsWith("..")) bad.push(`${rel} imports ${m[2]}, outside lib/`);
        const to = target.includes("/") ? target.split("/")[0] : "(top)";
        if (to === "(top)" && from !== "(top)") bad.push(`${rel} imports lib/${target}: only front ends use the bus`);
        if (from === "(top)" || to === from) continue; // (top): reported above, or the bus
        if (!(from in allowed)) bad.push(`${rel}: lib/${from}/ is not a known concept (add it to this test)`);
        else if (to === "(top)" || !allowed[from].includes(to)) bad.push(`${rel} imports ${target}`);
      }
    }
    expect(bad).toEqual([]);
  });

  // Issue 34: the engine is chosen once, when the store is opened (lib/engine/open.ts, lib/bus.ts),
  // and held by the Store (`store.engine`, lib/engine/engine.ts); a room asks it and never names
  // an engine. So no room imports an engine's folder (lib/fs, lib/pg), at run time or for a type,
  // statically or by import()/require(): no import circle between a room and an engine, and each
  // engine is a folder that could be read, or deleted, alone (as a Kysely dialect or a Keyv
  // adapter). The few modules below are the file engine's own still kept in a room, each named.
  test("no room imports an engine, and only the opening and lib/pg name store.pg", () => {
    const ENGINES = ["fs", "pg"];
    const NOT_ROOMS = new Set(["core", "engine", ...ENGINES]);
    const fileOnly: Record<string, string> = {
      "lib/maintenance/room.ts": "removeTombstone: doctor's probe slot on a directory (lib/fs/gc.ts)",
      "lib/maintenance/audit.ts": "doctor's audit of a shared directory's blob files",
      "lib/maintenance/describe.ts": "doctor's description of a directory (how it is watched: lib/fs/watch.ts wakeMode)",
      "lib/dashboard/tasks.ts": "the task board's directories, which the file engine's feed watches",
    };
    const bad: string[] = [];
    for (const f of LIB) {
      const rel = relative(ROOT, f);
      const room = relative(join(ROOT, "lib"), f).split("/")[0];
      if (!rel.slice(4).includes("/") || NOT_ROOMS.has(room) || rel in fileOnly) continue;
      const specs = [...importsOf(f), ...[...code(f).matchAll(/from\s+["']([^"']+)["']/g)].map((m) => m[1])];
      for (const spec of new Set(specs)) {
        if (!spec.startsWith(".")) continue;
        const to = relative(join(ROOT, "lib"), join(f, "..", spec)).split("/")[0];
        if (ENGINES.includes(to)) bad.push(`${rel} imports ${spec}: ask the store's engine (store.engine, lib/engine/engine.ts) instead`);
      }
    }
    expect(bad).toEqual([]);
    const opening = ["lib/bus.ts", "lib/engine/open.ts"];
    expect(hits(LIB, /\bstore\.pg\b/).filter((h) => !h.startsWith("lib/pg/") && !opening.some((o) => h.startsWith(o + ":")))).toEqual([]);
    // The exceptions are still the file engine's (a stale one is taken off the list).
    for (const f of Object.keys(fileOnly)) expect(importsOf(join(ROOT, f)).some((s) => relative(join(ROOT, "lib"), join(ROOT, f, "..", s)).startsWith("fs/"))).toBe(true);
  });

  // lib/core is what every room and engine may use (errors, time, names, outcomes, channels, the
  // record bound, whether a holder is alive): it keeps no store. The file engine's plumbing
  // (atomic writes, the directory guard, paths, modes, bounded reads, locks, watches) lives in
  // lib/fs. The few core modules that reach the filesystem are named, each about files that are
  // no store's.
  test("lib/core reaches the filesystem only where it is no store's", () => {
    const named: Record<string, string> = {
      "lib/core/location.ts": "where the user says the store is (A2A_DIR): its path checked before any engine is chosen",
      "lib/core/platform.ts": "the OS's answers (a filesystem's type, terminal width)",
      "lib/core/unlink.ts": "removing a file that may be gone, for every writer of files",
      "lib/core/user-file.ts": "writing a user's own file outside any store",
      "lib/core/user-temp.ts": "the temp file beside a user's own file",
    };
    const core = LIB.filter((f) => relative(ROOT, f).startsWith("lib/core/"));
    const touching = core.filter((f) => /from\s+["'](node:)?(fs|fs\/promises)["']|bun:(ffi|sqlite)|\bBun\.(file|write|spawn)\b/.test(code(f))).map((f) => relative(ROOT, f));
    expect(touching.filter((f) => !(f in named))).toEqual([]);
    expect(Object.keys(named).filter((f) => !touching.includes(f))).toEqual([]); // a stale name is taken off the list
  });

  // The front ends (cli/: commands, the MCP server, the dashboard, hooks, doctor, setup) reach a
  // store only through the bus (lib/bus.ts, docs/ENGINE.md), so another engine can stand behind
  // the same calls: a value they import from lib/ is the bus or a module with no storage behind it
  // (no node:fs, bun:ffi, bun:sqlite or child process anywhere in its imports, static or dynamic,
  // and no Bun.file/write/spawn: a rule, a limit, an error, a time). Types may come from
  // anywhere: they are gone at run time. Imports are read by Bun's own scanner (import, export
  // from, bare import, require, import() with a literal), and an import() or require() of
  // anything but a literal is refused, so none slips past. Four named exceptions, none of which
  // touches a store.
  test("front ends import from lib/ only the bus and modules with no storage behind them", () => {
    const exceptions: Record<string, string> = {
      "lib/core/platform.ts": "the OS's answers (terminal width, the browser opener), not a store",
      "lib/presence/repo.ts": "which git work tree the user is in: reads their working tree, not the store",
      "lib/guard/install.ts": "a2a guard install: the repository's git hook files, not a store",
      "lib/crew/worktree.ts": "a crew worker's git worktree beside the user's checkout, made and removed by git, not a store",
      "lib/core/user-file.ts": "cli/commands/setup.ts's writeUserFile and export's openUserFile: an agent's settings file, an export, outside any store",
    };
    const SYSTEM = /^(node:)?(fs|fs\/promises|child_process)$|^bun:(ffi|sqlite)$/;
    const memo = new Map<string, string | null>();
    // The first storage `f` reaches through its imports, or null: none. lib/bus.ts is the seam:
    // it reaches every room on demand by design, so it is not followed.
    const storageOf = (f: string, seen = new Set<string>()): string | null => {
      if (memo.has(f)) return memo.get(f)!;
      if (seen.has(f)) return null;
      seen.add(f);
      let found: string | null = /\bBun\.(file|write|spawn|spawnSync)\s*\(/.test(code(f)) ? "Bun.file/write/spawn" : null;
      for (const spec of found ? [] : importsOf(f)) {
        if (SYSTEM.test(spec)) found = spec;
        else if (spec.startsWith(".")) {
          const dep = join(f, "..", spec) + ".ts";
          const via = dep.endsWith("lib/bus.ts") ? null : storageOf(dep, seen);
          if (via) found = `${relative(ROOT, dep)} > ${via}`;
        }
        if (found) break;
      }
      memo.set(f, found);
      return found;
    };
    const bad: string[] = [];
    for (const f of CLI) {
      const rel = relative(ROOT, f);
      for (const h of hits([f], /\b(import|require)\s*\(\s*(?!(["'])[^"'`$]*\2\s*\)|`[^`$]*`\s*\))/)) bad.push(`${h}: import() and require() take a literal path here, so the rule can read it`);
      for (const spec of importsOf(f)) {
        if (!spec.startsWith(".")) continue;
        const target = relative(ROOT, join(f, "..", spec)) + ".ts";
        if (!target.startsWith("lib/") || target === "lib/bus.ts" || target in exceptions) continue;
        const via = storageOf(join(ROOT, target));
        if (via) bad.push(`${rel} imports ${target}, which reaches storage (${via}): call the bus, or move the rule it needs into a module of its own`);
      }
    }
    expect(bad).toEqual([]);
    // And the bus reaches every room only on demand (its static imports are config, errors and
    // the opening, whose file engine loads each room's storage on first use).
    expect(staticImportsOf(join(ROOT, "lib/bus.ts")).sort()).toEqual(["./core/config", "./core/errors", "./engine/open"]);
  });

  // tests/contract/ is the definition of an engine, driven through the Bus alone (docs/ENGINE.md):
  // a test there that reached a room or the file engine directly would pass on files and say
  // nothing about another engine.
  test("tests/contract/ reaches lib/ only through lib/bus.ts and the error type", () => {
    const files = sources("tests/contract");
    const bad: string[] = [];
    for (const f of files) {
      for (const h of hits([f], /\b(import|require)\s*\(\s*(?!(["'])[^"'`$]*\2\s*\)|`[^`$]*`\s*\))/)) bad.push(`${h}: a literal path only`);
      for (const spec of importsOf(f)) {
        const target = relative(ROOT, join(f, "..", spec)).replace(/\.ts$/, "");
        if (target.startsWith("lib/") && target !== "lib/bus" && target !== "lib/core/errors") bad.push(`${relative(ROOT, f)} imports ${spec}`);
      }
    }
    expect(files.map((f) => relative(ROOT, f))).toContain("tests/contract/engines.ts");
    expect(bad).toEqual([]);
  });

  test("no test is focused, skipped or left as a todo", () => {
    const tests = sources("tests");
    // Built from parts so this file does not match itself.
    const off = new RegExp("\\b(test|it|describe)\\.(" + ["only", "skip", "todo"].join("|") + ")\\s*\\(|\\b(fit|xit|xdescribe|fdescribe)\\s*\\(");
    expect(hits(tests, off)).toEqual([]);
    expect(tests.length).toBeGreaterThan(3);
  });

  // The binary users install (package.json's build, run by install.sh) and the one tests,
  // bench and torture build (tests/build.ts) must be the same program.
  test("package.json's build script uses exactly tests/build.ts's flags", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(pkg.scripts.build).toBe(["bun", ...BUILD_ARGS, "dist/a2a"].join(" "));
    expect(BUILD_ARGS).toEqual(expect.arrayContaining(["--no-compile-autoload-dotenv", "--no-compile-autoload-bunfig"]));
  });
});
