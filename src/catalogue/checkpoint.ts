// A sync's checkpoint as the reader sees it: what earlier tries staged, per listing, and a buffer
// that stages new pages in batches (a statement per page would cost a round trip per request).
import type { StagedPage } from '../warehouse/catalogue/staging.js';

/** Where a listing stands after what was staged: its items so far and where it goes on. */
export interface ListingState {
  readonly items: readonly unknown[];
  /** Offset of the next page to read. */
  readonly next: number;
  /** The listing is complete: nothing left to read. */
  readonly last: boolean;
  /** The creative listing answered 404 (campaign deleted during the sync). */
  readonly gone: boolean;
  /** Pages taken from the checkpoint. */
  readonly pages: number;
}

const EMPTY: ListingState = { items: [], next: 0, last: false, gone: false, pages: 0 };

/** When buffered pages are staged: after this many pages, or this long after the first. */
export interface FlushPolicy {
  readonly pages: number;
  readonly ms: number;
}

export const DEFAULT_FLUSH: FlushPolicy = { pages: 25, ms: 250 };

/**
 * The pages of each listing staged by earlier tries, folded into where each listing stands. Only
 * an unbroken run of pages from offset 0 counts (each page starts where the one before ended);
 * anything after a gap is read again. Pure.
 */
export function foldStaged(pages: readonly StagedPage[]): Map<number, ListingState> {
  const byListing = new Map<number, StagedPage[]>();
  for (const p of pages) byListing.set(p.listing, [...(byListing.get(p.listing) ?? []), p]);
  const out = new Map<number, ListingState>();
  for (const [listing, list] of byListing) {
    if (list.some((p) => p.gone)) {
      out.set(listing, { items: [], next: 0, last: true, gone: true, pages: 1 });
      continue;
    }
    const items: unknown[] = [];
    let next = 0;
    let last = false;
    let used = 0;
    for (const p of [...list].sort((a, b) => a.offset - b.offset)) {
      if (p.offset !== next || last) break;
      items.push(...p.items);
      next += p.size;
      last = p.last;
      used++;
    }
    out.set(listing, { items, next, last, gone: false, pages: used });
  }
  return out;
}

/**
 * The checkpoint of one run: `listing(id)` says what need not be read again; `add(page)` stages a
 * new page, batched by `policy`. A failed staging fails the next add or flush (the sync then
 * fails as a whole: without its checkpoint it could not resume). Call `flush()` before relying
 * on the pages being staged, and in any case at the end (it stops the timer).
 */
export class Checkpoint {
  private readonly staged: Map<number, ListingState>;
  private buffer: StagedPage[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly write: (pages: readonly StagedPage[]) => Promise<void>,
    staged: readonly StagedPage[],
    private readonly policy: FlushPolicy = DEFAULT_FLUSH,
  ) {
    this.staged = foldStaged(staged);
  }

  /** What earlier tries staged for `listing`. */
  listing(listing: number): ListingState {
    return this.staged.get(listing) ?? EMPTY;
  }

  /** Pages taken from earlier tries, over every listing. */
  get resumedPages(): number {
    let n = 0;
    for (const s of this.staged.values()) n += s.pages;
    return n;
  }

  /** Buffers `page` for staging; resolves once it is buffered (or, when the batch is full, staged). */
  async add(page: StagedPage): Promise<void> {
    if (this.failure !== undefined) throw this.failure.error;
    this.buffer.push(page);
    if (this.buffer.length >= this.policy.pages) return this.flush();
    this.timer ??= setTimeout(() => void this.flush().catch(() => undefined), this.policy.ms);
  }

  /** Stages everything buffered; resolves when every staging started so far is done. */
  flush(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0)
      this.chain = this.chain.then(async () => {
        if (this.failure !== undefined) return;
        try {
          await this.write(batch);
        } catch (error) {
          this.failure = { error };
        }
      });
    return this.chain.then(() => {
      if (this.failure !== undefined) throw this.failure.error;
    });
  }
}
