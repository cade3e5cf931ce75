// Time as a2a records and shows it: unix seconds with millisecond fractions in records, and
// one ISO-8601 form (to the second, UTC) wherever a person reads a time.

export const nowSec = () => Math.round(Date.now()) / 1000;

export const isoTime = (sec: number) => new Date(sec * 1000).toISOString().replace(/\.\d+Z$/, "Z");
