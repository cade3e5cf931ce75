// The reservation room's operations, as the bus (lib/bus.ts) loads them: one module, so one chunk.
export { blockers, listReservations, release, reserve } from "./reserve";
