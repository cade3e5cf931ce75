// The slot room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { readChunks } from "./chunks";
export { onSlotChange, onSlotNamesChange, watchSlots } from "./events";
export { getSlot, readSlot, similarSlot } from "./read";
export { appendChunk, clearAll, clearSlot, listSlots, publishSlot, startSlot } from "./slot";
export { tailSlot } from "./tail";
export { waitSlots } from "./wait";
