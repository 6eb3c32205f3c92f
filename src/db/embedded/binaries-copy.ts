/**
 * Postgres binaries that the `postgres` account can run, for Dispatch run as
 * root: the installed ones when that account can reach them, otherwise a
 * root-owned copy in the system folder (`binaries/postgres-<version>`).
 *
 * The copy is made under a temporary name and renamed into place, so a copy
 * that exists is complete. An existing copy is used only if nobody but root
 * can have changed it: a folder another user could write to might hold
 * binaries they planted, which root would then hand to `postgres` to run.
 */
import { chmodSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { unreachableReason, untrustedReason } from "./directory-permissions";
import { EmbeddedDatabaseError } from "./errors";
import type { Account } from "./postgres-account";
import type { PostgresBinaries } from "./postgres-binaries";
import { systemDirectoryProblem } from "./system-directory";

/** The `native/` folder `account` should run Postgres from. */
export function reachableBinaries(binaries: PostgresBinaries, systemDir: string, account: Account): string {
  const unreachable = unreachableReason(join(binaries.native, "bin"), account);
  if (unreachable === null) return binaries.native;
  const folder = join(systemDir, "binaries");
  const copy = join(folder, `postgres-${binaries.version}`);
  const wrong =
    systemDirectoryProblem(folder, account) ??
    (existsSync(copy) ? null : copyAtomically(binaries.native, copy)) ??
    untrustedReason(copy) ??
    unreachableReason(join(copy, "bin"), account);
  if (wrong === null) return copy;
  throw new EmbeddedDatabaseError(
    `Postgres runs as user ${account.name} under root, but ${unreachable}, so it cannot run the binaries in ` +
      `${binaries.native}; and no copy can be used instead: ${wrong}. Fix that, or let user ${account.name} enter the ` +
      `project's folders (e.g. chmod o+x on them), or set DATABASE_URL to an existing Postgres.`,
  );
}

/** Copies `from` to `to` under a temporary name; returns what went wrong, or null. */
function copyAtomically(from: string, to: string): string | null {
  let partial: string | null = null;
  try {
    partial = mkdtempSync(`${to}.partial-`);
    cpSync(from, partial, { recursive: true, verbatimSymlinks: true });
    openModes(partial);
    renameSync(partial, to);
    return null;
  } catch (error) {
    if (partial) rmSync(partial, { recursive: true, force: true });
    // Another process may have put its copy in place first; that one is as good.
    return existsSync(to) ? null : `${to} cannot be made (${(error as Error).message})`;
  }
}

/** Folders 0755, files 0755 if executable else 0644; symlinks as they are. */
function openModes(path: string): void {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return;
  if (stat.isDirectory()) {
    chmodSync(path, 0o755);
    for (const entry of readdirSync(path)) openModes(join(path, entry));
  } else {
    chmodSync(path, stat.mode & 0o111 ? 0o755 : 0o644);
  }
}
