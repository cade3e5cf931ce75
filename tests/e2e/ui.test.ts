// `a2a ui` through the compiled binary: the server's security (token, Host, Origin, POST-only
// actions, CSP, read-only), how it ends (signals), and, in a real browser (Debian's chromium
// driven by playwright-core), that the page follows the store live and that hostile store
// content stays inert text. Screenshots of each view are saved (kept with A2A_TEST_SHOTS=DIR).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { openBus } from "../../lib/bus";
import { a2a, exitWithin, ON_FILES, ROOT, tempDir, testStore } from "../harness/run";
import { connect } from "../harness/mcp";
import { browserMissing, enter, launchBrowser, nextLink, rawRequest, screenshots, startUi, type Client, type RunningUi } from "../harness/ui";

setDefaultTimeout(90_000);

const host = (u: RunningUi) => `127.0.0.1:${u.port}`;
const get = (u: Client, path: string, headers: Record<string, string> = {}) => rawRequest(u.port, "GET", path, { Host: host(u), Cookie: u.cookie, ...headers });
const post = (u: Client, path: string, body: unknown, headers: Record<string, string> = {}) =>
  rawRequest(u.port, "POST", path, { Host: host(u), Cookie: u.cookie, "Content-Type": "application/json", "X-A2A-Token": u.token, ...headers }, JSON.stringify(body));

async function stop(u: RunningUi): Promise<number> {
  u.proc.kill("SIGINT");
  return exitWithin(u.proc, 15_000);
}

// The server's gate is the same whatever the store's engine: run once, on files.
describe.if(ON_FILES)("a2a ui: the server's gate", () => {
  test("without the session a link made, nothing from the store: no cookie, a made-up one, a used link, a token in the query", async () => {
    using d = tempDir();
    await a2a(["publish", "secret", "s3cret-result"], { dir: d.path });
    const u = await enter(await startUi([], { dir: d.path }));
    try {
      expect(u.stdout).toContain(`serving ${d.path}`);
      const forged = `a2a_${u.port}=${"0".repeat(64)}`;
      for (const path of ["/", "/api/slot?name=secret", "/events", "/app.js", "/api/config"]) {
        const none = await get(u, path, { Cookie: "" });
        expect({ path, status: none.status }).toEqual({ path, status: 401 });
        expect(none.body).not.toContain("s3cret");
        const wrong = await get(u, path, { Cookie: forged });
        expect({ path, status: wrong.status }).toEqual({ path, status: 403 });
        const sep = path.includes("?") ? "&" : "?";
        const query = await get(u, `${path}${sep}token=${u.token}`, { Cookie: "" });
        expect({ path, status: query.status }).toEqual({ path, status: 401 });
        expect(wrong.body + query.body).not.toContain("s3cret");
      }
      // The printed link made this session; opened again, by anyone else, it makes none.
      const again = await rawRequest(u.port, "GET", u.url.slice(u.base.length), { Host: host(u) });
      expect(again.status).toBe(403);
      expect(again.headers["set-cookie"]).toBeUndefined();
      expect(again.body).toContain("this link was used already");
      const ok = await get(u, "/api/slot?name=secret");
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).record.result).toBe("s3cret-result");
      // Actions need the page's token in the header as well as the cookie.
      const q = await rawRequest(u.port, "POST", `/api/clear?token=${u.token}`, { Host: host(u), Cookie: u.cookie, "Content-Type": "application/json" }, '{"name":"secret"}');
      expect(q.status).toBe(401);
      const bad = await post(u, "/api/clear", { name: "secret" }, { "X-A2A-Token": "f".repeat(48) });
      expect(bad.status).toBe(403);
      const noCookie = await post(u, "/api/clear", { name: "secret" }, { Cookie: "" });
      expect(noCookie.status).toBe(401);
      expect((await a2a(["wait", "secret"], { dir: d.path })).stdout).toBe("s3cret-result");
    } finally {
      expect(await stop(u)).toBe(130);
    }
  });

  test("each printed link works once; a fresh one is printed for the next browser, with a session of its own", async () => {
    using d = tempDir();
    const u = await startUi([], { dir: d.path });
    try {
      const first = await enter(u);
      const next = await nextLink(u);
      expect(next).not.toBe(u.url);
      expect(u.stdout).toContain(`a2a ui: that link has been used; for another browser:\n  ${next}\n`);
      const cookie = first.cookie;
      const second = await enter(u, next);
      expect(second.cookie).not.toBe(cookie);
      for (const c of [cookie, second.cookie]) expect((await get(second, "/api/config", { Cookie: c })).status).toBe(200);
      expect((await rawRequest(u.port, "GET", next.slice(u.base.length), { Host: host(u) })).status).toBe(403);
    } finally {
      await stop(u);
    }
  });

  test("a foreign Host header (DNS rebinding) is refused, loopback names are served", async () => {
    using d = tempDir();
    await a2a(["publish", "secret", "s3cret-result"], { dir: d.path });
    const u = await enter(await startUi([], { dir: d.path }));
    try {
      const path = `/api/slot?name=secret`;
      for (const h of [`evil.example:${u.port}`, "evil.example", `127.0.0.1:${u.port + 1}`, `localhost.evil.example:${u.port}`, ""]) {
        const r = await rawRequest(u.port, "GET", path, h ? { Host: h, Cookie: u.cookie } : { Cookie: u.cookie });
        // No Host at all is malformed HTTP/1.1: Bun or the gate refuses it, either way a 4xx.
        if (h) expect({ h, status: r.status }).toEqual({ h, status: 403 });
        else expect(r.status).toBeGreaterThanOrEqual(400);
        expect(r.body).not.toContain("s3cret");
      }
      for (const h of [`127.0.0.1:${u.port}`, `localhost:${u.port}`, `LOCALHOST:${u.port}`]) {
        expect({ h, status: (await rawRequest(u.port, "GET", path, { Host: h, Cookie: u.cookie })).status }).toEqual({ h, status: 200 });
      }
      // The action is refused too, and the store is as it was.
      const act = await post(u, "/api/clear", { name: "secret" }, { Host: `evil.example:${u.port}` });
      expect(act.status).toBe(403);
      expect((await a2a(["status", "secret"], { dir: d.path })).code).toBe(0);
    } finally {
      await stop(u);
    }
  });

  test("a Host that makes no URL (127.0.0.1:PORT.evil.com) gets a short 4xx from the gate, never Bun's error page", async () => {
    using d = tempDir();
    await a2a(["publish", "secret", "s3cret-result"], { dir: d.path });
    const u = await enter(await startUi([], { dir: d.path }));
    try {
      for (const h of [`127.0.0.1:${u.port}.evil.com`, `[::1]:${u.port}.evil.com`, `localhost:${u.port}x`, `127.0.0.1:99999999999`, "[::1"]) {
        const r = await rawRequest(u.port, "GET", "/api/slot?name=secret", { Host: h, Cookie: u.cookie });
        expect({ h, status: r.status }).toEqual({ h, status: 403 });
        expect({ h, body: r.body }).toEqual({ h, body: "a2a ui: foreign Host header: open the URL a2a ui printed\n" });
        expect(r.headers["content-security-policy"]).toContain("default-src 'none'");
      }
    } finally {
      await stop(u);
    }
    // Bound to a wildcard, any IP literal is a name of the server: one that is no address gets a 400.
    const w = await enter(await startUi(["--host", "0.0.0.0"], { dir: d.path }));
    try {
      const r = await rawRequest(w.port, "GET", "/api/config", { Host: `[:::]:${w.port}`, Cookie: w.cookie });
      expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: "a2a ui: malformed request URL\n" });
    } finally {
      await stop(w);
    }
  });

  test("a slot name that is no name (../store) is refused before it becomes a path: 400 naming it, nothing outside slots/ opened", async () => {
    using d = tempDir();
    await a2a(["publish", "secret", "s3cret-result"], { dir: d.path });
    // A record the server would show if it followed the name out of slots/.
    const rec = JSON.parse(readFileSync(join(d.path, "slots", "secret.json"), "utf8"));
    writeFileSync(join(d.path, "planted.json"), JSON.stringify({ ...rec, name: "../planted", result: "outside slots", size: 13 }) + "\n");
    using t = tempDir();
    const trace = join(t.path, "server.trace");
    const traced = Bun.which("strace") ? ["strace", "-f", "-qq", "-e", "trace=%file,%desc", "-o", trace] : [];
    const u = await enter(await startUi([], { dir: d.path, prefix: traced }));
    try {
      const detail = (n: string) => get(u, `/api/slot?name=${encodeURIComponent(n)}`);
      expect((await detail("before-mark")).status).toBe(404);
      for (const n of ["../store", "../planted", "/etc/passwd", "a/b", ""]) {
        const r = await detail(n);
        expect({ n, status: r.status, error: JSON.parse(r.body).error }).toEqual({ n, status: 400, error: expect.stringContaining(`invalid slot name ${JSON.stringify(n)}`) });
      }
      expect((await detail("after-mark")).status).toBe(404);
    } finally {
      // Under strace, the server is strace's child: stop it, and strace ends with it.
      const pid = traced.length ? Number(readFileSync(`/proc/${u.proc.pid}/task/${u.proc.pid}/children`, "utf8").trim().split(" ")[0]) : u.proc.pid;
      process.kill(pid, "SIGINT");
      await exitWithin(u.proc, 15_000);
    }
    if (!traced.length) return console.warn("ui.test.ts: no strace: the file-access half of this test was skipped");
    // Every path the server named in a system call between the two marks is in slots/.
    const log = readFileSync(trace, "utf8");
    const between = log.slice(log.indexOf("slots/before-mark.json"), log.indexOf("slots/after-mark.json"));
    expect(between).toContain("before-mark");
    const touched = between.split("\n").flatMap((l) => [...l.matchAll(/"(\/[^"]*)"/g)].map((m) => m[1]));
    const slots = join(d.path, "slots");
    expect(touched.filter((p) => p.startsWith(d.path) && p !== slots && !p.startsWith(slots + "/"))).toEqual([]);
  });

  test("cross-origin requests are refused, no response carries CORS headers, preflights fail", async () => {
    using d = tempDir();
    await a2a(["publish", "keep", "me"], { dir: d.path });
    const u = await enter(await startUi([], { dir: d.path }));
    try {
      const seen: Record<string, string>[] = [];
      const evil = { Origin: "http://evil.example" };
      const r1 = await get(u, "/events", evil);
      const r2 = await post(u, "/api/clear", { name: "keep" }, evil);
      const r3 = await post(u, "/api/clear", { name: "keep" }, { "Sec-Fetch-Site": "cross-site" });
      const r4 = await rawRequest(u.port, "OPTIONS", "/api/clear", { Host: host(u), Origin: "http://evil.example", "Access-Control-Request-Method": "POST" });
      const r5 = await post(u, "/api/clear", { name: "keep" }, { Origin: `http://127.0.0.1:${u.port + 1}` });
      for (const r of [r1, r2, r3, r4, r5]) {
        expect(r.status).toBeGreaterThanOrEqual(403);
        seen.push(r.headers);
      }
      const fine = await get(u, "/api/config", { Origin: `http://127.0.0.1:${u.port}` });
      expect(fine.status).toBe(200);
      seen.push(fine.headers);
      for (const h of seen) expect(Object.keys(h).filter((k) => k.startsWith("access-control-"))).toEqual([]);
      expect((await a2a(["wait", "keep"], { dir: d.path })).stdout).toBe("me");
    } finally {
      await stop(u);
    }
  });

  test("actions are POST only, with a JSON body; every response has the strict CSP", async () => {
    using d = tempDir();
    await a2a(["publish", "keep", "me"], { dir: d.path });
    const u = await enter(await startUi(["--as", "human"], { dir: d.path }));
    try {
      const g = await get(u, "/api/clear?name=keep");
      expect(g.status).toBe(405);
      const form = await rawRequest(u.port, "POST", "/api/clear", { Host: host(u), Cookie: u.cookie, "X-A2A-Token": u.token, "Content-Type": "application/x-www-form-urlencoded" }, "name=keep");
      expect(form.status).toBe(400);
      expect((await a2a(["wait", "keep"], { dir: d.path })).stdout).toBe("me");
      const page = await get(u, "/");
      expect(page.status).toBe(200);
      const csp = page.headers["content-security-policy"];
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe");
      expect(page.headers["x-content-type-options"]).toBe("nosniff");
      expect(page.headers["referrer-policy"]).toBe("no-referrer");
      // The page itself holds no store data: that comes only as JSON over the event stream.
      expect(page.body).not.toContain("keep");
      // The real action works and is the CLI's clear.
      const c = await post(u, "/api/clear", { name: "keep" });
      expect({ status: c.status, body: JSON.parse(c.body) }).toEqual({ status: 200, body: { cleared: true } });
      expect((await a2a(["status", "keep"], { dir: d.path })).code).toBe(3);
      // Sending is `a2a send TO BODY --as human`.
      const s = await post(u, "/api/send", { to: "bob", body: "from the page" });
      expect(s.status).toBe(200);
      const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
      expect(inbox.unread.map((m: { from: string; body: string }) => [m.from, m.body])).toEqual([["human", "from the page"]]);
      const bad = await post(u, "/api/send", { to: "../etc", body: "x" });
      expect(bad.status).toBe(400);
      expect(JSON.parse(bad.body).error).toContain("invalid recipient name");
    } finally {
      await stop(u);
    }
  });

  test("--read-only refuses every action and leaves the store as it was", async () => {
    using d = tempDir();
    await a2a(["publish", "keep", "me"], { dir: d.path });
    const u = await enter(await startUi(["--read-only", "--as", "human"], { dir: d.path }));
    try {
      expect(u.stdout).toContain("(read-only)");
      for (const [path, body] of [["/api/clear", { name: "keep" }], ["/api/send", { to: "bob", body: "x" }], ["/api/lease/release", { name: "l" }]] as const) {
        const r = await post(u, path, body);
        expect({ path, status: r.status }).toEqual({ path, status: 403 });
      }
      expect((await a2a(["wait", "keep"], { dir: d.path })).stdout).toBe("me");
      expect((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout).toContain('"unread":0');
    } finally {
      await stop(u);
    }
  });

  test("--host beyond loopback warns; a bad --host or --port is a usage error; SIGTERM exits 143", async () => {
    using d = tempDir();
    const u = await enter(await startUi(["--host", "0.0.0.0"], { dir: d.path }));
    try {
      const r = await get(u, "/api/config");
      expect(r.status).toBe(200);
    } finally {
      u.proc.kill("SIGTERM");
      expect(await exitWithin(u.proc, 15_000)).toBe(143);
    }
    const stderr = await new Response(u.proc.stderr).text();
    expect(stderr).toMatch(/^a2a: warning: serving on 0\.0\.0\.0, not loopback: .+\n$/);
    for (const args of [["--host", "evil.example"], ["--port", "70000"], ["--port", "x"]]) {
      const bad = await a2a(["ui", ...args], { dir: d.path });
      expect({ args, code: bad.code, lines: bad.stderr.split("\n").length }).toEqual({ args, code: 2, lines: 2 });
      expect(bad.stderr).toMatch(/^a2a: .+: .+\n$/);
    }
  });

  test("--json prints one line with the one-time link and no reusable secret", async () => {
    using d = tempDir();
    const u = await startUi(["--json"], { dir: d.path });
    try {
      const j = JSON.parse(u.stdout.trim());
      expect(j).toEqual({ url: u.url, port: u.port, read_only: false, as: null, host: "127.0.0.1" });
      expect((await get(await enter(u), "/api/config")).status).toBe(200);
    } finally {
      expect(await stop(u)).toBe(130);
    }
  });

  test("the page's script never builds markup from data", () => {
    const js = readFileSync(join(ROOT, "cli/ui/page.js"), "utf8").replace(/^\s*\/\/.*$/gm, "");
    expect(js).toContain("textContent");
    expect(js.match(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\("on/g)).toBeNull();
  });
});

// ---- in a real browser ------------------------------------------------------------------------
// Waits go through locators: page.waitForFunction may evaluate its predicate with eval, which
// the page's CSP (script-src 'self', rightly) refuses, and then fails depending on timing.

const missing = browserMissing();
if (missing) console.warn(`ui.test.ts: skipping the browser tests: ${missing}`);

describe.skipIf(!!missing)("a2a ui in chromium", () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let ctx: BrowserContext;
  const shotDir = screenshots("ui.test.ts");
  const shots = shotDir.path;
  beforeAll(async () => {
    browser = await launchBrowser();
    ctx = browser.ctx;
  });
  afterAll(async () => {
    await browser?.close();
    shotDir.done();
  });

  async function open(u: RunningUi): Promise<Page> {
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("dialog", (dlg) => {
      errors.push(`a native dialog opened: ${dlg.message()}`);
      dlg.dismiss();
    });
    (page as Page & { errors?: string[] }).errors = errors;
    await page.goto(u.url);
    await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
    return page;
  }
  const pageErrors = (p: Page) => (p as Page & { errors?: string[] }).errors ?? [];
  const row = (name: string, extra = "") => `#slots tr[data-name="${name}"]${extra}`;

  test("slots: a publish changes the row, streamed chunks appear in place and in the detail, a JSON result opens pretty-printed", async () => {
    using d = testStore();
    await a2a(["publish", "early", "was here before"], { dir: d.path });
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      expect(await page.textContent(row("early"))).toContain("was here before");
      await a2a(["start", "job", "index the repo"], { dir: d.path });
      await page.waitForSelector(row("job", '[data-state="running"]'));
      await a2a(["append", "job", "step one\n"], { dir: d.path });
      await page.waitForSelector(row("job", '[data-chunks="1"]'));
      expect(await page.textContent(row("job"))).toContain("step one");
      await page.click(row("job"));
      await page.waitForSelector("#detail[open]");
      await a2a(["append", "job", "step two\n"], { dir: d.path });
      await page.locator("#detail-stream", { hasText: "step two" }).waitFor();
      expect(await page.textContent("#detail-stream")).toBe("step one\nstep two\n");
      await page.locator("#detail").screenshot({ path: join(shots, "slot-stream.png") });
      await page.click("#detail-close");
      await a2a(["publish", "job", '{"files":120,"ok":true,"langs":["ts","md"]}'], { dir: d.path });
      await page.waitForSelector(row("job", '[data-state="done"]'));
      await page.click(row("job"));
      await page.waitForSelector("#detail[open]");
      await page.locator("#detail-result", { hasText: '"files"' }).waitFor();
      expect(await page.textContent("#detail-result")).toBe(JSON.stringify({ files: 120, ok: true, langs: ["ts", "md"] }, null, 2));
      await page.locator("#detail").screenshot({ path: join(shots, "slot-result.png") });
      await page.click("#detail-close");
      await page.locator("#slots-view").screenshot({ path: join(shots, "slots.png") });
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("the link leaves the bare URL in the address bar; a reload keeps the session, an HttpOnly SameSite=Strict cookie", async () => {
    using d = testStore();
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      expect(page.url()).toBe(`${u.base}/`);
      await page.reload();
      await page.waitForSelector("body[data-ready]", { timeout: 20_000 });
      expect(await page.evaluate("document.cookie")).toBe("");
      const mine = (await ctx.cookies(u.base)).filter((c) => c.name === `a2a_${u.port}`);
      expect(mine.map((c) => [c.httpOnly, c.sameSite, c.path])).toEqual([[true, "Strict", "/"]]);
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("agents: mail sent from the CLI raises the count; Send on the page delivers as --as, after a confirmation", async () => {
    using d = testStore();
    const u = await startUi(["--as", "human"], { dir: d.path });
    const page = await open(u);
    try {
      await a2a(["send", "bob", "the schema changed", "--as", "alice"], { dir: d.path });
      await page.waitForSelector('#agents tr[data-agent="bob"][data-unread="1"]');
      expect(await page.textContent("#agents")).toContain("the schema changed");
      await page.click('#agents tr[data-agent="bob"] button');
      await page.waitForSelector("#send-dialog[open]");
      expect(await page.inputValue("#send-to")).toBe("bob");
      await page.fill("#send-body", "please review PR 42");
      await page.click("#send-go");
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-cmd")).toBe("a2a send bob 'please review PR 42' --as human");
      // Cancelling sends nothing.
      await page.click("#confirm-no");
      await page.click("#send-go");
      await page.waitForSelector("#confirm[open]");
      await page.click("#confirm-yes");
      await page.waitForSelector('#agents tr[data-agent="bob"][data-unread="2"]');
      const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
      expect(inbox.unread.map((m: { from: string; body: string }) => [m.from, m.body])).toEqual([
        ["alice", "the schema changed"],
        ["human", "please review PR 42"],
      ]);
      // Reading it on the CLI brings the count down.
      await a2a(["recv", "--all", "--as", "bob"], { dir: d.path });
      await page.waitForSelector('#agents tr[data-agent="bob"][data-unread="0"]');
      await page.waitForSelector('#timeline li[data-kind="read"]');
      await page.locator("#agents-view").screenshot({ path: join(shots, "agents.png") });
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("agents: a waiting message opens its thread, as its agent sees it, oldest first; nothing is marked read; held mail has no thread", async () => {
    using d = testStore();
    const sent = async (args: string[]) => JSON.parse((await a2a([...args, "--json"], { dir: d.path })).stdout).id as string;
    const q = await sent(["send", "bob", "which port?", "--as", "alice"]);
    const r1 = await sent(["send", "alice", "<b>8080</b>, why?", "--reply-to", q, "--as", "bob"]);
    const conf = join(shots, "proxy.conf");
    writeFileSync(conf, "listen 8080;\n");
    const r2 = await sent(["send", "bob", "for the proxy", "--reply-to", r1, "--attach", conf, "--as", "alice"]);
    const spam = await sent(["send", "bob", "buy now", "--reply-to", q, "--as", "pest"]);
    expect((await a2a(["deny", "pest", "--as", "bob"], { dir: d.path })).code).toBe(0); // its mail is held now
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await page.waitForSelector(`#agents li[data-id="${r2}"] button.thread-open`);
      await page.waitForSelector(`#agents li[data-id="${spam}"]`);
      expect(await page.$$(`#agents li[data-id="${spam}"] button`)).toHaveLength(0);
      await page.click(`#agents li[data-id="${r2}"] button.thread-open`);
      await page.waitForSelector("#thread[open]");
      expect(await page.textContent("#thread-title")).toBe(`Thread ${q}`);
      const items = await page.$$eval("#thread-list li", (lis) => lis.map((li) => [li.getAttribute("data-id"), li.getAttribute("data-state"), li.className]));
      expect(items).toEqual([[q, "unread", ""], [r1, "sent", ""], [r2, "unread", "this"]]);
      expect(await page.textContent("#thread-list")).toContain("<b>8080</b>, why?"); // text, never markup
      expect(await page.$$("#thread-list b")).toHaveLength(0);
      // The file it hands over: its name as inert text, its digest, the command that gets it.
      const digest = `sha256:${new Bun.CryptoHasher("sha256").update("listen 8080;\n").digest("hex")}`;
      expect(await page.$$eval("#thread-list .attachment", (as) => as.map((a) => [a.textContent, a.getAttribute("data-digest"), a.getAttribute("title")]))).toEqual([
        ["proxy.conf", digest, `13 bytes, application/octet-stream: a2a get ${digest} -o FILE`],
      ]);
      expect(await page.$$eval(`#agents li[data-id="${r2}"] .attachment`, (as) => as.map((a) => a.textContent))).toEqual(["proxy.conf"]);
      await page.locator("#thread").screenshot({ path: join(shots, "thread.png") });
      await page.click("#thread-close");
      const inbox = JSON.parse((await a2a(["inbox", "--as", "bob", "--json"], { dir: d.path })).stdout);
      expect(inbox.counts).toMatchObject({ unread: 2, read: 0 });
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("the search box finds across topics, slots, tasks and --as's mail, best first, the matched words marked, agents' text inert", async () => {
    using d = testStore();
    const run = async (args: string[]) => expect((await a2a(args, { dir: d.path })).code).toBe(0);
    await run(["publish", "schema", "the <b>email</b> index stays; see docs/schema.md"]);
    await run(["pub", "build.status", "email index rebuilt", "--as", "ci"]);
    await run(["send", "bob", "is the email index final?", "--as", "alice"]);
    await run(["send", "carol", "email for carol only", "--as", "alice"]);
    const u = await startUi(["--as", "bob"], { dir: d.path });
    const page = await open(u);
    try {
      await page.fill("#search-box", "email index");
      await page.press("#search-box", "Enter");
      await page.waitForSelector("#search-results li");
      const rows = await page.$$eval("#search-results li", (lis) => lis.map((li) => [li.getAttribute("data-kind"), li.getAttribute("data-id")]));
      expect(rows.map((r) => r[0]).sort()).toEqual(["message", "slot", "topic"]); // carol's mail is not bob's to find
      expect(rows).toContainEqual(["slot", "schema"]);
      expect(await page.$$eval("#search-results mark", (ms) => [...new Set(ms.map((m) => m.textContent!.toLowerCase()))].sort())).toEqual(["email", "index"]);
      expect(await page.$$("#search-results b")).toHaveLength(0);
      expect(await page.textContent("#search-note")).toBe("3 found (mail as bob)");
      await page.locator("#search-form").screenshot({ path: join(shots, "search.png") });
      await page.fill("#search-box", "nothing-like-this");
      await page.press("#search-box", "Enter");
      await page.waitForSelector("#search-note:text-matches('^nothing found')");
      expect(await page.$$("#search-results li")).toHaveLength(0);
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("clear from the page: cancel keeps the slot, confirm removes it from the store and the table", async () => {
    using d = testStore();
    await a2a(["publish", "doomed", "bye"], { dir: d.path });
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await page.click(row("doomed"));
      await page.waitForSelector("#detail[open]");
      await page.click("#detail-clear");
      await page.waitForSelector("#confirm[open]");
      expect(await page.textContent("#confirm-cmd")).toBe("a2a clear doomed");
      await page.click("#confirm-no");
      expect((await a2a(["status", "doomed"], { dir: d.path })).code).toBe(0);
      await page.click("#detail-clear");
      await page.waitForSelector("#confirm[open]");
      await page.click("#confirm-yes");
      await page.waitForSelector(row("doomed"), { state: "detached" });
      expect((await a2a(["status", "doomed"], { dir: d.path })).code).toBe(3);
      await page.waitForSelector('#timeline li[data-kind="cleared"]');
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("read-only: the page offers no action", async () => {
    using d = testStore();
    await a2a(["publish", "keep", "me"], { dir: d.path });
    const u = await startUi(["--read-only", "--as", "human"], { dir: d.path });
    const page = await open(u);
    try {
      expect(await page.textContent("#mode")).toBe("read-only");
      expect(await page.isDisabled("#compose")).toBe(true);
      await page.click(row("keep"));
      await page.waitForSelector("#detail[open]");
      expect(await page.isDisabled("#detail-clear")).toBe(true);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("hostile store content (HTML, script, ANSI, bidi, a 1 MiB line) is shown as inert text", async () => {
    using d = testStore();
    const html = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>`;
    const ansi = "\u001b[31mred\u001b[0m \u0007bell \u202Eevil";
    const huge = "A".repeat(1024 * 1024 - 64) + "<i>end</i>";
    await a2a(["publish", "html", html], { dir: d.path });
    await a2a(["publish", "ansi", ansi], { dir: d.path });
    await a2a(["publish", "huge", "-"], { dir: d.path, stdin: huge });
    await a2a(["start", "streamer", html], { dir: d.path });
    await a2a(["send", "bob", html, "--as", "mallory"], { dir: d.path });
    await a2a(["pub", "news", html, "--as", "mallory"], { dir: d.path });
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await a2a(["append", "streamer", html], { dir: d.path });
      await page.waitForSelector(row("streamer", '[data-chunks="1"]'));
      const inert = () =>
        page.evaluate(`({
          pwned: window.__pwned ?? null,
          injected: document.querySelectorAll("main img, main script, main b, main i, dialog img, dialog script, dialog b, dialog i").length,
        })`);
      expect(await inert()).toEqual({ pwned: null, injected: 0 });
      expect(await page.textContent(row("html"))).toContain("<img src=x onerror=");
      expect(await page.textContent(row("streamer"))).toContain("<script>");
      // The agents and topics panes fill from their own feeds (on PostgreSQL after the slots'):
      // wait for the text, then look.
      await page.locator("#agents", { hasText: "<img src=x" }).waitFor({ timeout: 20_000 });
      await page.locator("#topics", { hasText: "<script>window.__pwned=2</script>" }).waitFor({ timeout: 20_000 });
      expect(await page.textContent("#agents")).toContain("<img src=x");
      expect(await page.textContent("#topics")).toContain("<script>window.__pwned=2</script>");
      expect(await page.textContent(row("ansi"))).toContain("^[[31mred^[[0m ^Gbell ⟨U+202E⟩evil");
      // Agent text is marked as such.
      expect(await page.getAttribute(`${row("html")} td:last-child span`, "class")).toContain("agent");
      await page.click(row("huge"));
      await page.waitForSelector("#detail[open]");
      await page.locator("#detail-result", { hasText: "<i>end</i>" }).waitFor();
      expect(await page.evaluate(`document.getElementById("detail-result").textContent.length`)).toBe(huge.length);
      expect(await inert()).toEqual({ pwned: null, injected: 0 });
      await page.click("#detail-close");
      await page.click(row("html"));
      await page.waitForSelector("#detail[open]");
      expect(await page.textContent("#detail-result")).toBe(html);
      expect(await inert()).toEqual({ pwned: null, injected: 0 });
      await page.locator("#detail").screenshot({ path: join(shots, "hostile.png") });
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("the timeline pauses (events wait, counted) and resumes; topics follow new messages", async () => {
    using d = testStore();
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await a2a(["publish", "one", "1"], { dir: d.path });
      await page.waitForSelector('#timeline li[data-kind="published"]');
      await page.click("#pause");
      await a2a(["publish", "two", "2"], { dir: d.path });
      await page.waitForSelector(row("two"));
      await page.locator("#pause", { hasText: "new" }).waitFor();
      expect(await page.locator('#timeline li[data-kind="published"]').count()).toBe(1);
      await page.click("#pause");
      expect(await page.locator('#timeline li[data-kind="published"]').count()).toBe(2);
      await a2a(["pub", "build.status", "green on main", "--as", "ci"], { dir: d.path });
      await page.waitForSelector('#topics [data-topic="build.status"]');
      expect(await page.textContent('#topics [data-topic="build.status"]')).toContain("green on main");
      // A post without a sender's name is "anonymous" here as everywhere (frames, timeline).
      await a2a(["pub", "build.status", "from nobody"], { dir: d.path });
      await page.locator("#timeline li", { hasText: "anonymous → build.status" }).waitFor();
      await page.locator('#topics [data-topic="build.status"]', { hasText: "from nobody" }).waitFor();
      expect(await page.textContent('#topics [data-topic="build.status"]')).toContain("anonymous");
      await page.locator("#timeline-view").screenshot({ path: join(shots, "timeline.png") });
      await page.locator("#topics-view").screenshot({ path: join(shots, "topics.png") });
      await page.screenshot({ path: join(shots, "page.png"), fullPage: true });
    } finally {
      await page.close();
      await stop(u);
    }
  });

  test("agents: each session's five states; a permission prompt puts it in the needs-you list at the top, its answer and stop take it out", async () => {
    using d = testStore();
    using w = tempDir();
    const cwd = join(w.path, "proj");
    mkdirSync(cwd);
    const alice = await connect(d.path, { A2A_AGENT: "alice" }, { cwd, tools: "all" });
    const hook = (event: string, input: object) => a2a(["hook", event], { dir: d.path, stdin: JSON.stringify({ cwd, ...input }), env: { A2A_AGENT: "alice" } });
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="idle"]');
      expect(await page.isHidden("#needs-you")).toBe(true);
      await hook("user-prompt-submit", {});
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="working"]');
      const asked = "Claude needs your permission to use Bash <b>rm -rf /</b>";
      await hook("notification", { hook_event_name: "Notification", message: asked, notification_type: "permission_prompt" });
      await page.waitForSelector('#needs-list li[data-agent="alice"]');
      expect(await page.isVisible("#needs-you")).toBe(true);
      expect(await page.textContent("#needs-list")).toContain(asked); // the agent's words, as inert text
      expect(await page.locator("#needs-list b").count()).toBe(1); // only the page's own name tag
      await page.locator("#needs-you").screenshot({ path: join(shots, "needs-you.png") });
      await hook("stop", { stop_hook_active: false });
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="idle"]');
      expect(await page.isHidden("#needs-you")).toBe(true);
      // Blocked in a claim: waiting, on what; the task comes and it is idle again.
      const claim = alice.json("task_claim", { queue: "build", wait: true, timeout: 60 });
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="waiting"]');
      expect(await page.textContent('#agents tr[data-agent="alice"] td.state')).toContain("a claimable task in build");
      expect((await a2a(["task", "add", "build", "compile"], { dir: d.path })).code).toBe(0);
      expect((await claim).ok).toBe(true);
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="idle"]');
      // Its process killed: gone at once, never shown as live.
      process.kill(alice.pid, "SIGKILL");
      await page.waitForSelector('#agents tr[data-agent="alice"][data-state="gone"]');
      expect(await page.locator('#agents tr[data-agent="alice"] .live-dot.on').count()).toBe(0);
      expect(pageErrors(page)).toEqual([]);
    } finally {
      await page.close();
      await stop(u);
      await alice.close().catch(() => undefined);
    }
  });

  test("many slots: the newest 300 have rows, the filter finds the rest, a change to an old one brings it to the top", async () => {
    using d = testStore();
    const bus = openBus({ dir: d.path, env: {} });
    for (let i = 0; i < 350; i++) await bus.slots.publish(`s${String(i).padStart(3, "0")}`, `result ${i}`);
    const u = await startUi([], { dir: d.path });
    const page = await open(u);
    try {
      expect(await page.locator("#slots tr").count()).toBe(300);
      expect(await page.textContent("#slots-count")).toContain("350 · 0 running · newest 300 shown");
      expect(await page.locator(row("s000")).count()).toBe(0);
      await page.fill("#slot-filter", "s000");
      await page.waitForSelector(row("s000"));
      expect(await page.locator("#slots tr").count()).toBe(1);
      await page.fill("#slot-filter", "");
      await page.locator("#slots tr").nth(299).waitFor();
      await a2a(["publish", "s001", "changed"], { dir: d.path });
      await page.waitForSelector(`#slots tr:first-child[data-name="s001"]`);
      expect(await page.locator("#slots tr").count()).toBe(300);
    } finally {
      await page.close();
      await stop(u);
      await bus.close();
    }
  });

  // Another port of 127.0.0.1 is the same site (ports do not count), so the browser sends the
  // SameSite=Strict cookie with these requests: the server's Origin check is what refuses them.
  test("a page on another origin cannot read the stream or act, even with the browser's session and the page's token", async () => {
    using d = testStore();
    await a2a(["publish", "keep", "s3cret"], { dir: d.path });
    const u = await startUi([], { dir: d.path });
    const other = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("<!doctype html><title>elsewhere</title>", { headers: { "Content-Type": "text/html" } }) });
    const dash = await open(u);
    const token = await dash.getAttribute('meta[name="a2a-token"]', "content");
    const page = await ctx.newPage();
    try {
      await page.goto(`http://127.0.0.1:${other.port}/`);
      const r = await page.evaluate(
        async ({ base, token }) => {
          const out: string[] = [];
          for (const go of [
            () => fetch(`${base}/api/slot?name=keep`, { credentials: "include" }).then((x) => x.text()),
            () => fetch(`${base}/api/clear`, { method: "POST", credentials: "include", headers: { "Content-Type": "application/json", "X-A2A-Token": token }, body: '{"name":"keep"}' }).then((x) => x.text()),
            () => fetch(`${base}/api/clear`, { method: "POST", mode: "no-cors", credentials: "include", body: '{"name":"keep"}' }).then(() => "opaque"),
          ]) {
            try {
              out.push(await go());
            } catch (e) {
              out.push("blocked: " + (e as Error).name);
            }
          }
          return out;
        },
        { base: u.base, token: token! },
      );
      expect(r[0]).toBe("blocked: TypeError");
      expect(r[1]).toBe("blocked: TypeError");
      // A blind no-cors POST is blocked by the browser or sent opaque and refused by the server
      // (no token header, another origin): either way nothing changes.
      expect(["opaque", "blocked: TypeError"]).toContain(r[2]);
      expect((await a2a(["wait", "keep"], { dir: d.path })).stdout).toBe("s3cret");
      expect(pageErrors(dash)).toEqual([]);
    } finally {
      await page.close();
      await dash.close();
      other.stop(true);
      await stop(u);
    }
  });
});
