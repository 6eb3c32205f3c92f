/**
 * The signing keys as a worker holds them: read once, then again only when
 * they change. A rotation sends a NOTIFY on `KEYS_CHANNEL` in its
 * transaction; the cache also re-reads whenever its listening connection
 * (re)connects, since a NOTIFY sent while it was away is lost.
 */
import type { Listener, Sql } from "../../db/client";
import type { SigningKeys } from "./signing";
import { KEYS_CHANNEL, readSigningKeys, type SigningKeySource } from "./signing-keys";

/** Cached signing keys, invalidated on rotation. */
export class SigningKeyCache {
  private keys: Promise<SigningKeys> | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly listener: Listener,
    private readonly source: SigningKeySource,
  ) {}

  /** Starts listening for rotations. */
  async start(): Promise<void> {
    const listening = await this.listener.listen(KEYS_CHANNEL, () => this.invalidate(), () => this.invalidate());
    this.unlisten = listening.unlisten;
  }

  /** The keys in force. */
  get(): Promise<SigningKeys> {
    this.keys ??= readSigningKeys(this.sql, this.source).catch((error: unknown) => {
      this.keys = null;
      throw error;
    });
    return this.keys;
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
  }

  private invalidate(): void {
    this.keys = null;
  }
}
