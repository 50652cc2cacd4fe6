import type { Pool } from 'pg';
import { qualified } from '../pg.js';
import type { ProblemSummary } from './rows.js';

/** A running run with no page staged for this long is shown as interrupted. */
export const QUIET_AFTER_MS = 2 * 60_000;

/** The catalogue part of `adops status`. */
export interface EntitySyncStatus {
  /** The newest sync that wrote the catalogue, or null when none has. */
  readonly lastWritten: {
    readonly runId: string;
    readonly finishedAt: string;
    readonly result: Readonly<Record<string, number>>;
    readonly problems: ProblemSummary | null;
  } | null;
  /** A newer run that has not written: running now, interrupted (will resume), or failed. */
  readonly latest: {
    readonly runId: string;
    readonly state: 'running' | 'interrupted' | 'failed';
    readonly startedAt: string;
    readonly updatedAt: string;
    readonly tries: number;
    readonly requests: number;
    readonly campaignsDone: number;
    readonly campaignsTotal: number | null;
    readonly error: string | null;
  } | null;
}

interface RunRow {
  run_id: string;
  status: string;
  started_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  tries: number;
  requests: string;
  campaigns_done: number;
  campaigns_total: number | null;
  result: Record<string, number> | null;
  problems: ProblemSummary | null;
  error: string | null;
  quiet: boolean;
}

/** Reads the newest written sync run and any newer one that has not written. */
export async function entitySyncStatus(pool: Pool, schema: string): Promise<EntitySyncStatus> {
  const runs = qualified(schema, 'entity_sync_runs');
  const { rows } = await pool.query<RunRow>(
    `(SELECT *, updated_at < now() - make_interval(secs => $1::double precision / 1000) AS quiet
        FROM ${runs} WHERE status = 'written' ORDER BY finished_at DESC LIMIT 1)
     UNION ALL
     (SELECT *, updated_at < now() - make_interval(secs => $1::double precision / 1000) AS quiet
        FROM ${runs} ORDER BY started_at DESC LIMIT 1)`,
    [QUIET_AFTER_MS],
  );
  const written = rows.find((r) => r.status === 'written');
  const newest = rows.at(-1);
  const latest =
    newest !== undefined && newest.status !== 'written'
      ? {
          runId: newest.run_id,
          state:
            newest.status === 'failed'
              ? ('failed' as const)
              : newest.quiet
                ? ('interrupted' as const)
                : ('running' as const),
          startedAt: newest.started_at.toISOString(),
          updatedAt: newest.updated_at.toISOString(),
          tries: newest.tries,
          requests: Number(newest.requests),
          campaignsDone: newest.campaigns_done,
          campaignsTotal: newest.campaigns_total,
          error: newest.error,
        }
      : null;
  return {
    lastWritten:
      written === undefined
        ? null
        : {
            runId: written.run_id,
            finishedAt: (written.finished_at ?? written.updated_at).toISOString(),
            result: written.result ?? {},
            problems: written.problems,
          },
    latest,
  };
}
