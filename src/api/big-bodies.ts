// A per-process bound on big report bodies in memory at once: a pull whose body grows past the
// threshold waits, its socket paused, until another big body is let go of.

/** What readBody calls once a body it reads reaches `bytes`. */
export interface BigBodyWait {
  readonly bytes: number;
  /** Resolves when this body may go on growing; rejects when the request is aborted meanwhile. */
  wait(): Promise<void>;
}

/** One request's claim on the gate: give it to the read, release it once the body is dropped. */
export interface BigBodyHold extends BigBodyWait {
  /** Lets the next big body in, if this one held a slot. Idempotent. */
  release(): void;
}

/**
 * At most `slots` bodies over `bigBytes` held at once by this process. Small bodies never wait.
 * A waiting read does not consume its socket, so the rest of its body stays on the server's side
 * of the connection (undici's body timeout does not run while a read is paused).
 */
export class BigBodyGate {
  private held = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    readonly bigBytes: number,
    readonly slots = 1,
  ) {
    if (!(bigBytes > 0) || !Number.isInteger(slots) || slots < 1)
      throw new RangeError(`BigBodyGate needs bigBytes > 0 and slots >= 1, got ${bigBytes}, ${slots}`);
  }

  /** Big bodies held at this moment (for tests and metrics). */
  get holding(): number {
    return this.held;
  }

  /** A claim for one request; `signal` aborts a wait. */
  hold(signal?: AbortSignal): BigBodyHold {
    let state: 'none' | 'waiting' | 'held' | 'released' = 'none';
    const acquire = () => this.acquire(signal);
    const free = () => this.free();
    return {
      bytes: this.bigBytes,
      async wait() {
        if (state !== 'none') return;
        state = 'waiting';
        await acquire();
        // Released while waiting (the caller gave up): hand the slot straight on.
        if ((state as string) === 'released') free();
        else state = 'held';
      },
      release() {
        if (state === 'held') free();
        state = 'released';
      },
    };
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (this.held < this.slots) {
      this.held++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const enter = () => {
        signal?.removeEventListener('abort', onAbort);
        this.held++;
        resolve();
      };
      const onAbort = () => {
        const i = this.queue.indexOf(enter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted === true) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(enter);
    });
  }

  private free(): void {
    this.held--;
    this.queue.shift()?.();
  }
}
