// Driving `a2a ui` for tests and the bench: start the server and read its URL, speak raw HTTP
// to it (to send the Host and Origin headers a browser would, or an attacker), and launch
// Debian's chromium through playwright-core with a fresh profile. No sleeps: every wait is on
// output, a response, or the page's DOM, with a generous bound.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { readUntil, spawnA2A, type RunOptions } from "./run";

export const CHROMIUM = "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface RunningUi {
  proc: Subprocess<any, "pipe", "pipe">;
  url: string; // the one-time link it printed first
  base: string; // http://127.0.0.1:PORT
  port: number;
  stdout: string; // all it printed so far
}

// A session made by opening a link over raw HTTP: the Cookie header to send, and the page's
// action token (X-A2A-Token, for POSTs).
export interface Client extends RunningUi {
  cookie: string;
  token: string;
}

const LINK = /(http:\/\/[^\s"]+:(\d+))\/\?code=([0-9a-f]+)/g;

// Starts `a2a ui --port 0 ARGS` and resolves once it has printed its link.
export async function startUi(args: string[], o: RunOptions = {}): Promise<RunningUi> {
  const proc = spawnA2A(["ui", "--port", "0", ...args], o);
  const stdout = await readUntil(proc.stdout, (t) => /\?code=[0-9a-f]+[\s"]/.test(t), 20_000);
  const m = [...stdout.matchAll(LINK)][0];
  if (!m) {
    proc.kill();
    throw new Error(`a2a ui printed no link: ${stdout} / ${await new Response(proc.stderr).text()}`);
  }
  return { proc, url: m[0], base: m[1], port: Number(m[2]), stdout };
}

// The next link `a2a ui` prints (it prints one each time the last is used).
export async function nextLink(u: RunningUi): Promise<string> {
  const seen = [...u.stdout.matchAll(LINK)].length;
  u.stdout += await readUntil(u.proc.stdout, (t) => [...(u.stdout + t).matchAll(LINK)].length > seen, 20_000);
  const all = [...u.stdout.matchAll(LINK)];
  if (all.length <= seen) throw new Error(`a2a ui printed no further link: ${u.stdout}`);
  return all[seen][0];
}

// Opens `link` as a browser would (follows the redirect, keeps the cookie, loads the page).
export async function enter(u: RunningUi, link = u.url): Promise<Client> {
  const host = `127.0.0.1:${u.port}`;
  const first = await rawRequest(u.port, "GET", link.slice(u.base.length), { Host: host });
  const set = first.headers["set-cookie"];
  if (first.status !== 303 || !set) throw new Error(`opening ${link} gave ${first.status}, no session: ${first.body}`);
  const cookie = set.split(";")[0];
  const page = await rawRequest(u.port, "GET", first.headers.location, { Host: host, Cookie: cookie });
  const token = /<meta name="a2a-token" content="([0-9a-f]+)">/.exec(page.body)?.[1];
  if (page.status !== 200 || !token) throw new Error(`the page after ${link} gave ${page.status}: ${page.body.slice(0, 200)}`);
  return Object.assign(u, { cookie, token });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>; // lower-case names
  body: string;
}

// One HTTP/1.1 request over a plain socket, exactly as written (Host and Origin included).
export function rawRequest(port: number, method: string, path: string, headers: Record<string, string>, body = "", limitMs = 10_000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer to ${method} ${path} within ${limitMs} ms`));
    }, limitMs);
    s.on("connect", () => {
      const h = { ...headers, Connection: "close", "Content-Length": String(Buffer.byteLength(body)) };
      s.write(`${method} ${path} HTTP/1.1\r\n` + Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join("") + "\r\n" + body);
    });
    s.on("data", (d) => chunks.push(Buffer.from(d)));
    s.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.on("close", () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString("utf8");
      const [head, ...rest] = text.split("\r\n\r\n");
      const lines = head.split("\r\n");
      const status = Number(lines[0].split(" ")[1]);
      const hs: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(":");
        if (i > 0) hs[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status, headers: hs, body: rest.join("\r\n\r\n") });
    });
  });
}

// Why the browser tests cannot run here, or undefined when they can.
export function browserMissing(): string | undefined {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is not installed (apt-get install chromium)`;
  try {
    require.resolve("playwright-core");
  } catch {
    return "playwright-core is not installed (bun install)";
  }
  return undefined;
}

// Chromium's environment with its HOME and XDG directories under `dir`: even with
// --user-data-dir it writes its crash database to ~/.config/chromium and a dconf cache to
// ~/.cache, which a test must not leave in the developer's HOME.
export function browserEnv(dir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("XDG_")) env[k] = v;
  return { ...env, HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config"), XDG_CACHE_HOME: join(dir, "cache"), XDG_DATA_HOME: join(dir, "data") };
}

// A headless chromium with a fresh profile and HOME in one temp directory; close() removes it.
export async function launchBrowser(viewport = { width: 1440, height: 1000 }) {
  const { chromium } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "a2a-chromium-"));
  const ctx = await chromium.launchPersistentContext(join(dir, "profile"), { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport, env: browserEnv(dir) });
  return {
    ctx,
    async close() {
      await ctx.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Where a browser test saves its screenshots: a temp directory removed by done(), or, with
// A2A_TEST_SHOTS=DIR, DIR/NAME, kept and named (a run leaves nothing behind unless asked).
export function screenshots(name: string): { path: string; done(): void } {
  const keep = process.env.A2A_TEST_SHOTS;
  if (keep) {
    const path = join(resolve(keep), name);
    mkdirSync(path, { recursive: true });
    return { path, done: () => console.log(`${name}: screenshots in ${path}`) };
  }
  const path = mkdtempSync(join(tmpdir(), "a2a-ui-shots-"));
  return { path, done: () => rmSync(path, { recursive: true, force: true }) };
}
