// The bench and the torture run as a developer meets them (issue 33): a measurement does not
// crash on the bench's own stores, a child's crash is one line, `bun run bench` leaves the
// tracked bench/RESULTS.md alone unless asked and takes its binary copies away, and the torture
// run without bindfs skips that scenario. Only the cheapest sections, with one trial each.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeStore, removeStore } from "../../bench/lib/fixture";
import { Child } from "../../bench/lib/proc";
import { spawnPublisher, spawnWaiter } from "../../bench/lib/wake";
import { childEnv, ON_FILES, ROOT, tempDir } from "../harness/run";

setDefaultTimeout(120_000);

async function run(cmd: string[], env: Record<string, string> = childEnv()) {
  const p = Bun.spawn({ cmd, cwd: ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { stdout, stderr, code };
}

// Bench programs, not an engine: they run once, in the file engine's pass.
describe.if(ON_FILES)("bench and torture", () => {
  test("a lib waiter arming after the publisher's temp files (any-1000, all-1000) is woken, not refused", async () => {
    using d = tempDir("a2a-bench-");
    const root = makeStore(d.path, 0, "any");
    // What the publisher leaves in tmp/ while it writes; a waiter that armed then refused the store.
    writeFileSync(join(root, "tmp", "bench.999.0.tmp"), "x");
    const ctx = { base: d.path, env: childEnv() };
    const waiter = spawnWaiter(ctx, "lib", root, ["any", "10"]);
    const pub = spawnPublisher(ctx, root);
    try {
      await pub.expect("ready");
      await waiter.expect("armed");
      pub.send("raw t0_3 0");
      await pub.expect("pub");
      expect((await waiter.expect("got")).slice(3)).toEqual(["ok"]);
    } finally {
      await Promise.all([waiter.stop(), pub.stop()]);
      removeStore(root);
    }
  });

  test("a helper that crashes is reported by its error line, not the source around the throw", async () => {
    const c = new Child([process.execPath, "-e", "function f() {\n  throw new RangeError('boom');\n}\nf();\n"], { env: childEnv(), label: "crasher" });
    const err = await c.line().then(() => "no error", (e: Error) => e.message);
    expect(err.split("\n")[0]).toBe("crasher ended unexpectedly: RangeError: boom");
  });

  test("bench: exit 0 with its table; bench/RESULTS.md untouched unless asked; no binary copies left in bench/out", async () => {
    using d = tempDir("a2a-bench-");
    const results = join(ROOT, "bench", "RESULTS.md");
    const before = { text: readFileSync(results, "utf8"), mtime: statSync(results).mtimeMs };
    const r = await run([process.execPath, "bench/run.ts", "--only", "poll", "-n", "1", "--rounds", "1", "--base", d.path]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("lib waitSlots, A2A_POLL_MS=20");
    expect(r.stderr).not.toContain("wrote ");
    expect({ text: readFileSync(results, "utf8"), mtime: statSync(results).mtimeMs }).toEqual(before);
    expect(existsSync(join(ROOT, "bench", "out", "fresh"))).toBe(false);

    const out = join(d.path, "results.md");
    const w = await run([process.execPath, "bench/run.ts", "--only", "poll", "-n", "1", "--rounds", "1", "--base", d.path, "--out", out]);
    expect(w.code).toBe(0);
    expect(readFileSync(out, "utf8")).toStartWith("# a2a benchmark results\n");
    expect(statSync(results).mtimeMs).toBe(before.mtime);
  });

  test("a wrong option or section of the bench or the torture run: one line, exit 2", async () => {
    expect(await run([process.execPath, "bench/run.ts", "--no-write"])).toEqual({ code: 2, stdout: "", stderr: "bench: Unknown option '--no-write': see bun run bench --help\n" });
    const t = await run([process.execPath, "bench/torture.ts", "--only", "nope"]);
    expect({ code: t.code, stdout: t.stdout }).toEqual({ code: 2, stdout: "" });
    expect(t.stderr).toStartWith('torture: unknown scenario "nope": use crash, ');
    expect(t.stderr.split("\n")).toHaveLength(2);
  });

  test("torture --short without bindfs: the netfs scenario skips with its reason, exit 0, no stack", async () => {
    // A PATH with no bindfs on it (nor anything else: the scenario must not reach for apt-get).
    using d = tempDir("a2a-torture-");
    const r = await run([process.execPath, "bench/torture.ts", "--short", "--only", "netfs"], childEnv({ env: { PATH: d.path } }));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toMatch(/^SKIP netfs: (bindfs or fusermount3 is not installed \(Debian: apt-get install -y bindfs fuse3; \.ci\/run installs them\)|needs root)/m);
    expect(r.stdout).not.toMatch(/^\s+at /m);
  });
});
