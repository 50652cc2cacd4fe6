// A sync's progress as the job reports it and `adops sync --wait` draws it. Pure.

/** Progress of one try of a sync (the BullMQ job's progress value). */
export interface SyncProgress {
  readonly phase: 'campaigns' | 'creatives' | 'writing';
  /** When this try started (ms since the epoch). */
  readonly startedAt: number;
  /** HTTP requests this try made, retries included. */
  readonly requests: number;
  /** Campaigns whose creatives are listed (from the checkpoint or by this try). */
  readonly campaignsDone: number;
  /** Campaigns to list, once the campaign listing is complete. */
  readonly campaignsTotal: number | null;
  /** Campaigns that were already done from the checkpoint when this try started. */
  readonly resumed: number;
}

/**
 * Seconds left, from this try's own pace: campaigns taken from the checkpoint cost nothing, so
 * they are left out of the rate. Undefined until the total is known and one campaign is listed.
 */
export function etaSeconds(p: SyncProgress, now: number): number | undefined {
  if (p.campaignsTotal === null) return undefined;
  const left = Math.max(0, p.campaignsTotal - p.campaignsDone);
  if (left === 0) return 0;
  const listed = p.campaignsDone - p.resumed;
  const elapsed = now - p.startedAt;
  if (listed <= 0 || elapsed <= 0) return undefined;
  return ((elapsed / listed) * left) / 1000;
}

/** One line for a log or a terminal without a progress bar. */
export function progressLine(p: SyncProgress, now: number): string {
  const eta = etaSeconds(p, now);
  const total = p.campaignsTotal ?? '?';
  return (
    `sync ${p.phase}: ${p.campaignsDone}/${total} campaigns, ${p.requests} requests` +
    (p.resumed > 0 ? `, ${p.resumed} from the checkpoint` : '') +
    `, ETA ${eta === undefined ? '?' : `${Math.ceil(eta)}s`}`
  );
}

/** A progress value read back from BullMQ, or undefined when it is not a sync's progress. */
export function asSyncProgress(value: unknown): SyncProgress | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const phases: readonly unknown[] = ['campaigns', 'creatives', 'writing'];
  if (!phases.includes(v.phase) || !num(v.startedAt) || !num(v.requests) || !num(v.campaignsDone))
    return undefined;
  if (v.campaignsTotal !== null && !num(v.campaignsTotal)) return undefined;
  if (!num(v.resumed)) return undefined;
  return v as unknown as SyncProgress;
}

/**
 * Calls `emit` with the progress at most every `everyMs` (and always when forced), so a fast
 * sync does not send BullMQ an update per request.
 */
export function throttled(
  emit: (p: SyncProgress) => void,
  everyMs = 250,
): (p: SyncProgress, force?: boolean) => void {
  let last = 0;
  return (p, force = false) => {
    const now = Date.now();
    if (!force && now - last < everyMs) return;
    last = now;
    emit(p);
  };
}
