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

import { closeStore, openStore, storeUrl, URL_SCHEME, type Env, type Settings, type Store } from "./core/config";
import { A2AError, arg, text } from "./core/errors";


// An operation of a room: its module is loaded on first use (a dynamic import, which the build
// splits into its own chunk), so a command loads only the rooms it calls: `a2a publish` never
// loads mail (tests/e2e/startup.test.ts).
type Fn = (store: Store, ...args: any[]) => unknown;
const op =
  <M, K extends keyof M>(load: () => Promise<M>, name: K) =>
  async (): Promise<M[K]> =>
    (await load())[name];

// The operations of each concept, as its room defines them (the first argument, the store, is
// bound by openBus). Adding an operation a front end needs means adding it here.
const OPS = {
  slots: {
    start: op(() => import("./slots/slot"), "startSlot"),
    publish: op(() => import("./slots/slot"), "publishSlot"),
    append: op(() => import("./slots/slot"), "appendChunk"),
    clear: op(() => import("./slots/slot"), "clearSlot"),
    clearAll: op(() => import("./slots/slot"), "clearAll"),
    list: op(() => import("./slots/slot"), "listSlots"),
    get: op(() => import("./slots/read"), "getSlot"),
    read: op(() => import("./slots/read"), "readSlot"),
    similar: op(() => import("./slots/read"), "similarSlot"),
    chunks: op(() => import("./slots/chunks"), "readChunks"),
    wait: op(() => import("./slots/wait"), "waitSlots"),
    tail: op(() => import("./slots/tail"), "tailSlot"),
    watch: op(() => import("./slots/events"), "watchSlots"),
    onChange: op(() => import("./slots/events"), "onSlotChange"),
  },
  mail: {
    send: op(() => import("./mail/send"), "sendMessage"),
    reply: op(() => import("./mail/send"), "replyTo"),
    receive: op(() => import("./mail/receive"), "receive"),
    request: op(() => import("./mail/receive"), "request"),
    ack: op(() => import("./mail/inbox"), "ack"),
    list: op(() => import("./mail/inbox"), "listInbox"),
    unread: op(() => import("./mail/inbox"), "unreadCount"),
    ensureInbox: op(() => import("./mail/message"), "ensureInbox"),
    watch: op(() => import("./mail/watch-inbox"), "watchInbox"),
    policy: op(() => import("./mail/policy"), "readPolicy"),
    setMode: op(() => import("./mail/policy"), "setPolicyMode"),
    allow: op(() => import("./mail/policy"), "allowSenders"),
    deny: op(() => import("./mail/policy"), "denySenders"),
  },
  topics: {
    publish: op(() => import("./topics/log"), "publishTopic"),
    read: op(() => import("./topics/log"), "readTopic"),
    list: op(() => import("./topics/subscribe"), "listTopics"),
    subscribe: op(() => import("./topics/subscribe"), "subscribeTopics"),
  },
  tasks: {
    add: op(() => import("./tasks/add"), "addTask"),
    claim: op(() => import("./tasks/claim"), "claimTask"),
    unclaim: op(() => import("./tasks/claim"), "unclaimTask"),
    renew: op(() => import("./tasks/holder"), "renewTask"),
    complete: op(() => import("./tasks/holder"), "completeTask"),
    fail: op(() => import("./tasks/holder"), "failTask"),
    retry: op(() => import("./tasks/admin"), "retryTask"),
    cancel: op(() => import("./tasks/admin"), "cancelTask"),
    list: op(() => import("./tasks/query"), "listTasks"),
    show: op(() => import("./tasks/query"), "showTask"),
    wait: op(() => import("./tasks/query"), "waitTasks"),
    claimable: op(() => import("./tasks/query"), "claimable"),
    queueExists: op(() => import("./tasks/state"), "queueExists"),
  },
  leases: {
    take: op(() => import("./leases/lease"), "takeLeases"),
    takeUndoably: op(() => import("./leases/lease"), "takeLeasesUndoably"),
    untake: op(() => import("./leases/lease"), "untakeLeases"),
    renew: op(() => import("./leases/lease"), "renewLeases"),
    release: op(() => import("./leases/lease"), "releaseLeases"),
    list: op(() => import("./leases/lease"), "listLeases"),
  },
  presence: {
    start: op(() => import("./presence/presence"), "startPresence"),
    peers: op(() => import("./presence/peers"), "listPeers"),
    sessionName: op(() => import("./presence/session-name"), "sessionName"),
    acting: op(() => import("./presence/session-name"), "actingAgent"),
    optional: op(() => import("./presence/identity"), "optionalAgent"),
    whoami: op(() => import("./sessions/whoami"), "whoami"),
  },
  sessions: {
    start: op(() => import("./sessions/hooks"), "sessionStart"),
    prompt: op(() => import("./sessions/hooks"), "promptSubmit"),
    stop: op(() => import("./sessions/hooks"), "stopDecision"),
    waitForWork: op(() => import("./sessions/hooks"), "waitForWork"),
  },
  dashboard: {
    agentRow: op(() => import("./dashboard/view"), "agentRow"),
    agentRows: op(() => import("./dashboard/view"), "agentRows"),
    livePeers: op(() => import("./dashboard/view"), "livePeers"),
    topicRow: op(() => import("./dashboard/view"), "topicRow"),
    topicRows: op(() => import("./dashboard/view"), "topicRows"),
    watch: op(() => import("./dashboard/feed"), "watchBus"),
    // The task board and its actions (lib/dashboard/tasks.ts).
    board: op(() => import("./dashboard/tasks").then((m) => m.TASK_BOARD), "read"),
    retry: op(() => import("./dashboard/tasks").then((m) => m.TASK_BOARD), "retry"),
    cancel: op(() => import("./dashboard/tasks").then((m) => m.TASK_BOARD), "cancel"),
    release: op(() => import("./dashboard/tasks").then((m) => m.TASK_BOARD), "release"),
  },
  admin: {
    init: op(() => import("./core/init"), "initStore"),
    gc: op(() => import("./maintenance/gc"), "gcStore"),
    describe: op(() => import("./maintenance/describe"), "describeStore"),
    clockSkew: op(() => import("./maintenance/describe"), "clockSkew"),
    audit: op(() => import("./maintenance/audit"), "auditShared"),
  },
} as const;

// `f(store, ...args)` as the bus offers it: `(...args) => Promise<result>`.
type Bound<L> = L extends () => Promise<(store: Store, ...args: infer A) => infer R> ? (...args: A) => Promise<Awaited<R>> : never;
type Room<T> = { readonly [K in keyof T]: Bound<T[K]> };
type Rooms = { readonly [C in keyof typeof OPS]: Room<(typeof OPS)[C]> };

export type Engine = "file";

export interface Bus extends Rooms {
  readonly engine: Engine;
  readonly where: string; // the location as it may be shown: never a password
  readonly from: "--dir" | "A2A_DIR" | "default";
  readonly host: string; // this machine, as presence records name it
  readonly settings: Settings;
  close(): Promise<void>; // lets go of what the bus holds in this process (watches, connections)
}

export interface BusOptions {
  dir?: string;
  env?: Env;
}

function bind<T extends Record<string, () => Promise<Fn>>>(store: Store, loaders: T): Room<T> {
  const room: Record<string, unknown> = {};
  // A synchronous throw becomes a rejected promise: one way to fail for every operation.
  for (const [k, load] of Object.entries(loaders)) room[k] = async (...args: unknown[]) => (await load())(store, ...args);
  return room as Room<T>;
}

// Opens the store named by `dir`, else $A2A_DIR, else ~/.a2a, with every setting read once;
// throws EUSAGE/EIO (nothing written) when it cannot be a store.
export function openBus(opts: BusOptions = {}): Bus {
  const env = opts.env ?? process.env;
  const url = storeUrl(opts.dir, env);
  if (url !== undefined) {
    throw new A2AError("EUSAGE", text`${redact(url)} names a PostgreSQL store, which this a2a cannot open yet: point ${arg("dir")} or A2A_DIR at a directory`);
  }
  return fileBus(openStore({ dir: opts.dir, env }));
}

// The bus over an open file store (tests and the bench open stores this way too).
export function fileBus(store: Store): Bus {
  const { root, rootFrom, ...rest } = store;
  const settings: Settings = pickSettings(rest);
  const rooms = Object.fromEntries(Object.entries(OPS).map(([c, fns]) => [c, bind(store, fns)])) as unknown as Rooms;
  return {
    ...rooms,
    engine: "file",
    where: root,
    from: rootFrom,
    host: store.host,
    settings,
    close: async () => closeStore(store),
  };
}

function pickSettings(s: Settings): Settings {
  return {
    maxBytes: s.maxBytes,
    pollMs: s.pollMs,
    watchMode: s.watchMode,
    shared: s.shared,
    maxUnread: s.maxUnread,
    claimLeaseMs: s.claimLeaseMs,
    heartbeatMs: s.heartbeatMs,
    agent: s.agent,
    maxWaitSec: s.maxWaitSec,
    progressMs: s.progressMs,
    durability: s.durability,
    log: s.log,
    debug: s.debug,
    platform: s.platform,
    topicKeepSec: s.topicKeepSec,
  };
}

// A location as it may be printed or written into a config: a URL without its password (nor
// any password= parameter); the password belongs in PGPASSWORD or ~/.pgpass.
export function redact(location: string): string {
  if (!URL_SCHEME.test(location)) return location;
  try {
    const u = new URL(location);
    u.password = "";
    for (const k of [...u.searchParams.keys()]) if (/pass/i.test(k)) u.searchParams.delete(k);
    return u.toString();
  } catch {
    return location.replace(/(:\/\/[^:/@]*):[^@]*@/, "$1@").replace(/([?&][^=&]*pass[^=&]*=)[^&]*/gi, "");
  }
}
