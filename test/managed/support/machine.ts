/**
 * The machine's tools the managed-Postgres suite runs (`.ci/run` installs
 * them when missing): Debian's Postgres server binaries and client tools, its
 * PgBouncer, and openssl. A missing one fails the suite with what to install;
 * nothing here is downloaded.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

/** The newest `/usr/lib/postgresql/<version>` (its `bin/` holds postgres, initdb, pg_dump, pg_restore). */
export function postgresInstallation(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((name) => existsSync(join(root, name, "bin", "postgres"))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error("the managed-Postgres suite needs Debian's Postgres server (apt-get install postgresql)");
  return join(root, newest);
}

/** The path of `command` on PATH (or /usr/sbin), or a failure saying which package to install. */
export function tool(command: string, debianPackage: string): string {
  for (const dir of [...(process.env.PATH ?? "").split(":"), "/usr/sbin", "/usr/bin"]) {
    if (dir && existsSync(join(dir, command))) return join(dir, command);
  }
  throw new Error(`the managed-Postgres suite needs ${command} (apt-get install ${debianPackage})`);
}

/** Runs `command` with `args` to its end; throws with its output when it fails. */
export function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; uid?: number; gid?: number } = {}): string {
  try {
    return execFileSync(command, args, { ...options, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(" ")} failed:\n${stderr ?? ""}${stdout ?? ""}`);
  }
}
