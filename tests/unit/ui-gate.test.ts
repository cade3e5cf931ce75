// The dashboard's gate (cli/ui/gate.ts) on its own, with a clock the test moves: one-time
// codes (once, and within their lifetime), sessions, the action token, and a Host that makes
// no URL. The server around it is driven through the binary in tests/e2e/ui*.test.ts.
import { describe, expect, test } from "bun:test";
import { Gate, type Verdict } from "../../cli/ui/gate";

const PORT = 4321;
const HOST = `127.0.0.1:${PORT}`;
const req = (path: string, headers: Record<string, string> = {}, method = "GET") =>
  new Request(`http://${headers.Host ?? HOST}${path}`, { method, headers: { Host: HOST, ...headers } });
const cookieOf = (v: Verdict): string => {
  if (v.kind !== "enter" || !v.setCookie) throw new Error(`no session made: ${JSON.stringify(v)}`);
  return v.setCookie.split(";")[0];
};
const status = (v: Verdict) => (v.kind === "refuse" ? v.status : v.kind);

describe("the dashboard's gate", () => {
  test("a code opens one session, once; its cookie is HttpOnly and SameSite=Strict, named after the port", () => {
    const g = new Gate("127.0.0.1", PORT);
    let used = 0;
    const code = g.mint({ onUsed: () => used++ });
    const first = g.check(req(`/?code=${code}`));
    expect(first.kind === "enter" && first.setCookie).toMatch(new RegExp(`^a2a_${PORT}=[0-9a-f]{64}; Path=/; HttpOnly; SameSite=Strict$`));
    expect(used).toBe(1);
    expect(status(g.check(req(`/?code=${code}`)))).toBe(403);
    expect(used).toBe(1);
    const cookie = cookieOf(first);
    // The browser that used it may open it again (back, reload): it is sent in, no new session.
    expect(g.check(req(`/?code=${code}`, { Cookie: cookie }))).toEqual({ kind: "enter", setCookie: undefined });
    const pass = g.check(req("/api/config", { Cookie: `other=1; ${cookie}` }));
    expect(pass.kind).toBe("pass");
    // Only GET / redeems: a code on another path or method is no way in and is not spent.
    const other = g.mint();
    expect(status(g.check(req(`/api/config?code=${other}`)))).toBe(401);
    expect(status(g.check(req(`/?code=${other}`, {}, "HEAD")))).toBe(401);
    expect(status(g.check(req(`/?code=${other}`)))).toBe("enter");
  });

  test("a code with a lifetime dies unused after it, and is spent by the failed try", () => {
    let now = 1000;
    const g = new Gate("127.0.0.1", PORT, () => now);
    const late = g.mint({ ttlMs: 60_000 });
    const inTime = g.mint({ ttlMs: 60_000 });
    now += 60_000;
    expect(status(g.check(req(`/?code=${inTime}`)))).toBe("enter");
    now += 1;
    expect(status(g.check(req(`/?code=${late}`)))).toBe(403);
    now = 0;
    expect(status(g.check(req(`/?code=${late}`)))).toBe(403);
    // No lifetime: good until used.
    const printed = g.mint();
    now += 1e12;
    expect(status(g.check(req(`/?code=${printed}`)))).toBe("enter");
  });

  test("no session: 401; a made-up or another port's cookie: 403; a POST needs the session's token too", () => {
    const g = new Gate("127.0.0.1", PORT);
    const other = new Gate("127.0.0.1", PORT + 1);
    const cookie = cookieOf(g.check(req(`/?code=${g.mint()}`)));
    const theirs = cookieOf(other.check(req(`/?code=${other.mint()}`, { Host: `127.0.0.1:${PORT + 1}` })));
    expect(status(g.check(req("/events")))).toBe(401);
    expect(status(g.check(req("/events", { Cookie: `a2a_${PORT}=${"0".repeat(64)}` })))).toBe(403);
    expect(status(g.check(req("/events", { Cookie: theirs })))).toBe(401);
    expect(status(g.check(req("/events", { Cookie: `a2a_${PORT}=${theirs.split("=")[1]}` })))).toBe(403);
    const pass = g.check(req("/", { Cookie: cookie }));
    if (pass.kind !== "pass") throw new Error("the session was refused");
    const token = pass.token;
    expect(token).toMatch(/^[0-9a-f]{48}$/);
    expect(cookie).not.toContain(token);
    expect(status(g.check(req("/api/clear", { Cookie: cookie }, "POST")))).toBe(401);
    expect(status(g.check(req("/api/clear", { Cookie: cookie, "X-A2A-Token": "f".repeat(48) }, "POST")))).toBe(403);
    expect(status(g.check(req("/api/clear", { "X-A2A-Token": token }, "POST")))).toBe(401);
    expect(status(g.check(req("/api/clear", { Cookie: cookie, "X-A2A-Token": token }, "POST")))).toBe("pass");
    // Each session has its own token.
    const second = g.check(req("/", { Cookie: cookieOf(g.check(req(`/?code=${g.mint()}`))) }));
    expect(second.kind === "pass" && second.token).not.toBe(token);
  });

  test("the Host is judged as the header, before any URL is made of it", () => {
    const g = new Gate("127.0.0.1", PORT);
    const cookie = cookieOf(g.check(req(`/?code=${g.mint()}`)));
    // A request whose url no URL parser takes, as Bun builds it from such a Host.
    const odd = (host: string) => ({ method: "GET", url: `http://${host}/`, headers: new Headers({ Host: host, Cookie: cookie }) }) as unknown as Request;
    for (const h of [`127.0.0.1:${PORT}.evil.com`, `[::1]:${PORT}.evil.com`, "[::1", `127.0.0.1:${PORT}:${PORT}`]) {
      expect({ h, v: g.check(odd(h)) }).toEqual({ h, v: { kind: "refuse", status: 403, why: "foreign Host header: open the URL a2a ui printed" } });
    }
    const wild = new Gate("0.0.0.0", PORT);
    expect(wild.check(odd(`[:::]:${PORT}`))).toEqual({ kind: "refuse", status: 400, why: "malformed request URL" });
  });
});
