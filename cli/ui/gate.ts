// Who may talk to the dashboard's server. A local web server is an attack surface: another
// user on the machine can connect to a loopback port, and any web page the user opens can
// make their browser send requests to it (and, through DNS rebinding, read the answers).
//
// Invariants, checked for every request before anything is read from the store:
// - the Host header names this server (a loopback name or the --host address, with our port;
//   any IP literal when bound to a wildcard): a rebinding attacker's hostname is refused. It is
//   checked as the raw header, and the request's URL is parsed only after, here: a Host that
//   makes no URL is a 4xx like any other refusal, never an exception;
// - the access token is present and right, compared in constant time (both sides hashed to
//   the same length first): GET carries it as ?token=, a POST only as the X-A2A-Token header;
// - a request with an Origin (or Sec-Fetch-Site) from another site is refused; no response
//   ever carries Access-Control-* headers, and preflights are refused;
// - every response carries a strict Content-Security-Policy and the no-sniff, no-frame,
//   no-referrer headers (the token is in the page's URL: it must not leak in a Referer).

import { createHash, timingSafeEqual } from "node:crypto";

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
  status: number;
  why: string;
}
export interface Pass {
  url: URL;
}

export class Gate {
  readonly names: Set<string>; // acceptable Host header values, lower case, with the port
  constructor(
    readonly bound: string,
    readonly port: number,
    readonly token: string,
  ) {
    const hosts = new Set([urlHost(bound)]);
    if (isLoopback(bound) || isWildcard(bound)) for (const h of ["127.0.0.1", "localhost", "[::1]"]) hosts.add(h);
    this.names = new Set([...hosts].map((h) => `${h}:${port}`.toLowerCase()));
  }

  hostAllowed(hostHeader: string | null): boolean {
    if (!hostHeader) return false;
    const h = hostHeader.toLowerCase();
    if (this.names.has(h)) return true;
    if (!isWildcard(this.bound)) return false;
    const m = /^(.*):(\d+)$/.exec(h);
    return !!m && Number(m[2]) === this.port && isIpLiteral(m[1]);
  }

  // The request's URL when it may proceed.
  check(req: Request): Refusal | Pass {
    const host = req.headers.get("host");
    if (!this.hostAllowed(host)) return { status: 403, why: "foreign Host header: open the URL a2a ui printed" };
    const origin = req.headers.get("origin");
    if (origin !== null && origin !== `http://${host}`) return { status: 403, why: "cross-origin request refused" };
    const site = req.headers.get("sec-fetch-site");
    if (site !== null && site !== "same-origin" && site !== "none") return { status: 403, why: "cross-site request refused" };
    if (req.method === "OPTIONS") return { status: 405, why: "no cross-origin access" };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return { status: 400, why: "malformed request URL" };
    }
    const given = req.method === "POST" ? req.headers.get("x-a2a-token") : url.searchParams.get("token");
    if (given === null || given === "") return { status: 401, why: "missing access token: open the URL a2a ui printed" };
    if (!tokenMatches(given, this.token)) return { status: 403, why: "wrong access token: open the URL a2a ui printed" };
    return { url };
  }
}
