/**
 * Directory permission bits, read rather than tried: whether another account
 * may enter a folder, and whether a folder can be trusted to hold binaries
 * that root hands to that account (nobody but root may have changed it).
 *
 * Only owner, group and other bits count (no ACLs), and only the account's
 * primary group: Node drops supplementary groups when it spawns with a uid.
 */
import { chmodSync, existsSync, mkdirSync, realpathSync, type Stats, statSync } from "node:fs";
import { parse, resolve, sep } from "node:path";
import type { Account } from "./postgres-account";

/**
 * The first folder on the way to `dir` (its ancestors, then `dir` itself,
 * symlinks resolved) that `account` may not enter, or null when it may enter
 * them all. `dir` must exist.
 */
export function blockingDirectory(dir: string, account: Account): string | null {
  for (const path of pathFromRoot(realpathSync(dir))) {
    if (!mayEnter(statSync(path), account)) return path;
  }
  return null;
}

/** A sentence saying why `account` cannot enter `dir`, or null when it can. */
export function unreachableReason(dir: string, account: Account): string | null {
  const blocking = blockingDirectory(dir, account);
  if (blocking === null) return null;
  const mode = (statSync(blocking).mode & 0o777).toString(8);
  return `user ${account.name} (uid ${account.uid}) cannot enter ${blocking} (mode ${mode})`;
}

/**
 * Why `dir` cannot be trusted, or null when it can: `dir` and every ancestor
 * must be owned by root or by this process's user, and writable by nobody
 * else (an ancestor may be world-writable with the sticky bit, as /tmp is:
 * others cannot then rename or replace what is in it).
 */
export function untrustedReason(dir: string): string | null {
  const me = process.getuid?.() ?? 0;
  const path = realpathSync(dir);
  for (const part of pathFromRoot(path)) {
    const stat = statSync(part);
    const sticky = (stat.mode & 0o1000) !== 0 && part !== path;
    if (stat.uid !== 0 && stat.uid !== me) return `${part} is owned by uid ${stat.uid}`;
    if ((stat.mode & 0o022) !== 0 && !sticky) return `${part} is writable by other users (mode ${(stat.mode & 0o7777).toString(8)})`;
  }
  return null;
}

/**
 * Creates `dir` and missing parents with mode 0755, whatever the umask, one
 * level at a time (a read-only file system then reports EROFS, not ENOENT).
 */
export function makeOpenDirectory(dir: string): void {
  for (const path of pathFromRoot(resolve(dir))) {
    if (existsSync(path)) continue;
    try {
      mkdirSync(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    chmodSync(path, 0o755);
  }
}

function mayEnter(stat: Stats, account: Account): boolean {
  if (stat.uid === account.uid) return (stat.mode & 0o100) !== 0;
  if (stat.gid === account.gid) return (stat.mode & 0o010) !== 0;
  return (stat.mode & 0o001) !== 0;
}

/** `/`, `/a`, `/a/b` for `/a/b`. */
function pathFromRoot(path: string): string[] {
  const { root } = parse(path);
  const parts = path.slice(root.length).split(sep).filter(Boolean);
  return [root, ...parts.map((_, i) => resolve(root, ...parts.slice(0, i + 1)))];
}
