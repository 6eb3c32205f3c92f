/**
 * The unprivileged account Postgres runs as when Dispatch runs as root
 * (Postgres refuses to run as root): `postgres`, created as a system user
 * when it does not exist yet.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { EmbeddedDatabaseError } from "./errors";

/** A Unix account a child process runs as. */
export interface Account {
  name: string;
  uid: number;
  gid: number;
}

const NAME = "postgres";
const run = promisify(execFile);

/** The `postgres` account, created first if missing. */
export async function postgresAccount(): Promise<Account> {
  const existing = await lookUp();
  if (existing) return existing;
  try {
    await run("groupadd", ["--force", "--system", NAME]);
    await run("useradd", ["--system", "--gid", NAME, "--no-create-home", "--shell", "/usr/sbin/nologin", NAME]);
  } catch (error) {
    throw new EmbeddedDatabaseError(
      `Postgres does not run as root, and the user ${NAME} to run it as could not be created ` +
        `(${firstLine(error)}). Create a system user named ${NAME}, run Dispatch as a user other than root, ` +
        `or set DATABASE_URL to an existing Postgres.`,
    );
  }
  const created = await lookUp();
  if (!created) throw new EmbeddedDatabaseError(`user ${NAME} was created but cannot be looked up with id`);
  return created;
}

async function lookUp(): Promise<Account | null> {
  try {
    const [uid, gid] = await Promise.all([run("id", ["-u", NAME]), run("id", ["-g", NAME])]);
    return { name: NAME, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return null;
  }
}

function firstLine(error: unknown): string {
  const { stderr, message } = error as { stderr?: string; message?: string };
  return (stderr?.trim() || message || String(error)).split("\n")[0]!;
}
