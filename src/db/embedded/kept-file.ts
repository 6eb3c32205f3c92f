/**
 * Small secrets the embedded default keeps in its data folder (the
 * superuser's password, the key-encryption secret): mode 0600, the user who
 * runs Dispatch, created exclusively, so that of two processes starting at
 * once the first one's value is the one both use.
 */
import { readFileSync, writeFileSync } from "node:fs";

/** The value kept in `file`, or null when there is none. */
export function readKept(file: string): string | null {
  try {
    return readFileSync(file, "utf8").trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/** Keeps `value` in `file` unless another process kept one first: then that one. Returns the value to use. */
export function keepNew(file: string, value: string): string {
  try {
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: "wx" });
    return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readKept(file)!;
  }
}
