// What a waiter waits on: a channel names a thing that changes (a slot, an inbox, a queue, one
// task, a topic, a sender's key records, a lease), never where an engine keeps it. The file
// engine maps a channel to a directory of its tree and its inotify/poll machinery
// (lib/fs/watch.ts); another engine to its own notifications (docs/ENGINE.md).
//
// An event carries the key of the record that changed, when the engine knows it (a slot's name,
// a message's id), or undefined: "anything may have changed, look at everything". An event is
// only a reason to look again: a check reads the truth, so a lost or repeated event costs
// latency, never correctness.

export type Channel =
  // Slot records; key: the slot's name. With `names`, only those slots' changes are wanted: an
  // engine may tell of those alone (a channel per slot) or of every slot (the waiter's check
  // looks at the key, so a change of another slot costs a look, never a wrong wake).
  | { on: "slots"; names?: readonly string[] }
  // Slots appearing or going away (a first start or publish, a clear, an expiry's tombstone, a
  // removal); key: the slot's name. An engine may tell of any slot change here too.
  | { on: "slot-names" }
  | { on: "inbox"; agent: string } // unread mail arriving; key: the message id
  | { on: "inboxes" } // inboxes appearing; key: the agent's name
  | { on: "queue"; queue: string } // tasks of a queue becoming claimable
  | { on: "task"; queue: string; id: string } // one task's record
  | { on: "topic"; topic: string } // messages on one topic
  | { on: "topics" } // topics appearing; key: the topic's name
  | { on: "keys"; to: string } // idempotency key records of mail to `to`
  | { on: "lease"; name: string } // one leased name
  | { on: "reservations"; repo: string } // the reservations of one repository (its identity)
  | { on: "session"; name: string }; // one session's record (its state: lib/sessions/state.ts)

// A channel's name, as a notification system would name it ("inbox:bob"), and for messages.
export function channelName(ch: Channel): string {
  switch (ch.on) {
    case "slots":
      return "slots";
    case "slot-names":
      return "slot-names";
    case "inbox":
      return `inbox:${ch.agent}`;
    case "inboxes":
      return "inboxes";
    case "queue":
      return `queue:${ch.queue}`;
    case "task":
      return `task:${ch.queue}/${ch.id}`;
    case "topic":
      return `topic:${ch.topic}`;
    case "topics":
      return "topics";
    case "keys":
      return `keys:${ch.to}`;
    case "lease":
      return `lease:${ch.name}`;
    case "reservations":
      return `reservations:${ch.repo}`;
    case "session":
      return `session:${ch.name}`;
  }
}
