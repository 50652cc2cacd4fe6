// A sync's checkpoint as the reader sees it (staged in batches), and its progress for `adops sync --wait`.
import { z } from 'zod';

/** One staged page of a listing: new items, `size` items returned, whether it is last, `gone`: 404. */
export interface StagedPage {
  readonly listing: number;
  readonly offset: number;
  readonly items: readonly unknown[];
  readonly size: number;
  readonly last: boolean;
  readonly gone: boolean;
}

/** Where a listing stands after what was staged: items, next offset, complete or `gone`, pages used. */
interface ListingState {
  readonly items: readonly unknown[];
  readonly next: number;
  readonly last: boolean;
  readonly gone: boolean;
  readonly pages: number;
}

const EMPTY: ListingState = { items: [], next: 0, last: false, gone: false, pages: 0 };

/** When buffered pages are staged: after this many pages, or this long after the first. */
export type FlushPolicy = { readonly pages: number; readonly ms: number };

/** Each listing's staged pages folded into where it stands: only an unbroken run from offset 0 counts. */
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

/** One run's checkpoint: `listing(id)` to skip, `add(page)` to stage in batches, `flush()` at the end. */
export class Checkpoint {
  private readonly staged: Map<number, ListingState>;
  private buffer: StagedPage[] = [];
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failure: { error: unknown } | undefined;

  constructor(
    private readonly write: (pages: readonly StagedPage[]) => Promise<unknown>,
    staged: readonly StagedPage[],
    private readonly policy: FlushPolicy = { pages: 25, ms: 250 },
  ) {
    this.staged = foldStaged(staged);
  }

  listing(listing: number): ListingState {
    return this.staged.get(listing) ?? EMPTY;
  }

  get resumedPages(): number {
    return [...this.staged.values()].reduce((n, s) => n + s.pages, 0);
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

/** Progress of one try of a sync (the job's progress value); `resumed`: campaigns from the checkpoint. */
export interface SyncProgress {
  readonly phase: 'campaigns' | 'creatives' | 'writing';
  readonly startedAt: number;
  readonly requests: number;
  readonly campaignsDone: number;
  readonly campaignsTotal: number | null;
  readonly resumed: number;
}

/** Seconds left at this try's own pace (resumed campaigns cost nothing); undefined until known. */
export function etaSeconds(p: SyncProgress, now: number): number | undefined {
  if (p.campaignsTotal === null) return undefined;
  const left = Math.max(0, p.campaignsTotal - p.campaignsDone);
  if (left === 0) return 0;
  const listed = p.campaignsDone - p.resumed;
  const elapsed = now - p.startedAt;
  if (listed <= 0 || elapsed <= 0) return undefined;
  return ((elapsed / listed) * left) / 1000;
}

export function progressLine(p: SyncProgress, now: number): string {
  const eta = etaSeconds(p, now);
  const total = p.campaignsTotal ?? '?';
  return (
    `sync ${p.phase}: ${p.campaignsDone}/${total} campaigns, ${p.requests} requests` +
    (p.resumed > 0 ? `, ${p.resumed} from the checkpoint` : '') +
    `, ETA ${eta === undefined ? '?' : `${Math.ceil(eta)}s`}`
  );
}

const SYNC_PROGRESS = z.object({
  phase: z.enum(['campaigns', 'creatives', 'writing']),
  startedAt: z.number(),
  requests: z.number(),
  campaignsDone: z.number(),
  campaignsTotal: z.number().nullable(),
  resumed: z.number(),
});

/** A progress value read back from BullMQ, or undefined when it is not a sync's progress. */
export function asSyncProgress(value: unknown): SyncProgress | undefined {
  return SYNC_PROGRESS.safeParse(value).data;
}

/** Calls `emit` at most every `everyMs` (always when forced): not an update per request. */
export function throttled(emit: (p: SyncProgress) => void, everyMs = 250) {
  let last = 0;
  return (p: SyncProgress, force = false) => {
    const now = Date.now();
    if (!force && now - last < everyMs) return;
    last = now;
    emit(p);
  };
}
