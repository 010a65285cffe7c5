/** What the pool needs of a decoder: a way to give back its memory. */
export interface Freeable {
  free(): void;
}

export interface DecoderPoolOptions {
  /** The most decoders that exist at once; a borrower beyond them waits for one to be released. */
  size: number;
  /** A decoder idle this long is freed, so that memory follows how many callers spoke lately. */
  idleMs: number;
}

interface Borrower<T> {
  resolve(decoder: T): void;
  reject(error: unknown): void;
}

/**
 * Decoders lent to one utterance at a time. They are created when borrowers need them, up to `size`, and freed when
 * idle for `idleMs`. A borrower who finds none idle starts a new one (under `size`) and takes whichever comes first:
 * the new one, or one released meanwhile (loading a decoder takes about half a second, an utterance a few).
 */
export class DecoderPool<T extends Freeable> {
  /** Least recently released first; a borrower takes the last, so that the others go idle and are freed. */
  private readonly idle: { decoder: T; since: number }[] = [];
  private readonly waiting: Borrower<T>[] = [];
  /** Decoders that exist or are being created. */
  private existing = 0;
  private creating = 0;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly create: () => Promise<T>,
    private readonly options: DecoderPoolOptions,
  ) {}

  /** How many decoders exist or are being created. */
  get size(): number {
    return this.existing;
  }

  acquire(): Promise<T> {
    if (this.closed) return Promise.reject(new Error("the decoder pool is closed"));
    const ready = this.idle.pop();
    if (ready) return Promise.resolve(ready.decoder);
    const borrowed = new Promise<T>((resolve, reject) => this.waiting.push({ resolve, reject }));
    if (this.waiting.length > this.creating && this.existing < this.options.size) this.grow();
    return borrowed;
  }

  release(decoder: T): void {
    if (this.closed) return this.free(decoder);
    const next = this.waiting.shift();
    if (next) return next.resolve(decoder);
    this.idle.push({ decoder, since: Date.now() });
    this.scheduleSweep();
  }

  /** Loads one decoder ahead of need, unless one exists. */
  async warm(): Promise<void> {
    if (this.existing > 0) return;
    this.release(await this.acquire());
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.sweeper);
    for (const { decoder } of this.idle.splice(0)) this.free(decoder);
    for (const borrower of this.waiting.splice(0)) borrower.reject(new Error("the decoder pool is closed"));
  }

  private free(decoder: T): void {
    this.existing--;
    decoder.free();
  }

  private grow(): void {
    this.existing++;
    this.creating++;
    this.create().then(
      (decoder) => {
        this.creating--;
        this.release(decoder);
      },
      (error: unknown) => {
        this.creating--;
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
