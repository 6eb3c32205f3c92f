/**
 * The embedded cluster's superuser password: random, made with the cluster,
 * and kept in `<data folder>/postgres-password` (mode 0600, the user who runs
 * Dispatch), so that no other local account can sign in to the server on
 * 127.0.0.1. Clusters made by earlier versions, whose superuser had the fixed
 * password `dispatch`, are re-keyed on their next start (`rekeyLegacyCluster`).
 * The file is kept as kept-file.ts keeps it.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { keepNew, readKept } from "./kept-file";

/** The superuser's password of clusters made before passwords were per cluster. */
export const LEGACY_PASSWORD = "dispatch";

/** Where the password of the cluster of `dataDir` is kept. */
export const passwordFile = (dataDir: string) => join(dataDir, "postgres-password");

/** The cluster's password as kept, or null when none is (a new cluster, or one made by an earlier version). */
export const readPassword = (dataDir: string): string | null => readKept(passwordFile(dataDir));

/**
 * Makes and keeps a new random password for the cluster of `dataDir`, unless
 * another process kept one first: then that one. Returns the password to use.
 */
export const keepNewPassword = (dataDir: string): string => keepNew(passwordFile(dataDir), randomBytes(24).toString("base64url"));
