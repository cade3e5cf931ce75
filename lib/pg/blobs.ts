// The PostgreSQL engine's blob storage (lib/blobs/storage.ts): a blob's bytes are rows of
// `blob_parts` (one per CHUNK, numbered from 0, under the id of the upload that wrote them), and
// the blob is a row of `blobs` naming that upload. lib/pg/schema.ts makes them.
//
// Invariants:
// - parts are written a few at a time (GROUP), each group one transaction begun only once its
//   parts are in hand, so a put holds no transaction open while bytes stream in (an hour-long
//   upload is no hour-long transaction); one group is written while the next fills (reading and
//   hashing the source overlap the server's write), so memory holds two groups at most;
// - a group's commit does not wait for its WAL flush (synchronous_commit off); the commit of the
//   `blobs` row does, and the WAL is one sequence, so that flush makes every part before it
//   durable too: a reported put is durable whole (PROTOCOL.md §19), one flush a put;
// - the `blobs` row is the instant the blob exists: parts whose upload has no row are staging,
//   which a reader never reaches and `sweep` removes once the upload has been quiet for its
//   grace period (its newest part's time, so a slow upload is never swept from under itself);
// - the commit names an upload only once it holds exactly the parts written here (their count,
//   bytes and writer): another role's hand on an upload in flight fails the put, never a get;
// - two uploads of one digest keep one copy: the second commit finds the row, moves its time
//   on (gc's grace counts from the newest put) and drops its own parts, unless the stored bytes
//   are not the digest's (blob_touch 'replaced': its own parts are the blob now);
// - a blob a record names is never removed, whoever asks, and what a role may read of blobs
//   follows what it may read of records: lib/pg/blob-trust.ts;
// - `remove` drops the row and its parts in one transaction.

import type { SQL } from "bun";
import { CHUNK, type BlobInfo, type BlobStorage, type Upload } from "../blobs/storage";
import { randomHex } from "../core/digest";
import { A2AError } from "../core/errors";
import { BLOB_TRUST, HASHED_MAX } from "./blob-trust";
import { transaction } from "./connect";
import type { PgClient } from "./engine";

export const BLOB_TABLES = [
  `create table $S.blob_parts (
     upload text not null,
     n integer not null,
     data bytea not null,
     made_at timestamptz not null default now(),
     writer text not null default current_user, -- row-level security's: an upload is its writer's until it is a blob
     primary key (upload, n))`,
  // Kept out of line and uncompressed: blobs are mostly compressed already (archives, images),
  // and pglz's failed try at each 1 MiB costs more than the write.
  `alter table $S.blob_parts alter column data set storage external`,
  `create table $S.blobs (
     hex text primary key,
     upload text not null,
     size bigint not null,
     stored_at timestamptz not null default now(),
     writer text not null default current_user,
     changed_at timestamptz not null default now())`,
  `create unique index blobs_upload on $S.blobs (upload)`,
  // Its first writer's for good: a later put moves only its time (blob_touch).
  `create trigger stamp before insert on $S.blobs for each row execute function $S.stamp()`,
  ...BLOB_TRUST,
];

type Row = { hex: string; size: string | number; at: number };
const infoOf = (r: Row): BlobInfo => ({ hex: r.hex, size: Number(r.size), at: Number(r.at) });

// Parts written per transaction: four bound the memory a put holds to about 5 MiB, and no
// transaction waits on the source (its parts are all in hand when it begins). Their commits
// do not wait for the WAL flush (header), which a synchronous commit every 4 MiB paid (54 MiB/s
// here with one part a commit, against 200 in one transaction).
const GROUP = 4;

function upload(pg: PgClient): Upload {
  const id = randomHex(12);
  let n = 0;
  let held: Uint8Array[] = []; // what waits for a whole part
  let heldBytes = 0;
  let ready: Buffer[] = []; // whole parts not written yet
  let inflight: Promise<void> = Promise.resolve(); // the group being written
  const write = async () => {
    if (!ready.length) return;
    const parts = ready.map((data) => ({ n: n++, data }));
    ready = [];
    await pg.run("writing a blob into the store", (sql) =>
      transaction(sql, async (tx) => {
        await tx`set local synchronous_commit = off`; // the commit naming them waits for these (header)
        for (const p of parts) await tx`insert into blob_parts (upload, n, data) values (${id}, ${p.n}, ${p.data})`;
      }),
    );
  };
  const flush = async () => {
    if (heldBytes) ready.push(Buffer.concat(held, heldBytes));
    held = [];
    heldBytes = 0;
    if (ready.length >= GROUP) await send();
  };
  // Waits for the group in flight (its failure surfaces here), then starts the next one.
  const send = async () => {
    await inflight;
    const w = write();
    w.catch(() => {}); // seen by the next send or by commit, not as an unhandled rejection
    inflight = w;
  };
  const drop = (sql: SQL) => sql`delete from blob_parts where upload = ${id}`;
  return {
    async write(bytes) {
      // The room hands over pieces of at most CHUNK; held, they make parts of exactly CHUNK.
      const room = CHUNK - heldBytes;
      held.push(bytes.subarray(0, room));
      heldBytes += Math.min(room, bytes.length);
      if (heldBytes === CHUNK) await flush();
      if (bytes.length > room) {
        held.push(bytes.subarray(room));
        heldBytes += bytes.length - room;
      }
    },
    async commit(hex, size) {
      await flush();
      await send();
      await inflight;
      return pg.run("storing a blob", (sql) =>
        transaction(sql, async (tx) => {
          // The upload holds its parts whole, all its own (lib/pg/blob-trust.ts keep_parts keeps
          // others' hands off; this is the proof): else name nothing.
          const [held] = await tx`select count(*)::int as k, coalesce(max(n), -1)::int as top, coalesce(sum(octet_length(data)), 0)::text as bytes,
              coalesce(bool_and(writer = current_user), true) as own from blob_parts where upload = ${id}`;
          if (held.k !== n || held.top !== n - 1 || held.bytes !== String(size) || !held.own) {
            throw new A2AError("EIO", `PostgreSQL at ${pg.target.where} (schema ${pg.target.schema}, table blob_parts) lost or changed parts of this upload of sha256:${hex} while it was written (${held.k} of ${n} parts, ${held.bytes} of ${size} bytes): another role's hand; put again`, {
              data: { digest: `sha256:${hex}` },
            });
          }
          for (;;) {
            if ((await tx`insert into blobs (hex, upload, size) values (${hex}, ${id}, ${size}) on conflict (hex) do nothing returning 1`).length) return { fresh: true };
            // Stored already (perhaps by a role row-level security hides it from): lib/pg/blob-trust.ts.
            const [{ got }] = await tx`select blob_touch(${hex}, ${id}, ${size}) as got`.catch((err: unknown) => {
              if ((err as { errno?: string })?.errno !== "A2AB1") throw err;
              throw new A2AError("EIO", `PostgreSQL at ${pg.target.where} (schema ${pg.target.schema}, table blobs) holds other bytes under sha256:${hex} than the ones put now (damaged or planted), and ${size} bytes are more than the server checks (${HASHED_MAX}): have the database's administrator delete that row, then put again`, {
                data: { digest: `sha256:${hex}` },
              });
            });
            if (got === "replaced") return { fresh: true }; // the stored bytes were not the digest's: yours stand
            if (got === "kept") break;
          }
          await drop(tx);
          return { fresh: false };
        }),
      );
    },
    async abort() {
      await inflight.catch(() => {}); // no part of this upload is written after its parts are dropped
      held = [];
      heldBytes = 0;
      ready = [];
      await pg.run("dropping an unfinished blob", drop);
    },
  };
}

async function* parts(pg: PgClient, hex: string, id: string): AsyncIterable<Uint8Array> {
  for (let n = 0; ; n++) {
    const rows: { data: Uint8Array }[] = await pg.read(`reading blob ${hex}`, (sql) => sql`select data from blob_parts where upload = ${id} and n = ${n}`);
    if (!rows.length) return;
    yield rows[0].data;
  }
}

export function pgBlobs(pg: PgClient): BlobStorage {
  const stat = async (hex: string) => {
    const rows: Row[] = await pg.read(`reading blob ${hex}`, (sql) => sql`select hex, size, extract(epoch from stored_at) * 1000 as at from blobs where hex = ${hex}`);
    return rows.length ? infoOf(rows[0]) : undefined;
  };
  return {
    begin: async () => upload(pg),
    stat,
    async read(hex) {
      const rows: { upload: string }[] = await pg.read(`reading blob ${hex}`, (sql) => sql`select upload from blobs where hex = ${hex}`);
      return rows.length ? parts(pg, hex, rows[0].upload) : undefined;
    },
    path: () => undefined,
    // A record is about to name it: gc's grace counts from here, as from a put (stamp moves changed_at).
    touch: async (hex) => void (await pg.run(`storing blob ${hex}`, (sql) => sql`update blobs set stored_at = now() where hex = ${hex}`)),
    list: async () => (await pg.read("listing blobs", (sql) => sql`select hex, size, extract(epoch from stored_at) * 1000 as at from blobs order by hex`)).map(infoOf),
    remove: (hex, before) =>
      pg.run(`removing blob ${hex}`, (sql) =>
        transaction(sql, async (tx) => {
          const rows: { upload: string }[] = await tx`delete from blobs where hex = ${hex} and stored_at < to_timestamp(${before / 1000}) returning upload`;
          if (!rows.length) return false;
          await tx`delete from blob_parts where upload = ${rows[0].upload}`;
          return true;
        }),
      ),
    sweep: (before) =>
      pg.run("removing unfinished blobs", async (sql) => {
        const rows = await sql`delete from blob_parts where upload in (
            select upload from blob_parts group by upload having max(made_at) < to_timestamp(${before / 1000})
            except select upload from blobs) returning upload`;
        return new Set(rows.map((r: { upload: string }) => r.upload)).size;
      }),
  };
}
