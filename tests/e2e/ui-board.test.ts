// The task board and leases of `a2a ui`, driven through the BoardProvider seam (lib/dashboard/board.ts):
// a fixture provider, put in the bus's dashboard room in place of the task queue, reads a
// board from a JSON file in the store's tasks/ directory, so the whole path is real: a change
// to that directory -> the one watch primitive -> the server's feed -> the page's DOM; a click
// -> the confirmation -> POST -> the provider's action. In process (serveUi), in chromium.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Board, BoardProvider, BoardTask } from "../../lib/dashboard/board";
import { fileBus, openBus, type Bus } from "../../lib/bus";
import { type Store } from "../../lib/core/config";
import { openStore } from "../../lib/engine/open";
import { closeWatches } from "../../lib/fs/watch";
import { serveUi } from "../../cli/ui/server";
import { a2a, ON_FILES, tempDir, testStore } from "../harness/run";
import { browserMissing, launchBrowser, screenshots } from "../harness/ui";

setDefaultTimeout(90_000);

const task = (id: string, state: BoardTask["state"], extra: Partial<BoardTask> = {}): BoardTask => ({
  queue: "build", id, title: `task ${id}`, state, holder: null, lease_expires_at: null, deps: [], reason: null, attempts: 1, updated_at: Date.now() / 1000, ...extra,
});

// The fixture queue: tasks/board.json, replaced atomically by the test and by the actions.
function fixture(dir: string, calls: string[]): BoardProvider {
  const file = join(dir, "board.json");
  const read = (): Board => JSON.parse(readFileSync(file, "utf8"));
  const write = (b: Board) => {
    writeFileSync(file + ".tmp", JSON.stringify(b));
    renameSync(file + ".tmp", file);
  };
  const change = (fn: (b: Board) => void) => {
    const b = read();
    fn(b);
    write(b);
  };
  return {
    available: true,
    read: async () => read(),
    dirs: async () => [dir],
    retry: async (_s, q, id, as) => {
      calls.push(`retry ${q} ${id} as ${as}`);
      change((b) => b.queues[0].tasks.forEach((t) => t.id === id && ((t.state = "ready"), (t.reason = null), t.attempts++)));
    },
    cancel: async (_s, q, id, as) => {
      calls.push(`cancel ${q} ${id} as ${as}`);
      change((b) => b.queues[0].tasks.forEach((t) => t.id === id && ((t.state = "dead"), (t.reason = `cancelled by ${as}`))));
    },
    release: async (_s, name, as) => {
      calls.push(`release ${name} as ${as}`);
      change((b) => (b.leases = b.leases.filter((l) => l.name !== name)));
    },
    releaseReservation: async (_s, r, as) => {
      calls.push(`release ${r.pattern} of ${r.holder} as ${as}`);
      change((b) => (b.reservations = b.reservations.filter((x) => x.pattern !== r.pattern)));
    },
  };
}

// The bus of `store` with the board of `fx` in place of the task queue's (lib/dashboard/tasks.ts).
function withBoard(store: Store, fx: BoardProvider): Bus {
  const bus = fileBus(store);
  return {
    ...bus,
    dashboard: {
      ...bus.dashboard,
      board: async () => fx.read(store),
      watch: (on, opts) => bus.dashboard.watch(on, { ...opts, board: fx }),
      retry: (queue, id, as) => fx.retry(store, queue, id, as),
      cancel: (queue, id, as) => fx.cancel(store, queue, id, as),
      release: (lease, as) => fx.release(store, lease, as),
      releaseReservation: (which, as) => fx.releaseReservation(store, which, as),
    },
  };
}

const missing = browserMissing();
if (missing) console.warn(`ui-board.test.ts: skipping the board tests: ${missing}`);

// a2a ui refuses a database store for now (and the fixture provider reads tasks/): files only.
describe.skipIf(!!missing)("a2a ui: the task board and leases (through the BoardProvider seam)", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  const shotDir = screenshots("ui-board.test.ts");
  const shots = shotDir.path;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    shotDir.done();
  });

  // A fixture board (files beside the store) stands for the engine here: run once, on files.
  test.if(ON_FILES)("columns per state, the dependency graph, a claim moves a card live, retry/cancel/release are confirmed calls", async () => {
    using d = tempDir();
    await a2a(["publish", "init", "x"], { dir: d.path });
    const tasksDir = join(d.path, "tasks");
    mkdirSync(tasksDir);
    const now = Date.now() / 1000;
    const board: Board = {
      available: true,
      queues: [{
        name: "build",
        tasks: [
          task("fetch", "done"),
          task("compile", "ready", { deps: ["fetch"] }),
          task("lint", "claimed", { holder: "bob", lease_expires_at: now + 300, deps: ["fetch"] }),
          task("test", "blocked", { deps: ["compile", "lint"] }),
          task("package", "dead", { deps: ["test"], reason: "<b>disk full</b> \u001b[31m", attempts: 3 }),
        ],
      }],
      leases: [{ name: "deploy-lock", holder: "alice", acquired_at: now - 60, expires_at: now + 600 }],
      reservations: [],
    };
    writeFileSync(join(tasksDir, "board.json"), JSON.stringify(board));
    const calls: string[] = [];
    const store: Store = openStore({ dir: d.path, env: {} });
    const ui = await serveUi(withBoard(store, fixture(tasksDir, calls)), { host: "127.0.0.1", port: 0, readOnly: false, as: "human" });
    const page = await browser.ctx.newPage();
    try {
      await page.goto(ui.link());
      await page.waitForSelector("body[data-ready]");
      const col = (state: string) => `#board [data-queue="build"] .column[data-state="${state}"]`;
      expect(await page.locator(`${col("ready")} .card`).count()).toBe(1);
      expect(await page.textContent(`${col("claimed")} [data-task="lint"]`)).toContain("bob · lease");
      expect(await page.textContent(`${col("dead")} [data-task="package"]`)).toContain("<b>disk full</b> ^[[31m");
      expect(await page.locator("#board b").count()).toBe(0);
      // The graph: one box per task, one edge per dependency.
      expect(await page.locator("#board svg rect").count()).toBe(5);
      expect(await page.locator("#board svg line").count()).toBe(5);
      expect(await page.textContent('#leases tr[data-lease="deploy-lock"]')).toContain("alice");
      // Someone claims "compile": the card moves from ready to claimed, live.
      const b2 = JSON.parse(JSON.stringify(board)) as Board;
      Object.assign(b2.queues[0].tasks[1], { state: "claimed", holder: "carol", lease_expires_at: now + 120 });
      writeFileSync(join(tasksDir, "board.json.tmp"), JSON.stringify(b2));
      renameSync(join(tasksDir, "board.json.tmp"), join(tasksDir, "board.json"));
      await page.waitForSelector(`${col("claimed")} [data-task="compile"]`);
      expect(await page.locator(`${col("ready")} .card`).count()).toBe(0);
      await page.locator("#tasks-view").screenshot({ path: join(shots, "tasks.png") });
      // Retry the dead task: confirmed, then the provider's call, then the card moves.
      await page.click(`${col("dead")} [data-task="package"] button`);
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-cmd")).toBe("a2a task retry package");
      await page.click("#confirm-no");
      expect(calls).toEqual([]);
      await page.click(`${col("dead")} [data-task="package"] button`);
      await page.click("#confirm-yes");
      await page.waitForSelector(`${col("ready")} [data-task="package"]`);
      await page.click(`${col("blocked")} [data-task="test"] button`);
      await page.click("#confirm-yes");
      await page.waitForSelector(`${col("dead")} [data-task="test"]`);
      await page.click('#leases tr[data-lease="deploy-lock"] button');
      await page.click("#confirm-yes");
      await page.waitForSelector('#leases tr[data-lease="deploy-lock"]', { state: "detached" });
      expect(calls).toEqual(["retry build package as human", "cancel build test as human", "release deploy-lock as human"]);
    } finally {
      await page.close();
      await ui.stop();
      closeWatches(store);
    }
  });

  test("the real queue (lib/dashboard/tasks.ts): CLI adds, claims and finishes move cards live; a lease released from the page is released in the store", async () => {
    using d = testStore();
    const run = async (args: string[]) => {
      const r = await a2a(args, { dir: d.path });
      if (r.code !== 0) throw new Error(`a2a ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    const first = await run(["task", "add", "build", "compile it"]);
    const second = await run(["task", "add", "build", "ship it", "--after", first]);
    await run(["lease", "take", "deploy-lock", "--as", "alice", "--ttl", "10m"]);
    const bus = openBus({ dir: d.path, env: {} });
    const ui = await serveUi(bus, { host: "127.0.0.1", port: 0, readOnly: false, as: "human" });
    const page = await browser.ctx.newPage();
    try {
      await page.goto(ui.link());
      await page.waitForSelector("body[data-ready]");
      const col = (state: string) => `#board [data-queue="build"] .column[data-state="${state}"]`;
      await page.waitForSelector(`${col("ready")} [data-task="${first}"]`);
      await page.waitForSelector(`${col("blocked")} [data-task="${second}"]`);
      expect(await page.locator("#board svg line").count()).toBe(1);
      const claim = JSON.parse(await run(["task", "claim", "build", "--as", "worker", "--json"]));
      expect(claim.id).toBe(first);
      await page.waitForSelector(`${col("claimed")} [data-task="${first}"]`);
      expect(await page.textContent(`${col("claimed")} [data-task="${first}"]`)).toContain("worker");
      await run(["task", "done", first, claim.token, "compiled"]);
      await page.waitForSelector(`${col("done")} [data-task="${first}"]`);
      await page.waitForSelector(`${col("ready")} [data-task="${second}"]`);
      await page.locator("#tasks-view").screenshot({ path: join(shots, "tasks-real.png") });
      await page.click('#leases tr[data-lease="deploy-lock"] button');
      expect(await page.textContent("#confirm-cmd")).toBe("a2a lease release deploy-lock --as alice");
      await page.click("#confirm-yes");
      await page.waitForSelector('#leases tr[data-lease="deploy-lock"]', { state: "detached" });
      expect(JSON.parse(await run(["lease", "list", "--json"]))).toEqual([]);
    } finally {
      await page.close();
      await ui.stop();
      await bus.close();
    }
  });
});

describe.skipIf(!!missing)("a2a ui: reservations on paths", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  test("the page lists reservations (pattern, holder, expiry, reason) live, and releases one once confirmed", async () => {
    using d = testStore();
    using work = tempDir("a2a-ui-repo-");
    const run = async (args: string[]) => {
      const r = await a2a(args, { dir: d.path, cwd: work.path });
      if (r.code !== 0) throw new Error(`a2a ${args.join(" ")}: ${r.stderr}`);
      return r.stdout.trim();
    };
    await run(["reserve", "src/api/**", "--as", "alice", "--reason", "routes", "--ttl", "30m"]);
    const bus = openBus({ dir: d.path, env: {} });
    const ui = await serveUi(bus, { host: "127.0.0.1", port: 0, readOnly: false, as: "human" });
    const page = await browser.ctx.newPage();
    try {
      await page.goto(ui.link());
      await page.waitForSelector("body[data-ready]");
      const row = '#reservations tr[data-pattern="src/api/**"]';
      await page.waitForSelector(row);
      expect(await page.textContent(row)).toMatch(/^src\/api\/\*\*aliceexclusive(29|30)m.*routesdir:/);
      await run(["reserve", "docs", "--shared", "--as", "bob"]); // appears live
      await page.waitForSelector('#reservations tr[data-pattern="docs"]');
      await page.click(`${row} button`);
      expect(await page.textContent("#confirm-cmd")).toBe("a2a release 'src/api/**' --as alice");
      await page.click("#confirm-no");
      expect(JSON.parse(await run(["reservations", "--json"])).reservations.length).toBe(2); // not confirmed: nothing released
      await page.click(`${row} button`);
      await page.click("#confirm-yes");
      await page.waitForSelector(row, { state: "detached" });
      expect(JSON.parse(await run(["reservations", "--json"])).reservations.map((r: any) => [r.pattern, r.holder])).toEqual([["docs", "bob"]]);
    } finally {
      await page.close();
      await ui.stop();
      await bus.close();
    }
  });
});
