// `a2a ui --open` with a browser that tells what it was given: a script, named by $BROWSER
// (and standing in for xdg-open on PATH, as the platform's opener), that writes its argv to a
// file and then opens the URL in Debian's chromium (headless, --dump-dom: the DOM the page
// made). A browser's argv is in /proc for every local user to read: what is there must be
// worthless once the browser has used it, and nothing on it may open the dashboard again.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { a2a, exitWithin, ON_FILES, tempDir, until } from "../harness/run";
import { browserEnv, browserMissing, CHROMIUM, CHROMIUM_ARGS, enter, rawRequest, startUi } from "../harness/ui";

setDefaultTimeout(90_000);

const missing = browserMissing();
if (missing) console.warn(`ui-open.test.ts: skipping: ${missing}`);

// a2a ui refuses a database store for now: files only.
describe.skipIf(!!missing || !ON_FILES)("a2a ui --open", () => {
  test("the browser's argv holds a one-time link: the browser gets the page, the same URL again gets nothing, and no reusable secret is on it", async () => {
    using d = tempDir();
    using b = tempDir("a2a-browser-");
    await a2a(["publish", "secret", "s3cret-result"], { dir: d.path });
    const argvFile = join(b.path, "argv");
    const dom = join(b.path, "dom.html");
    const done = join(b.path, "done");
    const bin = join(b.path, "bin");
    mkdirSync(bin);
    const browser = join(bin, "fake-browser");
    const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
    writeFileSync(
      browser,
      [
        "#!/bin/sh",
        `printf '%s\\n' "$@" > ${q(argvFile)}`,
        // HOME and XDG_* in the temp dir too (tests/harness/ui.ts browserEnv says why).
        `env ${Object.entries(browserEnv(b.path)).filter(([k]) => k === "HOME" || k.startsWith("XDG_")).map(([k, v]) => `${k}=${q(v)}`).join(" ")} ${CHROMIUM} ${CHROMIUM_ARGS.join(" ")} --user-data-dir=${q(join(b.path, "profile"))} --dump-dom "$1" > ${q(dom)} 2>/dev/null`,
        `echo "$?" > ${q(done)}`,
        "",
      ].join("\n"),
    );
    chmodSync(browser, 0o755);
    writeFileSync(join(bin, "xdg-open"), `#!/bin/sh\nexec ${q(browser)} "$@"\n`);
    chmodSync(join(bin, "xdg-open"), 0o755);

    const u = await startUi(["--open", "--read-only"], { dir: d.path, env: { BROWSER: browser, PATH: `${bin}:${process.env.PATH}` } });
    try {
      // The browser exits once it has loaded the page and written its DOM: no event to wait on.
      await until(() => existsSync(done) && readFileSync(done, "utf8").endsWith("\n"), 60_000, "the browser to finish", 50);
      const argv = readFileSync(argvFile, "utf8").trimEnd().split("\n");
      expect(argv).toHaveLength(1);
      const opened = argv[0];
      expect(opened.startsWith(`${u.base}/?`)).toBe(true);
      // The first opener got the page (the dashboard's DOM, not a refusal).
      expect(readFileSync(done, "utf8").trim()).toBe("0");
      const page = readFileSync(dom, "utf8");
      expect(page).toContain("<title>a2a dashboard</title>");
      expect(page).toContain('id="slots"');
      expect(page).not.toContain("a2a ui:");

      // Anyone who read that argv and tries it now gets nothing, whichever way they try.
      const path = opened.slice(u.base.length);
      const again = await rawRequest(u.port, "GET", path, { Host: `127.0.0.1:${u.port}` });
      expect({ status: again.status, body: again.body }).toEqual({ status: 403, body: "a2a ui: this link was used already or has expired: open the newest link a2a ui printed\n" });
      expect(again.headers["set-cookie"]).toBeUndefined();
      const secret = new URL(opened).searchParams;
      for (const [, v] of secret) {
        for (const tryIt of [`/api/slot?name=secret&token=${v}`, `/api/slot?name=secret&code=${v}`]) {
          const r = await rawRequest(u.port, "GET", tryIt, { Host: `127.0.0.1:${u.port}`, Cookie: `a2a_${u.port}=${v}` });
          expect({ tryIt, status: r.status }).toEqual({ tryIt, status: 403 });
          expect(r.body).not.toContain("s3cret");
        }
      }

      // The printed link is another, unused, and what it gives (a cookie, a page token) is not
      // on the browser's command line either.
      expect(u.url).not.toBe(opened);
      expect(argv.join(" ")).not.toContain(new URL(u.url).searchParams.get("code")!);
      const c = await enter(u);
      expect((await rawRequest(u.port, "GET", "/api/slot?name=secret", { Host: `127.0.0.1:${u.port}`, Cookie: c.cookie })).status).toBe(200);
      for (const s of [c.cookie.split("=")[1], c.token]) expect(argv.join(" ")).not.toContain(s);
    } finally {
      u.proc.kill("SIGINT");
      expect(await exitWithin(u.proc, 15_000)).toBe(130);
    }
  });
});
