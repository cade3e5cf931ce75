// `a2a status --watch`: the table follows the store, redrawn in place on a terminal (run
// under script(1) for a real pty) and as plain, stamped tables on a pipe; stopped by a signal
// (128+N) or by --timeout as a run length (exit 0).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { a2a, BIN, childEnv, exitWithin, readUntil, spawnA2A, tempDir, testStore } from "../harness/run";

setDefaultTimeout(60_000);

describe("a2a status --watch", () => {
  test("on a pipe: a stamped table per change, plain text, Ctrl-C exits 130", async () => {
    using d = testStore();
    await a2a(["publish", "first", "one"], { dir: d.path });
    const p = spawnA2A(["status", "--watch"], { dir: d.path });
    let seen = await readUntil(p.stdout, (t) => t.includes("first"));
    expect(seen).toMatch(/^-- \d{4}-\d\d-\d\dT[\d:.]+Z --\nNAME +STATE/);
    await a2a(["start", "second", "indexing"], { dir: d.path });
    seen += await readUntil(p.stdout, (t) => /second +running/.test(t));
    await a2a(["publish", "second", "done now"], { dir: d.path });
    seen += await readUntil(p.stdout, (t) => /second +done .* done now/.test(t));
    p.kill("SIGINT");
    expect(await exitWithin(p)).toBe(130);
    expect(seen).not.toContain("\x1b");
    expect(seen.match(/^-- /gm)!.length).toBeGreaterThanOrEqual(3);
  });

  test("| head -3: the next change after head has gone ends the watch quietly, exit 0 (the closed-pipe rule)", async () => {
    using d = testStore();
    await a2a(["publish", "first", "one"], { dir: d.path });
    using scratch = tempDir();
    const errFile = `${scratch.path}/stderr`;
    const p = Bun.spawn({
      cmd: ["bash", "-c", `"$A2A" status --watch 2>"$ERR" | head -3; echo "a2a exit \${PIPESTATUS[0]}"`],
      env: childEnv({ dir: d.path, env: { A2A: BIN, ERR: errFile } }),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const shown = await readUntil(p.stdout, (t) => t.split("\n").length > 3); // head's three lines
    expect(shown).toMatch(/^-- .* --\nNAME +STATE.*\nfirst +done/);
    await a2a(["publish", "second", "two"], { dir: d.path }); // the draw that finds the pipe closed
    const rest = shown.includes("a2a exit") ? shown : shown + (await readUntil(p.stdout, (t) => t.endsWith("\n") && t.includes("a2a exit"), 20_000));
    expect(await exitWithin(p, 20_000)).toBe(0);
    expect(rest).toEndWith("\na2a exit 0\n");
    expect(await Bun.file(errFile).text()).toBe("");
    rmSync(errFile, { force: true });
  });

  test("--timeout is a run length (exit 0); --timeout without --watch is a usage error", async () => {
    using d = testStore();
    const r = await a2a(["status", "--watch", "--timeout", "200ms"], { dir: d.path });
    expect(r).toMatchObject({ code: 0, stderr: "" });
    expect(r.stdout).toContain("no slots yet");
    const bad = await a2a(["status", "--timeout", "1"], { dir: d.path });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe("a2a: --timeout applies to --watch only: add --watch or drop --timeout\n");
  });

  test("--json: one array per change", async () => {
    using d = testStore();
    const p = spawnA2A(["status", "--watch", "--json"], { dir: d.path });
    let seen = await readUntil(p.stdout, (t) => t.includes("\n"));
    await a2a(["publish", "x", "1"], { dir: d.path });
    seen += await readUntil(p.stdout, (t) => t.includes('"name":"x"'));
    p.kill("SIGTERM");
    expect(await exitWithin(p)).toBe(143);
    const lines = seen.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines[0]).toEqual([]);
    expect(lines.at(-1).map((r: { name: string }) => r.name)).toEqual(["x"]);
  });

  test.skipIf(!existsSync("/usr/bin/script"))("on a terminal: redrawn in place (cursor home, clear to end), no stamped lines", async () => {
    using d = testStore();
    await a2a(["publish", "first", "one"], { dir: d.path });
    const p = Bun.spawn({
      cmd: ["/usr/bin/script", "-qfec", `${BIN} status --watch`, "/dev/null"],
      env: childEnv({ dir: d.path }),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    let seen = await readUntil(p.stdout, (t) => t.includes("first"));
    await a2a(["publish", "second", "two"], { dir: d.path });
    seen += await readUntil(p.stdout, (t) => t.includes("second"));
    p.kill("SIGTERM");
    await exitWithin(p);
    expect(seen).toContain("\x1b[H\x1b[2J");
    expect(seen.split("\x1b[H").length).toBeGreaterThanOrEqual(3); // the first draw and at least one redraw
    expect(seen).toContain("\x1b[J");
    expect(seen).not.toMatch(/^-- \d{4}/m);
  });
});
