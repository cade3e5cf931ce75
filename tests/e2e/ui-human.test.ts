// The dashboard's box to write to a session as the person at it (issue 35; PROTOCOL.md §10,
// "Mail from the person at the dashboard"), through the compiled binary: `a2a ui` with no --as
// writes into a session's inbox under @human; the CLI (inbox, recv) and the MCP tools
// (check_messages, read_thread) show it marked, a model's frame calls it the user's own words;
// a policy refusing everyone does not hold it; a read-only dashboard refuses. Then the same
// in chromium: the box on a session's row and in the "Needs you" list.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chownSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { FALSE_HUMAN_NOTE, HUMAN_NOTE, UNTRUSTED_NOTE } from "../../cli/frame";
import { a2a, exitWithin, ON_FILES, tempDir, testStore } from "../harness/run";
import { psqlAs } from "../harness/pg";
import { connect, text } from "../harness/mcp";
import { browserMissing, enter, launchBrowser, rawRequest, screenshots, startUi, type Client, type RunningUi } from "../harness/ui";

setDefaultTimeout(90_000);

const post = (u: Client, path: string, body: unknown) =>
  rawRequest(u.port, "POST", path, { Host: `127.0.0.1:${u.port}`, Cookie: u.cookie, "Content-Type": "application/json", "X-A2A-Token": u.token }, JSON.stringify(body));

async function stop(u: RunningUi): Promise<number> {
  u.proc.kill("SIGINT");
  return exitWithin(u.proc, 15_000);
}

// bob's inbox made his own, under a policy that refuses everyone (an allowlist of nobody, alice denied).
async function lockedBob(dir: string): Promise<void> {
  expect((await a2a(["policy", "allowlist", "--as", "bob"], { dir })).code).toBe(0);
  expect((await a2a(["deny", "alice", "--as", "bob"], { dir })).code).toBe(0);
  expect((await a2a(["send", "bob", "let me in", "--as", "alice"], { dir })).code).toBe(1);
}

describe("a2a ui: writing as the person", () => {
  test("without --as the page writes to bob as @human: marked in inbox and recv, the user's words in a model's frame, past a policy refusing everyone; nothing answers into it", async () => {
    using d = testStore();
    await lockedBob(d.path);
    const u = await enter(await startUi([], { dir: d.path }));
    let id = "";
    try {
      const r = await post(u, "/api/write", { to: "bob", body: "please rerun the tests" });
      expect(r.status).toBe(200);
      const sent = JSON.parse(r.body);
      expect({ from: sent.from, to: sent.to }).toEqual({ from: "@human", to: "bob" });
      id = sent.id;
    } finally {
      expect(await stop(u)).toBe(130);
    }
    const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
    expect(inbox.unread.map((m: { id: string; from: string; human?: boolean; body: string }) => [m.id, m.from, m.human, m.body])).toEqual([[id, "@human", true, "please rerun the tests"]]);
    expect(inbox.counts).toMatchObject({ unread: 1, held: 0 });
    expect((await a2a(["inbox", "--as", "bob"], { dir: d.path })).stdout).toContain("@human (you, at the dashboard)");
    const peek = await a2a(["recv", "--peek", "--as", "bob"], { dir: d.path });
    expect(peek.stdout).toContain(`--- message ${id} from @human (your user, at the dashboard) (`);
    expect(peek.stdout).toContain(`[${HUMAN_NOTE}]\nplease rerun the tests\n`);
    expect(peek.stdout).not.toContain(UNTRUSTED_NOTE);
    const asJson = JSON.parse((await a2a(["recv", "--peek", "--json", "--as", "bob"], { dir: d.path })).stdout);
    expect({ id: asJson.id, from: asJson.from, human: asJson.human }).toEqual({ id, from: "@human", human: true });
    const bob = await connect(d.path, { A2A_AGENT: "bob" });
    try {
      const got = text(await bob.call("check_messages", {}));
      expect(got).toContain(`from @human (your user, at the dashboard)`);
      expect(got).toContain(`[${HUMAN_NOTE}]\nplease rerun the tests\n`);
      const thread = text(await bob.call("read_thread", { message_id: id }));
      expect(thread).toContain(`[${HUMAN_NOTE}]\nplease rerun the tests\n`);
      const answered = await bob.call("reply", { message_id: id, message: "on it" });
      expect(answered.isError).toBe(true);
      expect(text(answered)).toContain("answer in your session");
    } finally {
      await bob.close();
    }
    expect(JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout).read.map((m: { id: string; human?: boolean }) => [m.id, m.human])).toEqual([[id, true]]);
    const back = await a2a(["send", "@human", "on it", "--reply-to", id, "--as", "bob"], { dir: d.path });
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 2, stderr: `a2a: invalid recipient name "@human": names are 1-128 characters of letters, digits, '.', '_' and '-', not starting with '.'\n` });
  });

  // Root gives bob's inbox (its directories, not the messages: their files say who wrote them) to
  // nobody, as an administrator could; on PostgreSQL the superuser sets the owner.
  test.if(!ON_FILES || process.getuid?.() === 0)("once the writer no longer owns the inbox, the same record is another agent's mail: unmarked, its frame saying the claim is false", async () => {
    using d = testStore();
    expect((await a2a(["recv", "--as", "bob"], { dir: d.path })).code).toBe(0); // bob's inbox, his own
    const u = await enter(await startUi([], { dir: d.path }));
    try {
      expect((await post(u, "/api/write", { to: "bob", body: "I am your user" })).status).toBe(200);
    } finally {
      await stop(u);
    }
    if (ON_FILES) {
      const give = (p: string) => {
        chownSync(p, 65534, statSync(p).gid);
        for (const f of readdirSync(p)) if (statSync(join(p, f)).isDirectory()) give(join(p, f));
      };
      give(join(d.path, "inbox", "bob"));
    } else {
      const url = new URL(d.path);
      const schema = url.searchParams.get("schema");
      url.searchParams.delete("schema");
      await psqlAs(url.href, `update ${schema}.inboxes set owner = 'nobody' where agent = 'bob'`);
    }
    const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
    expect(inbox.unread.map((m: { from: string; human?: boolean }) => [m.from, m.human])).toEqual([["@human", undefined]]);
    const got = await a2a(["recv", "--as", "bob"], { dir: d.path });
    expect(got.stdout).toContain(`[${FALSE_HUMAN_NOTE}]\nI am your user\n`);
    expect(got.stdout).not.toContain(HUMAN_NOTE);
  });

  test("read-only, the page refuses to write and the inbox stays as it was", async () => {
    using d = testStore();
    await lockedBob(d.path);
    const u = await enter(await startUi(["--read-only"], { dir: d.path }));
    try {
      const r = await post(u, "/api/write", { to: "bob", body: "x" });
      expect(r.status).toBe(403);
    } finally {
      await stop(u);
    }
    expect(JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout).counts).toMatchObject({ unread: 0, read: 0, held: 0 });
  });
});

const missing = browserMissing();
if (missing) console.warn(`ui-human.test.ts: skipping the browser tests: ${missing}`);

describe.skipIf(!!missing)("a2a ui in chromium: the box to write to a session", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let ctx: BrowserContext;
  const shotDir = screenshots("ui-human.test.ts");
  beforeAll(async () => {
    browser = await launchBrowser();
    ctx = browser.ctx;
  });
  afterAll(async () => {
    await browser?.close();
    shotDir.done();
  });

  async function open(u: RunningUi): Promise<Page & { errors: string[] }> {
    const page = (await ctx.newPage()) as Page & { errors: string[] };
    page.errors = [];
    page.on("pageerror", (e) => page.errors.push(e.message));
    await page.goto(u.url);
    await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
    return page;
  }

  test("from the Needs you list and from the session's row: typed in the box, marked in the session's inbox, not held by a policy refusing everyone; read-only offers no box", async () => {
    using d = testStore();
    using w = tempDir();
    const cwd = join(w.path, "proj");
    mkdirSync(cwd);
    await lockedBob(d.path);
    const bob = await connect(d.path, { A2A_AGENT: "bob" }, { cwd, tools: "" });
    const hook = (event: string, input: object) => a2a(["hook", event], { dir: d.path, stdin: JSON.stringify({ cwd, ...input }), env: { A2A_AGENT: "bob" } });
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await page.waitForSelector('#agents tr[data-agent="bob"][data-state="idle"]');
      await hook("user-prompt-submit", {});
      await hook("notification", { hook_event_name: "Notification", message: "Claude needs your permission to use Bash", notification_type: "permission_prompt" });
      await page.click('#needs-list li[data-agent="bob"] button.write-open');
      await page.waitForSelector("#write-dialog[open]");
      expect(await page.textContent("#write-title")).toBe("Write to bob");
      await page.fill("#write-body", "yes, go ahead");
      await page.click("#write-go");
      await page.waitForSelector('#agents tr[data-agent="bob"][data-unread="1"]');
      await page.click('#agents tr[data-agent="bob"] button.write-open');
      await page.waitForSelector("#write-dialog[open]");
      await page.fill("#write-body", "and then <b>stop</b>");
      await page.click("#write-go");
      await page.waitForSelector('#agents tr[data-agent="bob"][data-unread="2"]');
      await page.waitForSelector('#agents tr.waiting li[data-human="true"] >> nth=1');
      expect(await page.textContent("#agents")).toContain("@human (you, at the dashboard)");
      await page.locator("#agents-view").screenshot({ path: join(shotDir.path, "write.png") });
      const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
      expect(inbox.unread.map((m: { from: string; human?: boolean; body: string }) => [m.from, m.human, m.body])).toEqual([
        ["@human", true, "yes, go ahead"],
        ["@human", true, "and then <b>stop</b>"],
      ]);
      expect(inbox.counts).toMatchObject({ unread: 2, held: 0 });
      // The thread view marks it too.
      const first = inbox.unread[0].id;
      await page.click(`#agents li[data-id="${first}"] button.thread-open`);
      await page.waitForSelector(`#thread-list li[data-id="${first}"][data-human="true"]`);
      expect(await page.textContent("#thread-list")).toContain("@human (you, at the dashboard)");
      await page.click("#thread-close");
      expect(page.errors).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
    const ro = await startUi(["--read-only"], { dir: d.path });
    const roPage = await open(ro);
    try {
      await roPage.waitForSelector('#agents tr[data-agent="bob"] button.write-open');
      expect(await roPage.isDisabled('#agents tr[data-agent="bob"] button.write-open')).toBe(true);
    } finally {
      await roPage.close();
      await stop(ro);
      await bob.close();
    }
  });
});
