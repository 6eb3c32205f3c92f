/**
 * The signing keys as a worker holds them, per project: read once, then
 * again only when they change. A rotation sends a NOTIFY on `KEYS_CHANNEL` in its
 * transaction; the cache also re-reads whenever its listening connection
 * (re)connects, since a NOTIFY sent while it was away is lost.
 */
import type { Listener, Sql } from "../../db/client";
import type { SigningKeys } from "./signing";
import { KEYS_CHANNEL, readSigningKeys, type SigningKeySource } from "./signing-keys";

/** Cached signing keys of each project, invalidated on rotation. */
export class SigningKeyCache {
  private readonly keys = new Map<string, Promise<SigningKeys>>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly listener: Listener,
    private readonly source: SigningKeySource,
  ) {}

  /** Starts listening for rotations. */
  async start(): Promise<void> {
    // A rotation names its project (an older replica's names none); a reconnect may have missed any.
    const rotated = (project: string) => (project === "" ? this.keys.clear() : this.keys.delete(project));
    const listening = await this.listener.listen(KEYS_CHANNEL, rotated, () => this.keys.clear());
    this.unlisten = listening.unlisten;
  }

  /** The keys `project` signs with. */
  get(project: string): Promise<SigningKeys> {
    let keys = this.keys.get(project);
    if (keys === undefined) {
      keys = readSigningKeys(this.sql, this.source, project).catch((error: unknown) => {
        this.keys.delete(project);
        throw error;
      });
      this.keys.set(project, keys);
    }
    return keys;
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
  }
}
