// Who may talk to the dashboard's server. A local web server is an attack surface: another
// user on the machine can connect to a loopback port, read every process's argv in /proc, and
// any web page the user opens can make their browser send requests to it (and, through DNS
// rebinding, read the answers).
//
// Invariants, checked for every request before anything is read from the store:
// - the Host header names this server (a loopback name or the --host address, with our port;
//   any IP literal when bound to a wildcard): a rebinding attacker's hostname is refused. It is
//   checked as the raw header, and the request's URL is parsed only after, here: a Host that
//   makes no URL is a 4xx like any other refusal, never an exception;
// - a request with an Origin (or Sec-Fetch-Site) from another site is refused; no response
//   ever carries Access-Control-* headers, and preflights are refused;
// - access is a session: a random id in an HttpOnly, SameSite=Strict cookie (named after the
//   port: cookies do not tell ports apart). A session is made only by opening a link with a
//   one-time code (GET /?code=), which answers with the cookie and a redirect to the bare URL.
//   A code works once, and a code given a lifetime (the one `--open` hands to the browser, on
//   a command line every local user can read) not after it. So nothing on a command line, in
//   the address bar or in the history opens the dashboard a second time;
// - a POST must also carry the session's action token in the X-A2A-Token header: the page
//   gets it, the cookie never leaves the browser, and a cross-site form or no-cors fetch can
//   send neither that header nor, from another site, the cookie;
// - codes, session ids and tokens are compared in constant time or looked up by their SHA-256
//   (so timing tells at most a prefix of a hash);
// - every response carries a strict Content-Security-Policy and the no-sniff, no-frame,
//   no-referrer headers.

import { createHash, timingSafeEqual } from "node:crypto";
import { randomHex } from "../../lib/core/digest";

export const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": CSP,
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cross-Origin-Resource-Policy": "same-origin",
};

const digest = (s: string) => createHash("sha256").update(s).digest();
const key = (s: string) => digest(s).toString("hex");

export function tokenMatches(given: string | null, token: string): boolean {
  if (given === null) return false;
  return timingSafeEqual(digest(given), digest(token));
}

export const isLoopback = (host: string) => host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
const isWildcard = (host: string) => host === "0.0.0.0" || host === "::";
const IPV4 = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
const isIpLiteral = (h: string) => IPV4.test(h) || /^\[[0-9a-f:.]+\]$/i.test(h);
export const isHostAddress = (h: string) => h === "localhost" || IPV4.test(h) || /^[0-9a-f:.]+$/i.test(h) && h.includes(":");

// "[::1]" for an IPv6 address in a URL or Host header.
export const urlHost = (host: string) => (host.includes(":") ? `[${host}]` : host);

export interface Refusal {
  kind: "refuse";
  status: number;
  why: string;
}
// A link was opened: answer with a redirect to "/", setting the cookie when a session was made.
export interface Entry {
  kind: "enter";
  setCookie: string | undefined;
}
export interface Pass {
  kind: "pass";
  url: URL;
  token: string; // the session's action token, for the page
}
export type Verdict = Refusal | Entry | Pass;

interface Code {
  expires: number; // on the monotonic clock, ms; Infinity: until used
  onUsed: (() => void) | undefined;
}

const refuse = (status: number, why: string): Refusal => ({ kind: "refuse", status, why });

export class Gate {
  readonly names: Set<string>; // acceptable Host header values, lower case, with the port
  readonly cookie: string; // the session cookie's name
  readonly #codes = new Map<string, Code>(); // by the code's hash
  readonly #sessions = new Map<string, string>(); // the session id's hash -> its action token

  constructor(
    readonly bound: string,
    readonly port: number,
    readonly now: () => number = () => performance.now(),
  ) {
    const hosts = new Set([urlHost(bound)]);
    if (isLoopback(bound) || isWildcard(bound)) for (const h of ["127.0.0.1", "localhost", "[::1]"]) hosts.add(h);
    this.names = new Set([...hosts].map((h) => `${h}:${port}`.toLowerCase()));
    this.cookie = `a2a_${port}`;
  }

  // A new one-time code for a link; `ttlMs`: it also dies unused after that long.
  mint(o: { ttlMs?: number; onUsed?: () => void } = {}): string {
    const code = randomHex(24);
    this.#codes.set(key(code), { expires: this.now() + (o.ttlMs ?? Infinity), onUsed: o.onUsed });
    return code;
  }

  hostAllowed(hostHeader: string | null): boolean {
    if (!hostHeader) return false;
    const h = hostHeader.toLowerCase();
    if (this.names.has(h)) return true;
    if (!isWildcard(this.bound)) return false;
    const m = /^(.*):(\d+)$/.exec(h);
    return !!m && Number(m[2]) === this.port && isIpLiteral(m[1]);
  }

  check(req: Request): Verdict {
    const host = req.headers.get("host");
    if (!this.hostAllowed(host)) return refuse(403, "foreign Host header: open the URL a2a ui printed");
    const origin = req.headers.get("origin");
    if (origin !== null && origin !== `http://${host}`) return refuse(403, "cross-origin request refused");
    const site = req.headers.get("sec-fetch-site");
    if (site !== null && site !== "same-origin" && site !== "none") return refuse(403, "cross-site request refused");
    if (req.method === "OPTIONS") return refuse(405, "no cross-origin access");
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return refuse(400, "malformed request URL");
    }
    const token = this.#session(req);
    const code = url.searchParams.get("code");
    if (req.method === "GET" && url.pathname === "/" && code !== null) {
      if (this.#redeem(code)) return { kind: "enter", setCookie: this.#newSession() };
      // A used link opened again in the browser that used it (back, reload): just go in.
      if (token !== undefined) return { kind: "enter", setCookie: undefined };
      return refuse(403, "this link was used already or has expired: open the newest link a2a ui printed");
    }
    if (token === undefined) {
      return req.headers.get("cookie")?.includes(`${this.cookie}=`)
        ? refuse(403, "unknown session (was a2a ui restarted?): open the newest link a2a ui printed")
        : refuse(401, "no session: open the link a2a ui printed");
    }
    if (req.method === "POST") {
      const given = req.headers.get("x-a2a-token");
      if (given === null || given === "") return refuse(401, "an action needs the page's X-A2A-Token header");
      if (!tokenMatches(given, token)) return refuse(403, "wrong X-A2A-Token: reload the page");
    }
    return { kind: "pass", url, token };
  }

  // Good once: the code is gone whatever the outcome.
  #redeem(code: string): boolean {
    const k = key(code);
    const c = this.#codes.get(k);
    if (!c) return false;
    this.#codes.delete(k);
    if (this.now() > c.expires) return false;
    c.onUsed?.();
    return true;
  }

  #newSession(): string {
    const id = randomHex(32);
    this.#sessions.set(key(id), randomHex(24));
    return `${this.cookie}=${id}; Path=/; HttpOnly; SameSite=Strict`;
  }

  // The action token of the request's session, if its cookie names one.
  #session(req: Request): string | undefined {
    for (const part of (req.headers.get("cookie") ?? "").split(";")) {
      const i = part.indexOf("=");
      if (i > 0 && part.slice(0, i).trim() === this.cookie) {
        const t = this.#sessions.get(key(part.slice(i + 1).trim()));
        if (t !== undefined) return t;
      }
    }
    return undefined;
  }
}
