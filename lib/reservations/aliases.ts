// A repository's aliases (repo.ts): the identities its other sources give, whose sets hold the
// reservations made before its identity source changed (no origin yet, no A2A_REPO, an older
// spelling of the origin). They stay the repository's: every read and conflict check of
// reserve.ts sees them with its own set, and their holder's release or renewal removes them;
// nothing new is written under an alias, so the sets empty out as their reservations end.

import { nowSec } from "../core/time";
import type { Repo } from "./repo";
import type { Reservation, ReservationStorage } from "./storage";

const live = (rs: Reservation[], now: number) => rs.filter((r) => r.expires_at > now);

// Every reservation under the aliases.
export const aliasSets = (storage: ReservationStorage, repo: Repo): Promise<Reservation[]> => storage.liveMany(repo.aliases);

// The repository's own set and its aliases' (one read), one (holder, pattern) once: its own first.
export const wholeSet = async (storage: ReservationStorage, repo: Repo): Promise<Reservation[]> => onceEach(await storage.liveMany([repo.id, ...repo.aliases]));

// One (holder, pattern) once, the first kept.
export function onceEach(rs: Reservation[]): Reservation[] {
  const seen = new Set<string>();
  return rs.filter((r) => !seen.has(`${r.holder}\0${r.pattern}`) && seen.add(`${r.holder}\0${r.pattern}`));
}


// Removes the reservations `which` picks from the alias sets that hold any (each in its own
// turn); returns their patterns, live ones only.
export async function dropOwn(storage: ReservationStorage, aliases: string[], seen: Reservation[], which: (r: Reservation) => boolean): Promise<string[]> {
  const out: string[] = [];
  for (const alias of aliases) {
    if (!seen.some((r) => r.repo === alias && which(r))) continue;
    await storage.change(alias, (current) => {
      const now = nowSec();
      out.push(...live(current, now).filter(which).map((r) => r.pattern));
      return live(current, now).filter((r) => !which(r));
    });
  }
  return out;
}
