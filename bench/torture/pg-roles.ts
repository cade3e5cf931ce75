// A hostile role on a PostgreSQL store, with and without row-level security (issue 32): while
// alice sends bob messages with attachments (and keyed retries), mallory, a member with the
// documented grants, attacks them by hand: deletes the blobs and parts of mail already sent,
// rewrites and appends to parts, points blob rows elsewhere, swaps a message's attachments,
// deletes send keys, deletes and rewrites the parts of uploads in flight and every blob not yet
// named, plants a row under the digest of the file alice is about to attach, and, under RLS,
// reads every part she can. Afterwards she runs gc two hours ahead (faketime), and bob fetches
// every attachment. Judged: attacks that landed (a statement that changed what it attacked), sends
// that failed, sends reported sent whose attachment bob cannot get byte for byte (lost), keyed
// retries delivered twice, and bytes of alice's files mallory read (leaked, under RLS). A lured
// send (the planted row) must go through with alice's bytes, and is counted.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRole, freshDatabase, pgServer, pgSkipReason, psqlAs, urlAs, type Database, type PgServer } from "../../tests/harness/pg";
import { a2a, scenarioDir, skip, Verdict, type Ctx, type Outcome } from "./common";

const tag = Math.random().toString(36).slice(2, 8);
const ROLE = { alice: `t_alice_${tag}`, bob: `t_bob_${tag}`, mallory: `t_mallory_${tag}` };
const PW = Object.fromEntries(Object.values(ROLE).map((r) => [r, `pw-${r}`])) as Record<string, string>;
const sha = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

interface Tally {
  attempts: number;
  landed: number;
  sent: number;
  lured: number;
  lost: number;
  twice: number;
  leaked: number;
}

export async function pgRoles(ctx: Ctx): Promise<Outcome> {
  const why = pgSkipReason() ?? (Bun.which("faketime") ? undefined : "faketime is not installed (apt-get install -y faketime): gc runs two hours ahead");
  if (why) return skip(why);
  const server = (await pgServer())!;
  const v = new Verdict();
  const dir = scenarioDir(ctx, "pg-roles");
  const figures: [string, string][] = [];
  for (const r of Object.values(ROLE)) await createRole(server, r, PW[r]);
  try {
    for (const rls of [false, true]) {
      const t = await round(ctx, server, dir, rls, v);
      figures.push([rls ? "with --rls" : "without RLS", `${t.attempts} attacks, ${t.landed} landed; ${t.sent} sent (${t.lured} over a planted row), ${t.lost} lost, ${t.twice} keyed retries delivered twice, ${t.leaked} bytes leaked`]);
    }
  } finally {
    for (const r of Object.values(ROLE)) await server.admin(`drop role if exists ${r}`).catch(() => {});
  }
  return v.outcome(figures.map(([k, s]) => `${k}: ${s}`).join("; "), figures);
}

async function round(ctx: Ctx, server: PgServer, dir: string, rls: boolean, v: Verdict): Promise<Tally> {
  const db: Database = await freshDatabase(server);
  const t: Tally = { attempts: 0, landed: 0, sent: 0, lured: 0, lost: 0, twice: 0, leaked: 0 };
  try {
    const script = await a2a(ctx, ["init", "--print-sql", ...(rls ? ["--rls"] : [])], { dir: server.url });
    const grants = script.stdout.split("\n").filter((l) => l.startsWith("-- grant ")).map((l) => l.slice(3));
    await server.admin(script.stdout + Object.values(ROLE).flatMap((r) => grants.map((g) => g.replaceAll("ROLE", r))).join("\n"), db.name);
    const as = (who: string, args: string[]) => a2a(ctx, args, { dir: urlAs(db.url, who), env: { PGPASSWORD: PW[who] } });
    const psql = (who: string, sql: string) => psqlAs(urlAs(db.url, who, PW[who]), sql);
    await as(ROLE.bob, ["recv", "--as", "bob"]);

    const n = ctx.short ? 12 : 60;
    const files = Array.from({ length: n }, (_, i) => {
      const bytes = crypto.getRandomValues(new Uint8Array(1024 + ((ctx.seed + i * 7919) % (ctx.short ? 200_000 : 2_500_000))));
      const path = join(dir, `${rls ? "rls" : "plain"}-${i}.bin`);
      writeFileSync(path, bytes);
      return { path, bytes, hex: sha(bytes) };
    });
    const named: string[] = []; // digests of mail sent so far, which mallory learns
    let done = false;

    // One attack; landed when it changed rows it must not have (a count over 0), never by an error.
    const attack = async (sql: string) => {
      t.attempts++;
      try {
        const out = (await psql(ROLE.mallory, sql)).trim();
        const changed = out.split("\n").map(Number).filter((x) => x > 0).length;
        if (changed) {
          t.landed++;
          v.fail("landed", `${rls ? "rls" : "plain"}: ${sql} -> ${out}`);
        }
      } catch {
        // refused: what should happen
      }
    };
    const count = (stmt: string) => `with x as (${stmt} returning 1) select count(*) from x`;
    const mallory = async () => {
      for (let i = 0; !done; i++) {
        const some = named.length ? `'${named.join("','")}'` : "''";
        const attacks = [
          count(`delete from a2a.blobs where hex in (${some})`),
          count(`delete from a2a.blob_parts where upload in (select upload from a2a.blobs where hex in (${some}))`),
          count(`update a2a.blob_parts set data = convert_to('evil', 'UTF8') where upload in (select upload from a2a.blobs)`),
          count(`insert into a2a.blob_parts (upload, n, data) select upload, 100000, convert_to('more', 'UTF8') from a2a.blobs`),
          count(`update a2a.blobs set size = size + 1`),
          count(`update a2a.messages set attachments = '[]'::jsonb where agent = 'bob'`),
          count(`delete from a2a.mail_keys`),
          // Uploads in flight and blobs not named yet (no RETURNING: under RLS it would read
          // only what she sees; what lands shows as a failed send or a lost attachment).
          `delete from a2a.blob_parts where writer <> current_user`,
          count(`update a2a.blob_parts set data = convert_to('evil', 'UTF8') where writer <> current_user`),
          count(`insert into a2a.blob_parts (upload, n, data) select distinct upload, 1000, convert_to('more', 'UTF8') from a2a.blob_parts where writer <> current_user`),
          `delete from a2a.blobs`,
        ];
        await attack(attacks[i % attacks.length]);
        // Under RLS, a read of every part she can see (her planted ones aside) leaks if it sees any.
        if (rls) t.leaked += Number((await psql(ROLE.mallory, `select coalesce(sum(length(data)), 0) from a2a.blob_parts where upload not like 'planted%'`)).trim()) || 0;
      }
    };
    const alice = async () => {
      for (let i = 0; i < n; i++) {
        const f = files[i];
        const lure = i % 5 === 4;
        if (lure) await psql(ROLE.mallory, `insert into a2a.blob_parts (upload, n, data) values ('planted${i}', 0, convert_to('evil', 'UTF8'));
          insert into a2a.blobs (hex, upload, size) values ('${f.hex}', 'planted${i}', ${f.bytes.length})`);
        const r = await as(ROLE.alice, ["send", "bob", `file ${i}`, "--attach", f.path, "--key", `k${i}`, "--as", "alice"]);
        if (!v.check(r.code === 0, lure ? "lure" : "send", () => `send ${i}: exit ${r.code}: ${r.stderr.trim()}`)) continue;
        if (lure) t.lured++;
        t.sent++;
        named.push(f.hex);
        const again = await as(ROLE.alice, ["send", "bob", `file ${i}`, "--attach", f.path, "--key", `k${i}`, "--as", "alice"]);
        v.check(again.code === 0, "retry", () => `retry ${i}: exit ${again.code}: ${again.stderr.trim()}`);
      }
      done = true;
    };
    await Promise.all([alice(), mallory()]);
    // gc by the hostile member, every blob looking two hours old: nothing named may go.
    const swept = await a2a(ctx, ["gc", "--blob-grace", "10m"], { dir: urlAs(db.url, ROLE.mallory), env: { PGPASSWORD: PW[ROLE.mallory] }, prefix: ["faketime", "-f", "+2h"] });
    v.check(swept.code === 0, "gc", () => `gc: exit ${swept.code}: ${swept.stderr.trim()}`);

    const got = (await as(ROLE.bob, ["recv", "--as", "bob", "--all", "--json"])).stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const seen = new Map<string, number>();
    for (const m of got) seen.set(m.body, (seen.get(m.body) ?? 0) + 1);
    for (const [body, k] of seen) if (k > 1) t.twice++, v.fail("twice", `${body} delivered ${k} times`);
    for (const m of got) {
      const i = Number(String(m.body).slice("file ".length));
      const a = m.attachments?.[0];
      const to = join(dir, `got-${rls ? "rls" : "plain"}-${i}`);
      const out = a && (await a2a(ctx, ["get", a.digest, "-o", to], { dir: urlAs(db.url, ROLE.bob), env: { PGPASSWORD: PW[ROLE.bob] } }));
      if (!out || out.code !== 0 || a.digest !== `sha256:${files[i].hex}` || sha(readFileSync(to)) !== files[i].hex) {
        t.lost++;
        v.fail("lost", `file ${i}: ${out ? `get exit ${out.code} ${out.stderr.trim()}` : "no attachment listed"}`);
      }
    }
    v.check(got.length === t.sent, "missing", () => `${t.sent} reported sent, bob has ${got.length}`);
    if (t.leaked) v.fail("leaked", `${rls ? "rls" : "plain"}: mallory read ${t.leaked} bytes of alice's parts`);
  } finally {
    await db.drop();
  }
  return t;
}
