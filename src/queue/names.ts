/** Queue of report pulls: one job per report definition x period. */
export const REPORT_QUEUE = 'report-pulls';
/** Queue of catalogue (campaigns, creatives) syncs. */
export const ENTITY_QUEUE = 'entity-sync';
/**
 * Queue of scheduler ticks. A BullMQ job scheduler cannot deduplicate the jobs it creates, so each
 * tick is only a trigger: its processor plans the window and enqueues the real, deduplicated pulls.
 */
export const TICK_QUEUE = 'report-ticks';

/** Job name of a report pull in REPORT_QUEUE. */
export const PULL_JOB = 'pull';
/** Job name of a scheduler tick in TICK_QUEUE. */
export const TICK_JOB = 'tick';
/** Job name of a catalogue sync in ENTITY_QUEUE. */
export const SYNC_JOB = 'sync';

/**
 * Id of the job scheduler of a job definition (of one account other than `default`, for a
 * catalogue sync: `...@account`); the prefix tells ours from anyone else's.
 */
export function schedulerId(kind: 'report' | 'entities', name: string, account?: string): string {
  return account === undefined || account === 'default'
    ? `adops-${kind}-${name}`
    : `adops-${kind}-${name}@${account}`;
}

/** The definition a scheduler id belongs to, or undefined when the id is not one of ours. */
export function parseSchedulerId(
  id: string,
): { kind: 'report' | 'entities'; name: string; account?: string } | undefined {
  const m = /^adops-(report|entities)-([a-z][a-z0-9_]*)(?:@([a-z][a-z0-9_]*))?$/.exec(id);
  if (m === null) return undefined;
  return {
    kind: m[1] as 'report' | 'entities',
    name: m[2] as string,
    ...(m[3] === undefined ? {} : { account: m[3] }),
  };
}

/** Queue of webhook work: signed event deliveries and the periodic freshness evaluation. */
export const WEBHOOK_QUEUE = 'webhooks';
/** Job name of a freshness evaluation (report.late / report.fresh) in WEBHOOK_QUEUE. */
export const FRESHNESS_JOB = 'freshness';
/** Id of the job scheduler of freshness evaluations (outside the report/entities ids of `adops schedule`). */
export const FRESHNESS_SCHEDULER = 'adops-webhooks-freshness';
