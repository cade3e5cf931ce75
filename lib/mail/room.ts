// The mail room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { ack, ensureInbox, listInbox, unreadCount } from "./inbox";
export { allowSenders, denySenders, readPolicy, setPolicyMode } from "./policy";
export { receive, request } from "./receive";
export { replyTo, sendAsHuman, sendMessage } from "./send";
export { readThread } from "./thread";
export { onInboxChange, watchInbox } from "./watch-inbox";
