// Removing a file that may already be gone, for every writer of files (the file engine's
// records, a temp file beside a user's own file): losing a race to remove it is no error.

import { unlinkSync } from "node:fs";

// Removes `path`; true when this call removed it, false when it was not there (or not ours).
export function unlinkQuiet(path: string): boolean {
  try {
    unlinkSync(path);
    return true;
  } catch {
    return false;
  }
}
