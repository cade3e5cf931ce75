// A TCP relay in front of a PostgreSQL server that counts the round trips its clients make:
// every simple query ('Q') and every Sync ('S') a client sends ends one exchange the client
// waits for (a2a's client sends each statement as Parse/Bind/Describe/Execute/Sync, and BEGIN
// and COMMIT as simple queries). What a change costs is then a number a test can hold, not a
// time: tests/e2e/pg-round-trips.test.ts.
//
// Only the client's side is parsed: its first message (or an SSLRequest before it) has no type
// byte; every later one is a type byte and a length that counts itself. An SSLRequest is passed
// on as it is: the server of tests/harness/pg.ts answers "N", and the client goes on in clear.

import type { Socket, TCPSocketListener } from "bun";

export interface WireCounter {
  url(database: string, schema: string): string; // a URL that connects through the relay
  roundTrips(): number; // exchanges since the relay started, over every connection
  connections(): number; // connections made through the relay so far
  simpleQueries(): string[]; // the text of every simple query ('Q') so far, in order (BEGIN, LISTEN ...)
  // Every exchange so far, in order, over every connection: a simple query's text, or the SQL of
  // the statements an extended exchange ran (joined by "; "; one that only parsed and described
  // them: "describe SQL"), so a test can say which were which.
  exchanges(): string[];
  notifications(): number; // NotificationResponses ('A') the server sent to the clients so far
  listensDone(): number; // LISTENs the server has answered (CommandComplete "LISTEN") so far
  close(): void;
}

const SSL_REQUEST = 80877103;
const GSS_REQUEST = 80877104;

export async function wireCounter(serverUrl: string): Promise<WireCounter> {
  const target = new URL(serverUrl);
  let trips = 0;
  let connections = 0;
  let notices = 0;
  let listens = 0;
  const simple: string[] = [];
  const exchanges: string[] = [];
  type Side = {
    peer?: Socket<Side>;
    pending: Uint8Array[];
    buf: Buffer;
    started: boolean;
    client: boolean;
    answer?: Side;
    statements?: Map<string, string>; // the client's prepared statements, by name
    bound?: string[]; // the SQL bound since its last Sync
    parsed?: string[]; // the SQL parsed since then (a Parse and Describe alone: "describe SQL")
  };
  // The NUL-terminated strings at the start of a message's body.
  const cstrings = (body: Buffer, n: number) => {
    const out: string[] = [];
    let at = 0;
    for (let i = 0; i < n; i++) {
      const end = body.indexOf(0, at);
      out.push(body.subarray(at, end < 0 ? body.length : end).toString("utf8"));
      at = end + 1;
    }
    return out;
  };
  // Counts the client's messages that end an exchange; `started` once its startup message passed.
  const parse = (s: Side, data: Uint8Array) => {
    s.buf = Buffer.concat([s.buf, data]);
    for (;;) {
      if (!s.started) {
        if (s.buf.length < 8) return;
        const len = s.buf.readInt32BE(0);
        if (s.buf.length < len) return;
        const code = s.buf.readInt32BE(4);
        s.started = code !== SSL_REQUEST && code !== GSS_REQUEST;
        if (!s.started && s.answer) s.answer.started = false; // the server answers it with one bare byte
        s.buf = s.buf.subarray(len);
        continue;
      }
      if (s.buf.length < 5) return;
      const len = s.buf.readInt32BE(1);
      if (s.buf.length < 1 + len) return;
      const type = String.fromCharCode(s.buf[0]);
      const body = s.buf.subarray(5, 1 + len);
      if (type === "Q" || type === "S") trips++;
      if (type === "Q") {
        simple.push(body.toString("utf8").replace(/\0$/, ""));
        exchanges.push(simple[simple.length - 1]);
      }
      if (type === "P") {
        const [name, text] = cstrings(body, 2);
        (s.statements ??= new Map()).set(name, text);
        (s.parsed ??= []).push(text);
      }
      if (type === "B") (s.bound ??= []).push(s.statements?.get(cstrings(body, 2)[1]) ?? "?");
      if (type === "S") {
        const parsed = (s.parsed ?? []).splice(0);
        exchanges.push((s.bound ?? []).splice(0).join("; ") || parsed.map((q) => `describe ${q}`).join("; ") || "sync");
      }
      s.buf = s.buf.subarray(1 + len);
    }
  };
  // The server's side: every message is a type byte and a length that counts itself, but the
  // one-byte answer to an SSLRequest; counts the notifications it delivers.
  const readServer = (s: Side, data: Uint8Array) => {
    s.buf = Buffer.concat([s.buf, data]);
    for (;;) {
      if (!s.started) {
        if (s.buf.length < 1) return;
        s.started = true;
        s.buf = s.buf.subarray(1);
        continue;
      }
      if (s.buf.length < 5) return;
      const len = s.buf.readInt32BE(1);
      if (s.buf.length < 1 + len) return;
      if (s.buf[0] === 0x41) notices++; // 'A'
      if (s.buf[0] === 0x43 && s.buf.subarray(5, 1 + len).toString("utf8").replace(/\0$/, "") === "LISTEN") listens++; // 'C'
      s.buf = s.buf.subarray(1 + len);
    }
  };
  const send = (s: Side, data: Uint8Array) => {
    if (s.peer) s.peer.write(data);
    else s.pending.push(data);
  };
  const listener: TCPSocketListener<Side> = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        connections++;
        const answer: Side = { pending: [], buf: Buffer.alloc(0), started: true, client: false };
        client.data = { pending: [], buf: Buffer.alloc(0), started: false, client: true, answer };
        void Bun.connect<Side>({
          hostname: target.hostname,
          port: Number(target.port || 5432),
          socket: {
            open(server) {
              server.data = client.data.answer!;
              server.data.peer = client;
              client.data.peer = server;
              for (const d of client.data.pending.splice(0)) server.write(d);
            },
            data(server, d) {
              readServer(server.data, d);
              client.write(d);
            },
            close() {
              client.end();
            },
            error() {
              client.end();
            },
          },
        }).catch(() => client.end());
      },
      data(client, d) {
        parse(client.data, d);
        send(client.data, d);
      },
      close(client) {
        client.data.peer?.end();
      },
      error(client) {
        client.data.peer?.end();
      },
    },
  });
  return {
    url(database, schema) {
      const u = new URL(serverUrl);
      u.hostname = "127.0.0.1";
      u.port = String(listener.port);
      u.pathname = `/${database}`;
      u.search = `?schema=${schema}&sslmode=disable`;
      return u.toString();
    },
    roundTrips: () => trips,
    connections: () => connections,
    simpleQueries: () => [...simple],
    exchanges: () => [...exchanges],
    notifications: () => notices,
    listensDone: () => listens,
    close: () => listener.stop(true),
  };
}
