/**
 * The tokens an API process accepts, held in memory so that no request waits
 * on a query: the configured (or generated) ones, fixed at start, and the
 * stored ones (access-tokens.ts), read at start and again whenever they
 * change. A change sends a NOTIFY on `ACCESS_TOKENS_CHANNEL`; one sent while
 * the listening connection is away is lost, so the set is also read again
 * each time that connection (re)connects and, as a last safety net, every
 * `REFRESH_INTERVAL_MS`. While the database is away the set read last stays
 * in force. The set also notes each accepted token's use (token-uses.ts),
 * at most once a minute per token.
 */
import { timingSafeEqual } from "node:crypto";
import type { Listener, Sql } from "../../db/client";
import { DEFAULT_PROJECT } from "../../db/vocabulary";
import {
  ACCESS_TOKENS_CHANNEL,
  type AccessTokenDigest,
  findAccessToken,
  readAccessTokenDigests,
  tokenDigest,
  tokenUserId,
} from "./access-tokens";
import { TokenUses } from "./token-uses";

/** What a token may do: everything, or read. */
export type Access = "full" | "readonly";

/** What a token grants: its access, to the data of its project. */
export interface Grant {
  readonly access: Access;
  readonly project: string;
}

/** An accepted token's digest (`tokenDigest`) and what it grants. */
export interface AcceptedToken {
  readonly digest: Buffer;
  readonly grant: Grant;
}

/** The accepted tokens, full ones first, and the user ids their workflow webhooks carry. */
export interface TokenDigests {
  readonly tokens: readonly AcceptedToken[];
  /**
   * The `UserID`s of the full tokens (`tokenUserId`), with their token's
   * project: a workflow app's webhook URLs carry its token's, and only those
   * URLs are answered. A read-only token cannot run a workflow, so its user
   * id names no webhook.
   */
  readonly webhookUserIds: ReadonlyMap<string, string>;
}

/**
 * What a token given by its digest grants, or null when it is none of
 * `digests` (a token held as full and read-only is full). Every digest is
 * compared (in constant time), so the time taken does not tell which, or
 * whether one, matched.
 */
export function grantOf(digests: TokenDigests, candidate: Buffer): Grant | null {
  let found: Grant | null = null;
  for (const { digest, grant } of digests.tokens) {
    const matched = digest.length === candidate.length && timingSafeEqual(candidate, digest);
    if (matched && found === null) found = grant;
  }
  return found;
}

/** The configured tokens as accepted ones: they belong to the default project. */
function configuredTokens(tokens: string[], access: Access): AcceptedToken[] {
  return tokens.map((token) => ({ digest: tokenDigest(token), grant: { access, project: DEFAULT_PROJECT } }));
}

/** Full tokens first, as `grantOf` reads them. */
const fullFirst = (tokens: AcceptedToken[]) =>
  [...tokens.filter((token) => token.grant.access === "full"), ...tokens.filter((token) => token.grant.access !== "full")];

/** The tokens a route accepts, asked at each request, so that a change applies from the next one. */
export interface TokenSet {
  current(): TokenDigests;
  /**
   * What a token `current()` does not hold grants, looked up where tokens
   * are stored: one created a moment ago is accepted before its notification
   * is read. Absent from sets that never change.
   */
  lookup?(candidate: Buffer): Promise<Grant | null>;
  /** Notes that the token with `digest` was just accepted (token-uses.ts); absent from sets that keep no record. */
  noteUse?(digest: Buffer): void;
}

/** The longest a created or revoked token can go unseen when its NOTIFY was lost. */
export const REFRESH_INTERVAL_MS = 30_000;
/** How long a digest found in no table is taken as unknown without asking again (the set's next read forgets them all). */
const UNKNOWN_KEPT_MS = 5_000;
/** Unknown digests kept at most: made-up tokens cannot grow it. */
const MAX_UNKNOWN = 4096;

/** A set that never changes: `full` and `readOnly` tokens, of the default project. */
export function fixedTokenSet(full: string[], readOnly: string[]): TokenSet {
  const userIds = full.map(tokenUserId).filter((id) => id !== null);
  const digests: TokenDigests = {
    tokens: [...configuredTokens(full, "full"), ...configuredTokens(readOnly, "readonly")],
    webhookUserIds: new Map(userIds.map((id) => [id, DEFAULT_PROJECT])),
  };
  return { current: () => digests };
}

/** `set` and `extra` read-only tokens of the default project (`/metrics` adds DISPATCH_METRICS_TOKEN). */
export function withReadOnly(set: TokenSet, extra: string[]): TokenSet {
  const added = configuredTokens(extra, "readonly");
  return {
    current() {
      const digests = set.current();
      return { ...digests, tokens: [...digests.tokens, ...added] };
    },
    lookup: async (candidate: Buffer) => (await set.lookup?.(candidate)) ?? null,
    noteUse: (digest: Buffer) => set.noteUse?.(digest),
  };
}

/** The configured tokens and the stored ones, kept current. */
export class LiveTokenSet implements TokenSet {
  private digests: TokenDigests;
  private reading: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private unlisten: (() => Promise<void>) | null = null;
  private stopped = false;
  /** Digests looked up lately and not found, with when that stops holding. */
  private readonly unknown = new Map<string, number>();
  private readonly uses: TokenUses;

  constructor(
    private readonly sql: Sql,
    private readonly listener: Listener,
    private readonly configured: TokenSet,
    /** Told of a failed read or write (most often the database is away); nothing is thrown. */
    private readonly onError: (error: unknown) => void,
  ) {
    this.digests = configured.current();
    this.uses = new TokenUses(sql, onError);
  }

  current(): TokenDigests {
    return this.digests;
  }

  /**
   * A stored token the set does not hold yet (created since the last read:
   * `dispatch token create` prints it as soon as it commits): found by its
   * digest, it is accepted, and the set is read again. A revoked token is
   * gone from the table, so it is never found here. A digest not found is
   * not looked up again for a few seconds, until the set is next read (a
   * token created since is then in the set): repeated unknown tokens cost
   * no query each.
   */
  async lookup(candidate: Buffer): Promise<Grant | null> {
    const key = candidate.toString("base64");
    if ((this.unknown.get(key) ?? 0) > Date.now()) return null;
    const found = await findAccessToken(this.sql, candidate);
    if (found === null) {
      this.rememberUnknown(key);
      return null;
    }
    void this.refresh();
    return { access: found.readOnly ? "readonly" : "full", project: found.project };
  }

  /** Reads the stored tokens (throwing if it cannot), then follows their changes. */
  async start(): Promise<void> {
    this.use(await readAccessTokenDigests(this.sql));
    // The second callback runs on every (re)connection of the listener: what changed meanwhile is read.
    const listening = await this.listener.listen(ACCESS_TOKENS_CHANNEL, () => void this.refresh(), () => void this.refresh());
    this.unlisten = listening.unlisten;
    this.timer = setInterval(() => void this.refresh(), REFRESH_INTERVAL_MS).unref();
  }

  noteUse(digest: Buffer): void {
    if (!this.stopped) this.uses.note(digest);
  }

  /** Stops following changes (the set stays as it is) and noting uses, once the notes under way are written. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.unlisten?.().catch(() => {});
    await this.reading;
    await this.uses.stop();
  }

  /**
   * Reads the stored tokens again. Reads run one at a time, and every call
   * is followed by a read that starts after it: calls made while a read runs
   * share the one queued behind it.
   */
  private refresh(): Promise<void> {
    this.queued ??= this.reading.then(() => {
      this.queued = null;
      return this.read();
    });
    this.reading = this.queued;
    return this.queued;
  }

  private async read(): Promise<void> {
    if (this.stopped) return;
    try {
      this.use(await readAccessTokenDigests(this.sql));
    } catch (error) {
      if (!this.stopped) this.onError(error);
    }
  }

  private rememberUnknown(key: string): void {
    if (this.unknown.size >= MAX_UNKNOWN) this.unknown.delete(this.unknown.keys().next().value!);
    this.unknown.set(key, Date.now() + UNKNOWN_KEPT_MS);
  }

  private use(stored: AccessTokenDigest[]): void {
    this.unknown.clear();
    const configured = this.configured.current();
    const accepted = stored.map((token) => ({
      digest: token.digest,
      grant: { access: token.readOnly ? ("readonly" as const) : ("full" as const), project: token.project },
    }));
    const storedUserIds = stored.flatMap((token) => (token.readOnly || token.userId === null ? [] : [[token.userId, token.project] as const]));
    this.digests = {
      tokens: fullFirst([...configured.tokens, ...accepted]),
      webhookUserIds: new Map([...configured.webhookUserIds, ...storedUserIds]),
    };
  }
}
