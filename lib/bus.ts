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
import { initStore } from "./core/init";
import { agentRow, agentRows, livePeers, topicRow, topicRows } from "./dashboard/view";
import { watchBus } from "./dashboard/feed";
import { takeLeases, takeLeasesUndoably, untakeLeases, renewLeases, releaseLeases, listLeases } from "./leases/lease";
import { ack, listInbox, unreadCount } from "./mail/inbox";
import { ensureInbox } from "./mail/message";
import { allowSenders, denySenders, readPolicy, setPolicyMode } from "./mail/policy";
import { receive, request } from "./mail/receive";
import { replyTo, sendMessage } from "./mail/send";
import { watchInbox } from "./mail/watch-inbox";
import { auditShared } from "./maintenance/audit";
import { describeStore } from "./maintenance/describe";
import { gcStore } from "./maintenance/gc";
import { optionalAgent } from "./presence/identity";
import { listPeers } from "./presence/peers";
import { startPresence } from "./presence/presence";
import { actingAgent, sessionName } from "./presence/session-name";
import { promptSubmit, sessionStart, stopDecision, waitForWork } from "./sessions/hooks";
import { whoami } from "./sessions/whoami";
import { readChunks } from "./slots/chunks";
import { onSlotChange, watchSlots } from "./slots/events";
import { getSlot, readSlot, similarSlot } from "./slots/read";
import { appendChunk, clearAll, clearSlot, listSlots, publishSlot, startSlot } from "./slots/slot";
import { tailSlot } from "./slots/tail";
import { waitSlots } from "./slots/wait";
import { addTask } from "./tasks/add";
import { cancelTask, retryTask } from "./tasks/admin";
import { claimTask, unclaimTask } from "./tasks/claim";
import { completeTask, failTask, renewTask } from "./tasks/holder";
import { claimable, listTasks, showTask, waitTasks } from "./tasks/query";
import { queueExists } from "./tasks/state";
import { publishTopic, readTopic } from "./topics/log";
import { listTopics, subscribeTopics } from "./topics/subscribe";

// The operations of each concept, as its room defines them (the first argument, the store, is
// bound by openBus). Adding an operation a front end needs means adding it here.
const OPS = {
  slots: {
    start: startSlot,
    publish: publishSlot,
    append: appendChunk,
    clear: clearSlot,
    clearAll,
    list: listSlots,
    get: getSlot,
    read: readSlot,
    similar: similarSlot,
    chunks: readChunks,
    wait: waitSlots,
    tail: tailSlot,
    watch: watchSlots,
    onChange: onSlotChange,
  },
  mail: {
    send: sendMessage,
    reply: replyTo,
    receive,
    request,
    ack,
    list: listInbox,
    unread: unreadCount,
    ensureInbox,
    watch: watchInbox,
    policy: readPolicy,
    setMode: setPolicyMode,
    allow: allowSenders,
    deny: denySenders,
  },
  topics: {
    publish: publishTopic,
    read: readTopic,
    list: listTopics,
    subscribe: subscribeTopics,
  },
  tasks: {
    add: addTask,
    claim: claimTask,
    unclaim: unclaimTask,
    renew: renewTask,
    complete: completeTask,
    fail: failTask,
    retry: retryTask,
    cancel: cancelTask,
    list: listTasks,
    show: showTask,
    wait: waitTasks,
    claimable,
    queueExists,
  },
  leases: {
    take: takeLeases,
    takeUndoably: takeLeasesUndoably,
    untake: untakeLeases,
    renew: renewLeases,
    release: releaseLeases,
    list: listLeases,
  },
  presence: {
    start: startPresence,
    peers: listPeers,
    sessionName,
    acting: actingAgent,
    optional: optionalAgent,
    whoami,
  },
  sessions: {
    start: sessionStart,
    prompt: promptSubmit,
    stop: stopDecision,
    waitForWork,
  },
  dashboard: {
    agentRow,
    agentRows,
    livePeers,
    topicRow,
    topicRows,
    watch: watchBus,
  },
  admin: {
    init: initStore,
    gc: gcStore,
    describe: describeStore,
    audit: auditShared,
  },
} as const;

// `f(store, ...args)` as the bus offers it: `(...args) => Promise<result>`.
type Bound<F> = F extends (store: Store, ...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
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

function bind<T extends Record<string, (store: Store, ...args: any[]) => unknown>>(store: Store, fns: T): Room<T> {
  const room: Record<string, unknown> = {};
  // A synchronous throw becomes a rejected promise: one way to fail for every operation.
  for (const [k, f] of Object.entries(fns)) room[k] = async (...args: unknown[]) => f(store, ...args);
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

// A location as it may be printed: a URL's password (and any password= parameter) replaced.
export function redact(location: string): string {
  if (!URL_SCHEME.test(location)) return location;
  try {
    const u = new URL(location);
    if (u.password) u.password = "***";
    for (const k of [...u.searchParams.keys()]) if (/pass/i.test(k)) u.searchParams.set(k, "***");
    return u.toString();
  } catch {
    return location.replace(/(:\/\/[^:/@]*:)[^@]*@/, "$1***@");
  }
}
