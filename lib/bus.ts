// The Bus: the one interface every front end (cli/, cli/mcp/, cli/ui/, hooks, doctor, gc,
// setup) uses for everything it does with a store. docs/ENGINE.md is its design.
//
// Invariants:
// - the engine is chosen once, here, when the store is opened, from --dir / A2A_DIR: a path is
//   the file engine; a postgres:// URL names the PostgreSQL engine (issue 22), whose code is
//   loaded only then (a dynamic import: a file-store command never loads it);
// - every operation is asynchronous, whatever the engine does inside: a front end awaits, and
//   an engine whose client is asynchronous (a database) fits behind the same calls. The file
//   engine stays synchronous inside (one system call after another, no await between a check
//   and the rename it guards), so wrapping it costs one resolved promise per call;
// - each operation is the concept room's own function (lib/<concept>/), bound to the store:
//   the rules (fencing, versions, policy, framing facts, wording of errors) are written there
//   once, and an operation means the same on every engine;
// - `where` is the store's location as it may be shown anywhere (doctor, ui, errors, setup): a
//   path as it is; a URL without its password;
// - settings are read once, when the bus is opened (lib/core/config.ts).

import { DEFAULT_POLL_MS, redact, storeUrl, type Env, type Settings, type Store } from "./core/config";
import { A2AError, arg, text } from "./core/errors";
import type { EngineName } from "./engine/engine";
import { openStore } from "./engine/open";

// An operation: the function `name` of a room's module (or object), once loaded.
type Fn = (store: Store, ...args: any[]) => unknown;
type Op = readonly [load: () => Promise<unknown>, name: string];

// Each room's operations come from one module, loaded on the room's first use (a dynamic import:
// the build makes each room one chunk), so a command loads only the rooms it calls: `a2a
// publish` never loads mail (tests/e2e/startup.test.ts), and loads its room in one piece.
const SLOTS = () => import("./slots/room");
const MAIL = () => import("./mail/room");
const TOPICS = () => import("./topics/room");
const TASKS = () => import("./tasks/room");
const LEASES = () => import("./leases/lease");
const RESERVATIONS = () => import("./reservations/room");
const GUARD = () => import("./guard/check");
const PRESENCE = () => import("./presence/room");
const SESSIONS = () => import("./sessions/room");
const DASHBOARD = () => import("./dashboard/room");
const MAINTENANCE = () => import("./maintenance/room");
const MOVE = () => import("./move/room");
const BLOBS = () => import("./blobs/room");
const SEARCH = () => import("./search/room");
const CREW = () => import("./crew/room");
const BOARD = () => DASHBOARD().then((m) => m.TASK_BOARD);

// The operations of each concept, as its room defines them (the first argument, the store, is
// bound by openBus). Adding an operation a front end needs means adding it here.
const OPS = {
  slots: {
    start: [SLOTS, "startSlot"],
    publish: [SLOTS, "publishSlot"],
    append: [SLOTS, "appendChunk"],
    clear: [SLOTS, "clearSlot"],
    clearAll: [SLOTS, "clearAll"],
    list: [SLOTS, "listSlots"],
    get: [SLOTS, "getSlot"],
    read: [SLOTS, "readSlot"],
    similar: [SLOTS, "similarSlot"],
    chunks: [SLOTS, "readChunks"],
    wait: [SLOTS, "waitSlots"],
    tail: [SLOTS, "tailSlot"],
    watch: [SLOTS, "watchSlots"],
    onChange: [SLOTS, "onSlotChange"],
    onNamesChange: [SLOTS, "onSlotNamesChange"],
  },
  mail: {
    send: [MAIL, "sendMessage"],
    sendAsHuman: [MAIL, "sendAsHuman"],
    reply: [MAIL, "replyTo"],
    thread: [MAIL, "readThread"],
    receive: [MAIL, "receive"],
    request: [MAIL, "request"],
    ack: [MAIL, "ack"],
    list: [MAIL, "listInbox"],
    unread: [MAIL, "unreadCount"],
    ensureInbox: [MAIL, "ensureInbox"],
    watch: [MAIL, "watchInbox"],
    onChange: [MAIL, "onInboxChange"],
    policy: [MAIL, "readPolicy"],
    setMode: [MAIL, "setPolicyMode"],
    allow: [MAIL, "allowSenders"],
    deny: [MAIL, "denySenders"],
  },
  topics: {
    publish: [TOPICS, "publishTopic"],
    read: [TOPICS, "readTopic"],
    list: [TOPICS, "listTopics"],
    subscribe: [TOPICS, "subscribeTopics"],
  },
  tasks: {
    add: [TASKS, "addTask"],
    addMany: [TASKS, "addTasks"], // validated together, then added in order (lib/tasks/add.ts)
    claim: [TASKS, "claimTask"],
    unclaim: [TASKS, "unclaimTask"],
    renew: [TASKS, "renewTask"],
    complete: [TASKS, "completeTask"],
    fail: [TASKS, "failTask"],
    retry: [TASKS, "retryTask"],
    cancel: [TASKS, "cancelTask"],
    list: [TASKS, "listTasks"],
    show: [TASKS, "showTask"],
    wait: [TASKS, "waitTasks"],
    claimable: [TASKS, "claimable"],
    queueExists: [TASKS, "queueExists"],
  },
  leases: {
    take: [LEASES, "takeLeases"],
    takeUndoably: [LEASES, "takeLeasesUndoably"],
    untake: [LEASES, "untakeLeases"],
    renew: [LEASES, "renewLeases"],
    release: [LEASES, "releaseLeases"],
    list: [LEASES, "listLeases"],
  },
  reservations: {
    reserve: [RESERVATIONS, "reserve"],
    release: [RESERVATIONS, "release"],
    list: [RESERVATIONS, "listReservations"],
    blockers: [RESERVATIONS, "blockers"],
  },
  // What the git hooks of `a2a guard` decide (lib/guard/check.ts).
  guard: {
    commit: [GUARD, "guardCommit"],
    push: [GUARD, "guardPush"],
  },
  presence: {
    start: [PRESENCE, "startPresence"],
    peers: [PRESENCE, "listPeers"],
    sessionName: [PRESENCE, "sessionName"],
    acting: [PRESENCE, "actingAgent"],
    optional: [PRESENCE, "optionalAgent"],
    whoami: [SESSIONS, "whoami"],
  },
  sessions: {
    start: [SESSIONS, "sessionStart"],
    prompt: [SESSIONS, "promptSubmit"],
    stop: [SESSIONS, "stopDecision"],
    waitForWork: [SESSIONS, "waitForWork"],
    serve: [SESSIONS, "serveQueue"],
    mark: [SESSIONS, "markState"],
    answered: [SESSIONS, "markAnswered"],
    holdTask: [SESSIONS, "holdTask"],
    endWait: [SESSIONS, "endWait"],
    state: [SESSIONS, "sessionState"],
    peers: [SESSIONS, "peersWithState"],
    waitState: [SESSIONS, "waitState"],
    markShellWait: [SESSIONS, "markShellWait"],
    wakeCheck: [SESSIONS, "wakeCheck"],
    keepWake: [SESSIONS, "keepWake"],
    prompted: [SESSIONS, "promptedBy"],
    noteThread: [SESSIONS, "noteThread"],
    thread: [SESSIONS, "threadOf"],
  },
  dashboard: {
    agentRow: [DASHBOARD, "agentRow"],
    agentRows: [DASHBOARD, "agentRows"],
    livePeers: [DASHBOARD, "livePeers"],
    topicRow: [DASHBOARD, "topicRow"],
    topicRows: [DASHBOARD, "topicRows"],
    watch: [DASHBOARD, "watchBus"],
    // The task board and its actions (lib/dashboard/tasks.ts).
    board: [BOARD, "read"],
    retry: [BOARD, "retry"],
    cancel: [BOARD, "cancel"],
    release: [BOARD, "release"],
    releaseReservation: [BOARD, "releaseReservation"],
  },
  admin: {
    init: [MAINTENANCE, "initStore"],
    gc: [MAINTENANCE, "gcStore"],
    describe: [MAINTENANCE, "describeStore"],
    clockSkew: [MAINTENANCE, "clockSkew"],
    removeTombstone: [MAINTENANCE, "removeTombstone"],
    audit: [MAINTENANCE, "auditShared"],
    // A database store's own (lib/maintenance/server.ts): doctor's server checks, init's SQL.
    serverChecks: [MAINTENANCE, "serverChecks"],
    serverSql: [MAINTENANCE, "serverSql"],
  },
  // Blobs by digest (lib/blobs/): a2a put, a2a get, attachments.
  blobs: {
    put: [BLOBS, "putBlob"],
    get: [BLOBS, "getBlob"],
    stat: [BLOBS, "statBlob"],
    path: [BLOBS, "blobPath"],
  },
  // a2a search, MCP search (lib/search/): what the caller may read, ranked.
  search: {
    find: [SEARCH, "search"],
  },
  // a2a crew (lib/crew/): the supervisor of a crew of workers, their status and its control.
  crew: {
    up: [CREW, "runCrew"],
    list: [CREW, "listCrews"],
    status: [CREW, "crewStatus"],
    worker: [CREW, "findWorker"],
    logs: [CREW, "followLog"],
    control: [CREW, "controlCrew"],
  },
  // a2a export and import (lib/move/): a whole store as JSON lines, and loaded back.
  move: {
    exportStore: [MOVE, "exportStore"],
    importStore: [MOVE, "importStore"],
  },
} as const;

// `f(store, ...args)` as the bus offers it: `(...args) => Promise<result>`.
type Bound<L> = L extends readonly [() => Promise<infer M>, infer K]
  ? K extends keyof M
    ? M[K] extends (store: Store, ...args: infer A) => infer R
      ? (...args: A) => Promise<Awaited<R>>
      : never
    : never
  : never;
type Room<T> = { readonly [K in keyof T]: Bound<T[K]> };
type Rooms = { readonly [C in keyof typeof OPS]: Room<(typeof OPS)[C]> };

export type Engine = EngineName;

export interface Bus extends Rooms {
  readonly engine: Engine;
  readonly where: string; // the location as it may be shown: never a password
  readonly from: "dir" | "A2A_DIR" | "default"; // the dir option, the variable, or neither
  readonly host: string; // this machine, as presence records name it
  readonly settings: Settings;
  close(): Promise<void>; // lets go of what the bus holds in this process (watches, connections)
}

export interface BusOptions {
  dir?: string;
  env?: Env;
}

function bind<T extends Record<string, Op>>(store: Store, concept: string, ops: T, ready: Promise<void> | undefined): Room<T> {
  const room: Record<string, unknown> = {};
  // A synchronous throw becomes a rejected promise: one way to fail for every operation.
  for (const [k, [load, name]] of Object.entries(ops)) {
    room[k] = async (...args: unknown[]) => {
      if (ready) await ready;
      // The room's code and its storage's, loaded side by side (lib/fs/engine.ts prepare).
      const [m] = await Promise.all([load(), store.engine.prepare?.(concept)]);
      return (m as Record<string, Fn>)[name](store, ...args);
    };
  }
  return room as Room<T>;
}

// Opens the store named by `dir`, else $A2A_DIR, else ~/.a2a, with every setting read once;
// throws EUSAGE/EIO (nothing written) when it cannot be a store.
export function openBus(opts: BusOptions = {}): Bus {
  const env = opts.env ?? process.env;
  const url = storeUrl(opts.dir, env);
  const store = openStore({ dir: opts.dir, env });
  if (url === undefined) return fileBus(store);
  // The engine's code is loaded only here, for a database store (a file store never loads it);
  // every operation waits for it. The safety recheck is A2A_POLL_MS when set, else the engine's.
  const ready = import("./pg/engine").then((pg) => {
    store.engine = pg.openPg(store, store.pollMs === DEFAULT_POLL_MS ? pg.PG_RECHECK_MS : store.pollMs);
  });
  return busOver(store, "postgres", ready);
}

// The bus over an open file store (tests and the bench open stores this way too). A room's
// operations are bound on its first use: a command binds only the rooms it calls.
export const fileBus = (store: Store): Bus => busOver(store, "file", undefined);

function busOver(store: Store, engine: Engine, ready: Promise<void> | undefined): Bus {
  const close = async () => {
    // An engine that never loaded holds nothing to let go of.
    if (ready && !(await ready.then(() => true, () => false))) return;
    await store.engine.close();
  };
  const bus = {
    engine,
    where: store.root,
    from: store.rootFrom,
    get host() {
      return store.host; // asked for only when shown (lib/core/config.ts: node:os)
    },
    settings: store as Settings,
    close,
  };
  for (const c of Object.keys(OPS) as (keyof typeof OPS)[]) {
    Object.defineProperty(bus, c, {
      configurable: true,
      enumerable: true,
      get: () => {
        const room = bind(store, c, OPS[c], ready);
        Object.defineProperty(bus, c, { value: room, enumerable: true });
        return room;
      },
    });
  }
  return bus as unknown as Bus;
}

export { redact };
