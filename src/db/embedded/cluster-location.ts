/**
 * Where the cluster's data lives for Dispatch run as root: `dataDir/pg` when
 * the `postgres` account can enter `dataDir`. Otherwise (npm start's
 * `.dispatch` in a project under /root or a `mktemp -d` folder) the cluster
 * lives in the system folder, `clusters/<project folder>-<hash of dataDir>`,
 * and `dataDir/pg` is a symlink to it: a person finds it there, and the next
 * start follows the link back to the same cluster (same token and keys).
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmdirSync, symlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { unreachableReason } from "./directory-permissions";
import { EmbeddedDatabaseError } from "./errors";
import type { Account } from "./postgres-account";
import { systemDirectoryProblem } from "./system-directory";

/** The cluster folder to use; prints one line when it is not `dataDir/pg`. */
export function clusterDirectory(dataDir: string, systemDir: string, account: Account, notice: (line: string) => void): string {
  const link = resolve(dataDir, "pg");
  const existing = lstatSync(link, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink()) return followLink(link, account, notice);
  const unreachable = unreachableReason(dataDir, account);
  if (unreachable === null) return link;
  const fix = `set DISPATCH_DATA_DIR to a folder user ${account.name} can enter, or let it enter this one (e.g. chmod o+x)`;
  if (existing && readdirSync(link).length > 0) {
    throw new EmbeddedDatabaseError(`The cluster in ${link} cannot be run: ${unreachable}. Move it, or ${fix}.`);
  }
  const clusters = join(systemDir, "clusters");
  const problem = systemDirectoryProblem(clusters, account);
  if (problem) {
    throw new EmbeddedDatabaseError(
      `The embedded database cannot live in ${dataDir} (${unreachable}) nor be moved to ${clusters} (${problem}): ${fix}.`,
    );
  }
  // Only an empty folder gets here: what an earlier, failed start left behind.
  if (existing) rmdirSync(link);
  const target = join(clusters, `${basename(dirname(resolve(dataDir)))}-${shortHash(resolve(dataDir))}`);
  mkdirSync(target, { recursive: true, mode: 0o700 });
  symlinkSync(target, link);
  notice(`Embedded database data: ${target} (linked from ${link}; ${unreachable})`);
  return target;
}

function followLink(link: string, account: Account, notice: (line: string) => void): string {
  const target = resolve(dirname(link), readlinkSync(link));
  if (!existsSync(target)) {
    throw new EmbeddedDatabaseError(`${link} links to ${target}, which does not exist: remove the link to start a new, empty cluster.`);
  }
  const unreachable = unreachableReason(dirname(target), account);
  if (unreachable) throw new EmbeddedDatabaseError(`The cluster in ${target} (linked from ${link}) cannot be run: ${unreachable}.`);
  notice(`Embedded database data: ${target} (linked from ${link})`);
  return target;
}

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}
