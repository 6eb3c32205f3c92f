/**
 * When each access token was last used (`dispatch.access_token_uses`, by the
 * token's sha256 digest: configured, generated and stored tokens alike), for
 * `dispatch token list`. A request never waits on it: `TokenUses.note` checks
 * a time kept in memory and writes at most once a minute per token (in the
 * background), and the write itself moves the time only when it is a minute
 * old, so that several API processes do not each rewrite the row.
 */
import type { Sql, Tx } from "../../db/client";

/** How often a token's use is written down, at most. */
export const NOTE_EVERY_MS = 60_000;
/** Tokens whose last note is remembered, at most (only accepted tokens are noted: a handful). */
const MAX_REMEMBERED = 4096;

/** Notes the uses of accepted tokens, at most once a minute each. */
export class TokenUses {
  private readonly noted = new Map<string, number>();
  private writing = new Set<Promise<void>>();

  constructor(
    private readonly sql: Sql,
    /** Told of a failed write (most often the database is away); the use is written again a minute later. */
    private readonly onError: (error: unknown) => void,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Notes a use of the token with `digest`: written now unless it was within the last minute. */
  note(digest: Buffer): void {
    const key = digest.toString("base64");
    const now = this.clock();
    if (now - (this.noted.get(key) ?? -Infinity) < NOTE_EVERY_MS) return;
    if (this.noted.size >= MAX_REMEMBERED && !this.noted.has(key)) this.noted.delete(this.noted.keys().next().value!);
    this.noted.set(key, now);
    const write: Promise<void> = recordTokenUse(this.sql, digest)
      .catch(this.onError)
      .finally(() => this.writing.delete(write));
    this.writing.add(write);
  }

  /** Waits for the writes under way. */
  async stop(): Promise<void> {
    await Promise.all([...this.writing]);
  }
}

/** Writes that the token with `digest` is used now, unless the row says so within the minute. */
export async function recordTokenUse(sql: Tx, digest: Buffer): Promise<void> {
  await sql`
    insert into dispatch.access_token_uses as u (digest, last_used_at) values (${digest}, now())
    on conflict (digest) do update set last_used_at = excluded.last_used_at
    where u.last_used_at <= excluded.last_used_at - ${NOTE_EVERY_MS} * interval '1 millisecond'`;
}

/** When each of the tokens with `digests` was last used, by digest (base64); a token never used has none. */
export async function lastTokenUses(sql: Tx, digests: Buffer[]): Promise<Map<string, Date>> {
  if (digests.length === 0) return new Map();
  const hex = digests.map((digest) => digest.toString("hex"));
  const rows = await sql<{ digest: Buffer; lastUsedAt: Date }[]>`
    select digest, last_used_at as "lastUsedAt" from dispatch.access_token_uses
    where digest in (select decode(d, 'hex') from unnest(${hex}::text[]) d)`;
  return new Map(rows.map((row) => [row.digest.toString("base64"), row.lastUsedAt]));
}
