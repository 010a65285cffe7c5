/** What the pool needs of a decoder: a way to give back its memory. */
export interface Freeable {
  free(): void;
}

export interface DecoderPoolOptions {
  /** The most decoders that exist at once, of every kind; a borrower beyond them waits for one to be released. */
  size: number;
  /** A decoder idle this long is freed, so that memory follows how many callers spoke lately. */
  idleMs: number;
}

interface Borrower<T> {
  kind: string;
  resolve(decoder: T): void;
  reject(error: unknown): void;
}

/**
 * Decoders lent to one utterance at a time. They are created when borrowers need them, up to `size`, and freed when
 * idle for `idleMs`. A borrower who finds none idle starts a new one (under `size`) and takes whichever comes first:
 * the new one, or one released meanwhile (loading a decoder takes about half a second, an utterance a few).
 * Decoders are of a kind (a model adapted to a channel, say), made by `create(kind)` and lent only to borrowers of
 * their kind; the kinds share `size`: at it, an idle decoder of another kind is freed to make room.
 */
export class DecoderPool<T extends Freeable> {
  /** Least recently released first; a borrower takes the last of its kind, so that the others go idle and are freed. */
  private readonly idle: { decoder: T; kind: string; since: number }[] = [];
  private readonly waiting: Borrower<T>[] = [];
  private readonly kinds = new Map<T, string>();
  /** Decoders that exist or are being created. */
  private existing = 0;
  private readonly creating = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly create: (kind: string) => Promise<T>,
    private readonly options: DecoderPoolOptions,
  ) {}

  /** How many decoders exist or are being created. */
  get size(): number {
    return this.existing;
  }

  acquire(kind = ""): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the decoder pool is closed"));
    for (let index = this.idle.length - 1; index >= 0; index--) {
      if (this.idle[index]!.kind === kind) return Promise.resolve(this.idle.splice(index, 1)[0]!.decoder);
    }
    const borrowed = new Promise<T>((resolve, reject) => this.waiting.push({ kind, resolve, reject }));
    if (this.unserved(kind) && this.makeRoom()) this.grow(kind);
    return borrowed;
  }

  release(decoder: T): void {
    const kind = this.kinds.get(decoder) ?? "";
    if (this.closed) return this.free(decoder);
    const next = this.waiting.findIndex((borrower) => borrower.kind === kind);
    if (next >= 0) return this.waiting.splice(next, 1)[0]!.resolve(decoder);
    // Borrowers of another kind wait only when every decoder is taken: this one makes room for theirs.
    const other = this.waiting.find((borrower) => this.unserved(borrower.kind));
    if (other) {
      this.free(decoder);
      return this.grow(other.kind);
    }
    this.idle.push({ decoder, kind, since: Date.now() });
    this.scheduleSweep();
  }

  /** Loads one decoder of `kind` ahead of need, unless one exists or is being made. */
  async warm(kind = ""): Promise<void> {
    if ((this.creating.get(kind) ?? 0) > 0 || [...this.kinds.values()].includes(kind)) return;
    this.release(await this.acquire(kind));
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.sweeper);
    for (const { decoder } of this.idle.splice(0)) this.free(decoder);
    for (const borrower of this.waiting.splice(0)) borrower.reject(new Error("the decoder pool is closed"));
  }

  /** Whether more borrowers of `kind` wait than decoders of it are being made. */
  private unserved(kind: string): boolean {
    return this.waiting.filter((borrower) => borrower.kind === kind).length > (this.creating.get(kind) ?? 0);
  }

  /** Whether one more decoder may be made: under `size`, or once the least recently used idle one is freed. */
  private makeRoom(): boolean {
    if (this.existing < this.options.size) return true;
    const oldest = this.idle.shift();
    if (!oldest) return false;
    this.free(oldest.decoder);
    return true;
  }

  private free(decoder: T): void {
    this.existing--;
    this.kinds.delete(decoder);
    decoder.free();
  }

  private grow(kind: string): void {
    this.existing++;
    this.creating.set(kind, (this.creating.get(kind) ?? 0) + 1);
    const created = () => this.creating.set(kind, this.creating.get(kind)! - 1);
    this.create(kind).then(
      (decoder) => {
        created();
        this.kinds.set(decoder, kind);
        this.release(decoder);
      },
      (error: unknown) => {
        created();
        this.existing--;
        // With decoders in use, the borrowers are served as they are released; with none, nobody would serve them.
        if (this.existing === 0) for (const borrower of this.waiting.splice(0)) borrower.reject(error);
      },
    );
  }

  private scheduleSweep(): void {
    if (this.sweeper || this.idle.length === 0) return;
    const due = this.idle[0]!.since + this.options.idleMs - Date.now();
    this.sweeper = setTimeout(() => this.sweep(), Math.max(0, due));
    this.sweeper.unref();
  }

  private sweep(): void {
    this.sweeper = undefined;
    const now = Date.now();
    while (this.idle.length > 0 && now - this.idle[0]!.since >= this.options.idleMs) this.free(this.idle.shift()!.decoder);
    this.scheduleSweep();
  }
}

/** Where work stands in the queue for a slot: urgent work first, then the earliest-begun utterance. */
export interface Standing {
  urgent(): boolean;
  /** When the utterance (or other work) began; earlier goes first. */
  since: number;
}

interface Queued extends Standing {
  start(): void;
}

/**
 * Native decoding calls, at most `slots` at once: the machine's cores, since decoding is CPU-bound, and more calls
 * at once would only share the cores while filling libuv's thread pool, which file access also uses. Work that
 * ends a turn goes first, since its caller waits for the answer; then the utterance begun earliest, so that when
 * more callers speak than the cores can follow, they are decoded one after another, as they would be heard, rather
 * than all falling behind together. A caller whose audio waits loses nothing: it then goes in one larger call.
 */
export class DecodingSlots {
  private running = 0;
  private readonly queue: Queued[] = [];

  constructor(private readonly slots: number) {}

  /** Whether a slot is free now: no work waits. */
  get free(): boolean {
    return this.running < this.slots;
  }

  /** Runs `work` in a slot; `urgent` is asked when a slot frees, so a waiting stream that has since ended goes first. */
  async run<T>(standing: Standing, work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) this.running++;
    else await new Promise<void>((start) => this.queue.push({ urgent: standing.urgent, since: standing.since, start }));
    try {
      return await work();
    } finally {
      this.next();
    }
  }

  /** The freed slot goes to the earliest urgent work waiting, else to the earliest waiting. */
  private next(): void {
    let chosen = -1;
    let chosenUrgent = false;
    for (const [index, queued] of this.queue.entries()) {
      const urgent = queued.urgent();
      const earlier = chosen < 0 || queued.since < this.queue[chosen]!.since;
      if ((urgent && !chosenUrgent) || (urgent === chosenUrgent && earlier)) {
        chosen = index;
        chosenUrgent = urgent;
      }
    }
    const [handed] = chosen < 0 ? [] : this.queue.splice(chosen, 1);
    if (handed) handed.start();
    else this.running--;
  }
}
