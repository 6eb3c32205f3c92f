/**
 * Batches concurrent point reads: keys asked for in the same tick are loaded
 * with one query. The worker runs many deliveries at once, and each starts by
 * reading its message.
 */

/** Loads many keys at once; keys missing from the map resolve to undefined. */
export type LoadMany<K, V> = (keys: K[]) => Promise<Map<K, V>>;

/** Coalesces `get` calls made in the same tick into one `loadMany`. */
export class BatchLoader<K, V> {
  private pending = new Map<K, ((value: V | undefined) => void)[]>();
  private rejecters: ((error: unknown) => void)[] = [];
  private scheduled = false;

  constructor(private readonly loadMany: LoadMany<K, V>) {}

  /** The value for `key`, loaded together with every other key asked for in this tick. */
  get(key: K): Promise<V | undefined> {
    return new Promise((resolve, reject) => {
      const waiting = this.pending.get(key) ?? [];
      waiting.push(resolve);
      this.pending.set(key, waiting);
      this.rejecters.push(reject);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    const rejecters = this.rejecters;
    this.pending = new Map();
    this.rejecters = [];
    this.scheduled = false;
    try {
      const values = await this.loadMany([...batch.keys()]);
      for (const [key, resolvers] of batch) for (const resolve of resolvers) resolve(values.get(key));
    } catch (error) {
      for (const reject of rejecters) reject(error);
    }
  }
}
