// The names a crew's supervisor goes by on the bus (pure: lib/crew/status.ts and the dashboard
// both use them): one for its lease, status slot and control inbox, its crew's and its host's;
// and one lease a worker, so a worker's name runs under one supervisor at a time.

// One name for a supervisor's lease, status slot and control inbox: its crew's and its host's
// (the host as a name may hold it: other characters as "-", cut to fit a name's 128). A host
// changed on the way ends in 8 hex of its SHA-256, so two hosts never share one (hosts cut to
// one prefix, or "büro" and "bäro", would be one supervisor, the second refused as this host's).
export const PREFIX = "crewhost.";
export function supervisorName(crew: string, host: string): string {
  const room = 127 - PREFIX.length - crew.length; // at least 9: lib/crew/file.ts MAX_CREW_NAME
  const tag = host.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^\.+/, "");
  if (tag === host && tag.length <= room) return `${PREFIX}${crew}.${tag}`;
  const mark = `-${new Bun.CryptoHasher("sha256").update(host).digest("hex").slice(0, 8)}`;
  return `${PREFIX}${crew}.${tag.slice(0, room - mark.length)}${mark}`;
}
export const statusName = supervisorName;
export const leaseName = supervisorName;
export const controlName = supervisorName;
// A worker's name is held by one supervisor of any crew on any host at a time (a lease, taken
// with the supervisor's own), so two machines never run two workers of one name.
export const workerLeaseName = (worker: string) => (worker.length <= 116 ? `crewworker.${worker}` : `crewworker.h-${new Bun.CryptoHasher("sha256").update(worker).digest("hex").slice(0, 40)}`);
