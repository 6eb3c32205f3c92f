/**
 * The root-owned folder where Dispatch, run as root, puts what the `postgres`
 * account must reach but cannot reach in the project: a copy of the binaries
 * (`binaries/`) and relocated clusters (`clusters/`).
 */
import { makeOpenDirectory, unreachableReason, untrustedReason } from "./directory-permissions";
import type { Account } from "./postgres-account";

/** Default system folder; a persistent place, as clusters keep data there. */
export const SYSTEM_DIR = "/var/lib/dispatch";

/**
 * Creates `dir` (mode 0755) if missing and checks it: it must be trusted
 * (only root may change it) and `account` must be able to enter it. Returns
 * what is wrong, or null.
 */
export function systemDirectoryProblem(dir: string, account: Account): string | null {
  try {
    makeOpenDirectory(dir);
  } catch (error) {
    return `${dir} cannot be created (${(error as Error).message})`;
  }
  return untrustedReason(dir) ?? unreachableReason(dir, account);
}
