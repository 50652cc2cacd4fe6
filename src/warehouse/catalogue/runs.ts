import type { ClientBase, Pool } from 'pg';
import { DEFAULT_ACCOUNT } from '../../config/accounts.js';
import { qualified, withClient, withTransaction } from '../pg.js';
import { stagedPages, type StagedPage } from './staging.js';
import type { ProblemSummary } from './rows.js';

/** Finished runs kept in entity_sync_runs (for `adops status` and debugging); older ones go. */
export const KEPT_RUNS = 100;

/** How a sync run starts: afresh, from its checkpoint, or already written by an earlier try. */
export type RunStart =
  | { readonly kind: 'new' }
  /** An earlier try of this run staged `pages`: they need not be read again. */
  | { readonly kind: 'resumed'; readonly pages: readonly StagedPage[]; readonly tries: number }
  /** The run's checkpoint was stale (or the run had failed): it starts again from nothing. */
  | { readonly kind: 'restarted'; readonly tries: number }
  /** An earlier try wrote the catalogue (and died before its job was marked done). */
  | { readonly kind: 'written'; readonly result: unknown };

/**
 * Opens run `runId`: creates it, or takes up the checkpoint of an earlier try of the same run (a
 * BullMQ retry, or the same job taken up after its worker died) when that run started less than
 * `staleAfterMs` ago; an older checkpoint is discarded, so old pages are never mixed into a
 * catalogue. Also drops runs nobody has staged a page for in `staleAfterMs` (abandoned) and
 * finished runs beyond the newest KEPT_RUNS.
 */
export async function openRun(
  pool: Pool,
  schema: string,
  runId: string,
  staleAfterMs: number,
  account: string = DEFAULT_ACCOUNT,
): Promise<RunStart> {
  const runs = qualified(schema, 'entity_sync_runs');
  const pages = qualified(schema, 'entity_sync_pages');
  const stale = 'now() - make_interval(secs => $2::double precision / 1000)';
  return withClient(pool, (client, markBroken) =>
    withTransaction(
      client,
      async () => {
        await client.query(
          `DELETE FROM ${runs} WHERE status = 'running' AND updated_at < ${stale} AND run_id <> $1`,
          [runId, staleAfterMs],
        );
        await client.query(
          `DELETE FROM ${runs} WHERE status <> 'running' AND run_id NOT IN (
             SELECT run_id FROM ${runs} WHERE status <> 'running' ORDER BY started_at DESC LIMIT $1)`,
          [KEPT_RUNS],
        );
        const { rows } = await client.query<{
          status: string;
          tries: number;
          stale: boolean;
          result: unknown;
        }>(
          `SELECT status, tries, started_at < ${stale} AS stale, result FROM ${runs} WHERE run_id = $1 FOR UPDATE`,
          [runId, staleAfterMs],
        );
        const run = rows[0];
        let start: RunStart;
        if (run === undefined) {
          await client.query(`INSERT INTO ${runs} (run_id, account) VALUES ($1, $2)`, [runId, account]);
          start = { kind: 'new' };
        } else if (run.status === 'written') {
          start = { kind: 'written', result: run.result };
        } else if (run.stale || run.status === 'failed') {
          await client.query(`DELETE FROM ${pages} WHERE run_id = $1`, [runId]);
          await client.query(
            `UPDATE ${runs} SET status = 'running', started_at = now(), updated_at = now(), finished_at = NULL,
                    tries = tries + 1, requests = 0, campaigns_done = 0, campaigns_total = NULL, error = NULL
              WHERE run_id = $1`,
            [runId],
          );
          start = { kind: 'restarted', tries: run.tries + 1 };
        } else {
          await client.query(`UPDATE ${runs} SET tries = tries + 1, updated_at = now() WHERE run_id = $1`, [
            runId,
          ]);
          start = { kind: 'resumed', pages: await stagedPages(client, schema, runId), tries: run.tries + 1 };
        }
        return start;
      },
      { onRollbackError: markBroken },
    ),
  );
}

/**
 * Marks run `runId` written with its result and problems, and drops its checkpoint. Called inside
 * the catalogue's write transaction: the catalogue and the end of its checkpoint commit together.
 */
export async function finishRun(
  client: ClientBase,
  schema: string,
  runId: string,
  result: object,
  problems: ProblemSummary,
): Promise<void> {
  await client.query(
    `UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET status = 'written', finished_at = now(), updated_at = now(), result = $2,
            problem_count = $3, problems = $4, error = NULL
      WHERE run_id = $1`,
    [runId, JSON.stringify(result), problems.count, JSON.stringify(problems)],
  );
  await client.query(`DELETE FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1`, [runId]);
}

/** Marks run `runId` failed for good with `reason` and drops its checkpoint (it will not resume). */
export async function failRun(pool: Pool, schema: string, runId: string, reason: string): Promise<void> {
  await pool.query(
    `WITH gone AS (DELETE FROM ${qualified(schema, 'entity_sync_pages')} WHERE run_id = $1)
     UPDATE ${qualified(schema, 'entity_sync_runs')}
        SET status = 'failed', finished_at = now(), updated_at = now(), error = $2
      WHERE run_id = $1`,
    [runId, reason],
  );
}
