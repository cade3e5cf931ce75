// Several servers in one store URL, as libpq reads them: `postgres://USER@h1:5432,h2:5433/DB`,
// or, when the URL names no host, the PGHOST and PGPORT lists. The URL parser takes one host, so
// the list is cut out of the text here and each server gets a URL of its own (lib/pg/primary.ts
// picks the one that accepts writes).
//
// Invariants:
// - a URL with one host (or none, and no PGHOST list) is left exactly as it was given;
// - target_session_attrs is libpq's parameter, not a server setting: it is taken out of the URL
//   before the client sees it. a2a writes, so it only takes the modes that let it write; `any`
//   is read as read-write (a standby never serves a2a: its writes fail and it delivers no
//   notifications), which libpq's `any` does not promise but which is the only way a2a works.

import { A2AError } from "../core/errors";

export interface HostPort {
  host: string;
  port: number;
}

const WRITABLE = ["any", "read-write", "primary"];
const READ_ONLY = ["read-only", "standby", "prefer-standby"];

// `given` with its host list cut out: the URL with the first server in its place, and the list.
// `hosts` is undefined when the URL names one host or none (the caller reads it as before).
export function cutHosts(given: string, shown: string): { url: string; hosts?: HostPort[] } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*@)?([^/?#@]*)(.*)$/is.exec(given);
  if (!m || !m[3].includes(",")) return { url: given };
  const hosts = m[3].split(",").map((h) => hostPort(h, undefined, shown));
  return { url: `${m[1]}${m[2] ?? ""}${m[3].split(",")[0]}${m[4]}`, hosts };
}

// PGHOST (and PGPORT: one port for every host, or one per host) when the URL names no host and
// PGHOST lists several; a socket directory (a path) is left to what a2a did before.
export function envHosts(env: Record<string, string | undefined>): HostPort[] | undefined {
  const list = env.PGHOST?.split(",").map((h) => h.trim());
  if (!list || list.length < 2 || list.some((h) => h === "" || h.startsWith("/"))) return undefined;
  const ports = (env.PGPORT ?? "").split(",").map((p) => p.trim());
  if (ports.length > 1 && ports.length !== list.length) {
    throw new A2AError("EUSAGE", `PGPORT lists ${ports.length} ports for the ${list.length} hosts of PGHOST: give one port for all, or one per host in the same order`);
  }
  return list.map((h, i) => hostPort(h, ports[ports.length > 1 ? i : 0] || undefined, "PGHOST"));
}

function hostPort(text: string, port: string | undefined, from: string): HostPort {
  const m = /^(\[[0-9a-f:.]+\]|[^:[\]]*)(?::(\d*))?$/i.exec(text.trim());
  const p = m?.[2] || port || "5432";
  if (!m || m[1] === "" || !/^\d{1,5}$/.test(p) || Number(p) > 65535) {
    throw new A2AError("EUSAGE", `${JSON.stringify(text).slice(0, 60)} in the host list of ${from} is not HOST or HOST:PORT: write the servers as h1:5432,h2:5432`);
  }
  return { host: m[1], port: Number(p) };
}

// The URL's target_session_attrs, checked, and the URL without it.
export function sessionAttrs(u: URL, shown: string): void {
  const v = u.searchParams.get("target_session_attrs");
  u.searchParams.delete("target_session_attrs");
  if (v === null || WRITABLE.includes(v)) return;
  const what = READ_ONLY.includes(v) ? `asks for a server that a2a cannot write to` : "is not one of libpq's modes";
  throw new A2AError("EUSAGE", `target_session_attrs=${JSON.stringify(v).slice(0, 40)} in ${shown} ${what}: a2a writes to the bus, so use target_session_attrs=read-write (or primary), or leave it out; a2a always connects to the server that accepts writes`, {
    data: { target_session_attrs: v },
  });
}
