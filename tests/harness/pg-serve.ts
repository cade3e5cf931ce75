// A throwaway PostgreSQL for a shell script (.ci/run runs the e2e suite on it): starts a server
// (./pg.ts: our own cluster as root, or the one A2A_TEST_PG names), makes a fresh database the
// suite may create schemas in, prints its URL (one line, no password) on stdout, and keeps them
// until its stdin closes; then it drops the database and stops the server. Started as a coproc,
// the script's closing of the pipe ends it; if the script dies, the kernel closes the pipe and
// ./pg.ts's lifeline stops the cluster all the same.
// Exit 3, with the reason on stderr, when no server can be had here (not root, no binaries).
import { freshDatabase, pgServer, pgSkipReason } from "./pg";

const why = pgSkipReason();
if (why !== undefined) {
  process.stderr.write(`${why}\n`);
  process.exit(3);
}
const server = (await pgServer())!;
const db = await freshDatabase(server);
const url = new URL(db.url);
if (url.password) process.stderr.write("pg-serve: A2A_TEST_PG holds a password: give it to the tests in PGPASSWORD\n");
url.password = "";
process.stdout.write(`${url}\n`);

for await (const _ of Bun.stdin.stream()); // until the script closes our stdin
await db.drop();
await server.stop();
