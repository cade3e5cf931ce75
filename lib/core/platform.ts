// Every question a2a asks the operating system that has no portable answer, in one place, with
// what a2a does where the answer cannot be had. Everything else a2a does is POSIX through
// node:fs, the same on Linux and macOS.
//
//   question                          Linux                          elsewhere ("portable")
//   is DIR on a network filesystem?   statfs f_type magic numbers    unknown: wake by watch AND
//                                                                    poll (the safe choice; doctor
//                                                                    says so)
//   may we read inotify ourselves?    yes (lib/fs/inotify.ts)      no: fs.watch, then polling
//   inotify limits (doctor)           /proc/sys/fs/inotify           not asked
//   the parent of a process           /proc/PID/stat                 unknown: session naming skips
//                                                                    its ancestry step
//   the terminal of a process         /proc/PID/fd/0                 unknown (peers show none)
//   argv's raw bytes                  /proc/self/cmdline             unknown: invalid UTF-8 in an
//                                                                    argument cannot be told apart
//   is a character device memory?     major number 1 (/dev/null)     unknown: ask node:tty
//   the command that opens a URL      xdg-open                       macOS: open; else xdg-open
//   this machine's name               /proc/sys/kernel/hostname      os.hostname() (node:os, whose
//                                     (os.hostname() without it)     load costs ~3% of a start-up)
//
// macOS numbers statfs types differently (there 0x6969 is not NFS), so a magic-number answer
// there would be wrong, not merely missing: "unknown" is the honest one. A2A_PLATFORM=portable
// makes Linux answer as any other platform does, which is how the test suite runs the macOS path
// (fs.watch, no /proc) in CI.

import { readFileSync, readlinkSync, statfsSync, type Stats } from "node:fs";

export type PlatformKind = "linux" | "portable";

export type Filesystem = { kind: "local" } | { kind: "network"; type: string } | { kind: "unknown" };

export interface Platform {
  readonly kind: PlatformKind;
  filesystem(dir: string): Filesystem;
  readonly inotify: boolean;
  inotifyLimits(): { instances: number; watches: number } | undefined;
  parentPid(pid: number): number | undefined;
  terminalOf(pid: number): string | null; // "pts/3", from the process's stdin
  rawArgv(): Buffer | undefined; // NUL-separated, as the kernel holds it
  isMemoryDevice(st: Stats): boolean | undefined;
  hostname(): string; // as os.hostname() says it (the kernel's nodename)
}

const osHostname = () => (require("node:os") as typeof import("node:os")).hostname();

const NETWORK_FS: Record<number, string> = {
  0x6969: "nfs",
  0xff534d42: "cifs",
  0xfe534d42: "smb2",
  0x517b: "smb",
  0x65735546: "fuse",
  0x01021997: "9p",
  0x00c36400: "ceph",
  0x47504653: "gpfs",
  0x0bd00bd0: "lustre",
};

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

const LINUX: Platform = {
  kind: "linux",
  filesystem(dir) {
    let type: number;
    try {
      type = Number(statfsSync(dir).type) >>> 0;
    } catch {
      return { kind: "local" }; // not there yet: its nearest parent was asked by the caller
    }
    const name = NETWORK_FS[type];
    return name ? { kind: "network", type: name } : { kind: "local" };
  },
  inotify: true,
  inotifyLimits() {
    const instances = Number(read("/proc/sys/fs/inotify/max_user_instances")?.trim());
    const watches = Number(read("/proc/sys/fs/inotify/max_user_watches")?.trim());
    return Number.isFinite(instances) && Number.isFinite(watches) && instances > 0 ? { instances, watches } : undefined;
  },
  // /proc/PID/stat is "PID (COMM) STATE PPID ...", and COMM may hold spaces and parentheses:
  // the fields are counted from the last ")".
  parentPid(pid) {
    const stat = read(`/proc/${pid}/stat`);
    if (stat === undefined) return undefined;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  },
  terminalOf(pid) {
    try {
      const t = readlinkSync(`/proc/${pid}/fd/0`);
      return t.startsWith("/dev/") && /tty|pts/.test(t) ? t.slice(5) : null;
    } catch {
      return null;
    }
  },
  rawArgv() {
    try {
      return readFileSync("/proc/self/cmdline");
    } catch {
      return undefined;
    }
  },
  isMemoryDevice: (st) => Number(st.rdev) >> 8 === 1,
  hostname: () => read("/proc/sys/kernel/hostname")?.replace(/\n$/, "") || osHostname(),
};

const PORTABLE: Platform = {
  kind: "portable",
  filesystem: () => ({ kind: "unknown" }),
  inotify: false,
  inotifyLimits: () => undefined,
  parentPid: () => undefined,
  terminalOf: () => null,
  rawArgv: () => undefined,
  isMemoryDevice: () => undefined,
  hostname: osHostname,
};

// The desktop's "open this URL" command (a2a ui --open, when $BROWSER is not set).
export const urlOpener = (os: string = process.platform): string => (os === "darwin" ? "open" : os === "win32" ? "explorer" : "xdg-open");

// The platform of this process: `forced` is A2A_PLATFORM (lib/core/config.ts reads it once).
export function platformFor(os: string = process.platform, forced?: "portable"): Platform {
  return os === "linux" && forced !== "portable" ? LINUX : PORTABLE;
}
