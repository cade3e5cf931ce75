// Driving `a2a ui` for tests and the bench: start the server and read its URL, speak raw HTTP
// to it (to send the Host and Origin headers a browser would, or an attacker), and launch
// Debian's chromium through playwright-core with a fresh profile. No sleeps: every wait is on
// output, a response, or the page's DOM, with a generous bound.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  url: string; // as printed, with the token
  base: string; // http://127.0.0.1:PORT
  port: number;
  token: string;
  stdout: string;
}

// Starts `a2a ui --port 0 ARGS` and resolves once it has printed its URL.
export async function startUi(args: string[], o: RunOptions = {}): Promise<RunningUi> {
  const proc = spawnA2A(["ui", "--port", "0", ...args], o);
  const stdout = await readUntil(proc.stdout, (t) => /token=[0-9a-f]+/.test(t) || t.includes("\n}") || /"url"/.test(t), 20_000);
  const m = /(http:\/\/[^\s"]+:(\d+))\/\?token=([0-9a-f]+)/.exec(stdout);
  if (!m) {
    proc.kill();
    throw new Error(`a2a ui printed no URL: ${stdout} / ${await new Response(proc.stderr).text()}`);
  }
  return { proc, url: m[0], base: m[1], port: Number(m[2]), token: m[3], stdout };
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

// A headless chromium with a fresh profile directory; close() also removes the profile.
export async function launchBrowser(viewport = { width: 1440, height: 1000 }) {
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(join(tmpdir(), "a2a-chromium-"));
  const ctx = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, args: CHROMIUM_ARGS, viewport });
  return {
    ctx,
    async close() {
      await ctx.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
