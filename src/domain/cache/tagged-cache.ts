interface Entry<V> {
  value: V;
  size: number;
  tags: readonly string[];
  /** `performance.now()` when stored. */
  storedAt: number;
  /** Read since it was stored or last spared by eviction. */
  used: boolean;
}

/** A read in progress whose result may be stored only if none of its tags was invalidated meanwhile. */
interface PendingRead {
  tags: readonly string[];
  invalidated: boolean;
}

/**
 * A cache whose entries carry tags (`thread:<id>`, `organization:<id>`, …) by which they are
 * invalidated, bounded by the total `size` of its entries (0 turns it off). Eviction is second-chance (CLOCK), an
 * approximation of least-recently-used whose hits only set a flag, rather than reordering a map on every read.
 *
 * A read that began before an invalidation must not store what it read: it may have read the state from before the
 * write that caused the invalidation, and storing it after the invalidation would keep it until the next write. So
 * `load` registers the read, invalidation marks the reads of its tags, and a marked read is returned but not stored.
 *
 * Entries also expire after `maxAgeMs`: the bound on staleness should a notification never come (an instance that
 * dies between a chat turn's commit and its announcement, see store/notifier.ts).
 */
export class TaggedCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly keysByTag = new Map<string, Set<string>>();
  private readonly pending = new Set<PendingRead>();
  private totalSize = 0;

  constructor(
    private readonly maxSize: number,
    private readonly maxAgeMs: number,
    private readonly sizeOf: (value: V) => number,
    /** False while invalidations cannot be trusted to arrive (the listener is down): the cache is then bypassed. */
    private readonly usable: () => boolean,
  ) {}

  get size(): number {
    return this.totalSize;
  }

  get count(): number {
    return this.entries.size;
  }

  get(key: string): V | undefined {
    if (this.maxSize === 0 || !this.usable()) return undefined;
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (performance.now() - entry.storedAt > this.maxAgeMs) {
      this.remove(key);
      return undefined;
    }
    entry.used = true;
    return entry.value;
  }

  /**
   * The cached value, else `read()`'s, kept under `tagsOf(value)` when no invalidation of `readingTags` happened while
   * it was read. A reading tag may be a whole kind (`api_key:*`) when the entry's own tag is known only once read.
   */
  async load(key: string, readingTags: readonly string[], read: () => Promise<V>, tagsOf: (value: V) => readonly string[] = () => readingTags): Promise<V> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    if (this.maxSize === 0 || !this.usable()) return read();
    const pendingRead: PendingRead = { tags: readingTags, invalidated: false };
    this.pending.add(pendingRead);
    try {
      const value = await read();
      if (!pendingRead.invalidated && this.usable()) this.store(key, tagsOf(value), value);
      return value;
    } finally {
      this.pending.delete(pendingRead);
    }
  }

  invalidate(tag: string): void {
    const wholeKind = `${tag.slice(0, tag.indexOf(":") + 1)}*`;
    for (const read of this.pending) if (read.tags.includes(tag) || read.tags.includes(wholeKind)) read.invalidated = true;
    const keys = this.keysByTag.get(tag);
    if (!keys) return;
    for (const key of [...keys]) this.remove(key);
  }

  clear(): void {
    for (const read of this.pending) read.invalidated = true;
    this.entries.clear();
    this.keysByTag.clear();
    this.totalSize = 0;
  }

  private store(key: string, tags: readonly string[], value: V): void {
    const size = this.sizeOf(value);
    if (size > this.maxSize) return;
    this.remove(key);
    this.entries.set(key, { value, size, tags, storedAt: performance.now(), used: false });
    this.totalSize += size;
    for (const tag of tags) {
      let keys = this.keysByTag.get(tag);
      if (!keys) {
        keys = new Set();
        this.keysByTag.set(tag, keys);
      }
      keys.add(key);
    }
    // Map iterates in insertion order, oldest first; a used entry is spared once by moving it to the end.
    for (const [oldest, entry] of this.entries) {
      if (this.totalSize <= this.maxSize) break;
      if (oldest === key) continue;
      if (entry.used) {
        entry.used = false;
        this.entries.delete(oldest);
        this.entries.set(oldest, entry);
      } else {
        this.remove(oldest);
      }
    }
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.totalSize -= entry.size;
    for (const tag of entry.tags) {
      const keys = this.keysByTag.get(tag);
      keys?.delete(key);
      if (keys?.size === 0) this.keysByTag.delete(tag);
    }
  }
}
