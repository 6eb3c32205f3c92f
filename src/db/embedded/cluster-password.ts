/**
 * The embedded cluster's superuser password: random, made with the cluster,
 * and kept in `<data folder>/postgres-password` (mode 0600, the user who runs
 * Dispatch), so that no other local account can sign in to the server on
 * 127.0.0.1. Clusters made by earlier versions, whose superuser had the fixed
 * password `dispatch`, are re-keyed on their next start (`rekeyLegacyCluster`).
 * The file is created exclusively: of two processes starting at once, the
 * first one's password is the one both use.
 */
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The superuser's password of clusters made before passwords were per cluster. */
export const LEGACY_PASSWORD = "dispatch";

/** Where the password of the cluster of `dataDir` is kept. */
export const passwordFile = (dataDir: string) => join(dataDir, "postgres-password");

/** The cluster's password as kept, or null when none is (a new cluster, or one made by an earlier version). */
export function readPassword(dataDir: string): string | null {
  try {
    return readFileSync(passwordFile(dataDir), "utf8").trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Makes and keeps a new random password for the cluster of `dataDir`, unless
 * another process kept one first: then that one. Returns the password to use.
 */
export function keepNewPassword(dataDir: string): string {
  const password = randomBytes(24).toString("base64url");
  try {
    writeFileSync(passwordFile(dataDir), `${password}\n`, { mode: 0o600, flag: "wx" });
    return password;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readPassword(dataDir)!;
  }
}
