// The dashboard's feed: every change on the bus as one stream of events (slots, mail, topics,
// presence, the task board), which keeps the rows of lib/dashboard/view.ts current. Each engine
// tells it its own way (lib/engine/engine.ts `feed`): a directory by diffing its listings
// (lib/fs/feed.ts), a database from each room's storage (feed-storage.ts).
//
// Invariants (every engine's):
// - reading only, as lib/dashboard/view.ts;
// - subscriptions are made before any baseline is read, so nothing that lands after the
//   baseline is missed; a burst may fold into one event (re-read, not replayed);
// - a read the store refuses ends the feed with that error (never a throw from a watch
//   callback, where nobody can catch it).

import type { BoardProvider } from "./board";
import type { Store } from "../core/config";
import type { Outcome } from "../core/outcome";
import type { WaitOptions } from "../core/watch";
import type { SlotEvent } from "../slots/events";
import type { TopicMessage } from "../topics/storage";

export type MailKind = "sent" | "claimed" | "read" | "held";

export type BusEvent =
  | { area: "slot"; event: SlotEvent }
  | { area: "mail"; kind: MailKind; agent: string; id: string; from: string | null; preview: string; at: number }
  | { area: "agent"; name: string } // this agent's inbox or session state changed: re-read its row
  | { area: "peers"; joined: string[]; left: string[]; at: number } // presence changed: re-read all rows
  | { area: "topic"; message: TopicMessage }
  | { area: "board" };

export interface BusOptions extends WaitOptions {
  recheckMs?: number; // re-read presence (and the board) this often: liveness lapses without an event
  board?: BoardProvider; // whose directories move the board (default: the task queue, tasks.ts)
  onReady?: () => void; // called once the feed watches and has taken its baseline: a change after it is reported
}

// Calls `on` for every change on the bus until the signal aborts or the time runs out (it never
// ends "done"; the value is the number of events). What is there at the start is not reported.
export function watchBus(store: Store, on: (e: BusEvent) => void, opts: BusOptions = {}): Promise<Outcome<number>> {
  return store.engine.feed(on, opts);
}
