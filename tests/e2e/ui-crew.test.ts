// The dashboard's crew view (issue 36), in chromium against the compiled binary: a live crew of
// exec workers shows each worker (crew, host, agent, its session's state, its task, its last
// lines of output); Restart ends a worker's run (its task given back, not counted) and starts
// it again; Stop stops it. Both are the same bus operation as `a2a crew restart|stop NAME`,
// behind the dashboard's gate (a session's token; refused read-only). A second machine's part of
// the crew (a UTS namespace with a hostname of its own) shows beside it, with its host. No sleeps: every wait is
// on the page's DOM, /proc or a command's answer, with a generous bound.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { a2a, descendants, exitWithin, readUntil, spawnA2A, tempDir, testStore, until } from "../harness/run";
import { browserMissing, enter, launchBrowser, rawRequest, screenshots, startUi } from "../harness/ui";

setDefaultTimeout(120_000);

const js = async (args: string[], dir: string) => {
  const r = await a2a([...args, "--json"], { dir });
  expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
  return JSON.parse(r.stdout);
};

function procsWith(marker: string): number[] {
  return readdirSync("/proc").filter((d) => {
    try {
      return /^\d+$/.test(d) && readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").includes(marker);
    } catch {
      return false;
    }
  }).map(Number);
}

const canUnshare = process.getuid?.() === 0 && Bun.which("unshare") !== null;
const missing = browserMissing();
if (missing) console.warn(`ui-crew.test.ts: skipping the browser test: ${missing}`);

describe.skipIf(!!missing)("a2a ui: the crew view", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  const shotDir = screenshots("ui-crew.test.ts");
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    shotDir.done();
  });

  test("a live crew of exec workers: each worker's state, task and output; Restart starts its run again, Stop stops it; read-only offers neither", async () => {
    using d = testStore();
    using w = tempDir();
    for (const p of ["one", "two"]) expect((await a2a(["task", "add", "q", p], { dir: d.path })).code).toBe(0);
    const file = join(w.path, "site.toml");
    writeFileSync(file, `[[worker]]\nname = "hand"\ncount = 2\nqueues = ["q"]\ncommand = 'echo "working on $(cat)"; seq 1 40 | sed "s/^/step /"; exec sleep 981.5'\n`);
    const crew = spawnA2A(["crew", "up", file], { dir: d.path, env: { A2A_HEARTBEAT_MS: "500" } });
    // The same crew's part on a second machine (a UTS namespace with its own hostname), where it can be made.
    const farFile = join(w.path, "far.toml");
    writeFileSync(farFile, `name = "site"\n[[worker]]\nname = "far"\nqueues = ["elsewhere"]\ncommand = "cat"\n`);
    const far = canUnshare ? spawnA2A(["crew", "up", farFile], { dir: d.path, prefix: ["unshare", "-u", "sh", "-c", 'hostname "$0" && exec "$@"', "host-b"] }) : undefined;
    const u = await startUi([], { dir: d.path });
    const page = await browser.ctx.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    try {
      await readUntil(crew.stderr as ReadableStream<Uint8Array>, (t) => t.includes("crew site up"), 60_000);
      await until(() => procsWith("981.5").length === 2, 60_000, "both workers at work");
      await page.goto(u.url);
      await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
      const row = (name: string, extra = "") => `#crew tr[data-worker="${name}"]${extra}`;
      for (const n of ["hand-1", "hand-2"]) await page.waitForSelector(row(n, '[data-state="working"]'), { timeout: 30_000 });
      // Waits through locators: the page's CSP refuses waitForFunction's eval.
      for (const n of ["hand-1", "hand-2"]) await page.locator(row(n, " pre.agent"), { hasText: /^step \d+$/m }).waitFor({ timeout: 30_000 });
      const text = await page.textContent(row("hand-1"));
      expect(text).toContain(`site · ${hostname()}`);
      expect(text).toContain("exec");
      expect(text).toMatch(/q \S+ #1/);
      if (far) {
        await page.locator(row("far", '[data-state="waiting"]'), { hasText: "site · host-b" }).waitFor({ timeout: 30_000 });
        expect(await page.textContent("#crew-count")).toBe("3 workers · 2 host(s)");
      }
      await page.screenshot({ path: join(shotDir.path, "crew-working.png"), fullPage: true });
      await page.locator("#crew-view").screenshot({ path: join(shotDir.path, "crew-view.png") });

      // Restart: confirm names the CLI command; the run ends, the task goes back and is taken again.
      const [before] = procsWith("981.5").filter((p) => descendants(crew.pid).includes(p)).sort();
      const held = (await js(["crew"], d.path)).find((c: any) => c.host === hostname()).workers.find((x: any) => x.name === "hand-1");
      const runOf = (s: any) => s.workers.find((x: any) => x.name === "hand-1").proc?.pid;
      await page.click(row("hand-1", ' button[data-act="restart"]'));
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-cmd")).toBe("a2a crew restart hand-1");
      await page.click("#confirm-yes");
      await page.locator(row("hand-1"), { hasText: "1 restarted" }).waitFor({ timeout: 30_000 });
      await until(() => procsWith("981.5").length === 2 && !procsWith("981.5").includes(held.proc.pid), 30_000, "hand-1's run started again");
      const after = (await js(["crew"], d.path)).find((c: any) => c.host === hostname());
      expect(after.workers.find((x: any) => x.name === "hand-1")).toMatchObject({ restarts: 1, failed: 0, state: "working" });
      expect(runOf(after)).not.toBe(held.proc.pid);
      expect(before).toBeDefined();
      // Given back, not failed: the task it held is claimed again with its attempt not used up.
      const t1 = await js(["task", "show", held.task.id], d.path);
      expect(t1).toMatchObject({ state: "claimed", attempt: 1 });

      // Stop: the worker ends, its task goes back to the queue, the row says gone (stopped).
      const stopped = after.workers.find((x: any) => x.name === "hand-2");
      await page.click(row("hand-2", ' button[data-act="stop"]'));
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-cmd")).toBe("a2a crew stop hand-2");
      await page.click("#confirm-yes");
      await page.waitForSelector(row("hand-2", '[data-crew-state="stopped"][data-state="gone"]'), { timeout: 30_000 });
      expect(await page.isDisabled(row("hand-2", ' button[data-act="stop"]'))).toBe(true);
      await until(() => !procsWith("981.5").includes(stopped.proc.pid), 30_000, "hand-2's run to end");
      expect(await js(["task", "show", stopped.task.id], d.path)).toMatchObject({ state: "ready", attempt: 0 });
      await page.screenshot({ path: join(shotDir.path, "crew-stopped.png"), fullPage: true });
      expect(errors).toEqual([]);

      // Outside the page's session, the action is refused before anything is done.
      const forged = await rawRequest(u.port, "POST", "/api/crew/stop", { Host: `127.0.0.1:${u.port}`, "Content-Type": "application/json" }, JSON.stringify({ worker: "hand-1" }));
      expect(forged.status).toBe(401);
      const c = await enter(await startUi(["--read-only"], { dir: d.path }));
      const ro = await rawRequest(c.port, "POST", "/api/crew/stop", { Host: `127.0.0.1:${c.port}`, Cookie: c.cookie, "X-A2A-Token": c.token, "Content-Type": "application/json" }, JSON.stringify({ worker: "hand-1" }));
      expect(ro.status).toBe(403);
      c.proc.kill("SIGINT");
      await exitWithin(c.proc, 15_000);
      expect((await js(["crew"], d.path)).find((c: any) => c.host === hostname()).workers.find((x: any) => x.name === "hand-1").state).toBe("working");
    } finally {
      await page.close();
      u.proc.kill("SIGINT");
      await exitWithin(u.proc, 15_000);
      crew.kill("SIGINT");
      await exitWithin(crew, 30_000);
      far?.kill("SIGINT");
      if (far) await exitWithin(far, 30_000);
    }
    expect(procsWith("981.5")).toEqual([]);
  });
});
