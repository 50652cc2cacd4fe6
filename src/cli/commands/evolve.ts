import type { Command } from 'commander';
import type { Config } from '../../config/env.js';
import { RedisUnavailableError } from '../../queue/connection.js';
import { enqueueEvolution } from '../../queue/enqueue.js';
import { openQueues } from '../../queue/queues.js';
import { coverage, dropRetired, swapVersion, type Coverage } from '../../warehouse/schema/evolution.js';
import { createPool } from '../../warehouse/pg.js';
import { postgresFailure } from './postgres-failure.js';
import { readVersions } from '../../warehouse/schema/versions.js';
import { CommandFailed, UsageError, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

interface EvolveFlags {
  readonly report?: string;
  readonly plan: boolean;
  readonly swap: boolean;
  readonly dropOld: boolean;
}

/** `adops evolve`: the versions of each report's table, and the steps of a change of its dimensions. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('evolve')
    .description(SUMMARIES.evolve)
    .option('--report <name>', 'only this report')
    .option('--plan', 'enqueue the periods the new version still lacks, newest first', false)
    .option('--swap', 'switch report_<name> and its bi_ views to the new version now, covered or not', false)
    .option('--drop-old', 'drop the tables of replaced versions', false)
    .addHelpText(
      'after',
      "\nChange a report's dimensions in its YAML and run `adops migrate`: the new shape gets a new table " +
        'version, loaded beside the old one (migrate enqueues its history, newest first). report_<name> and ' +
        'bi_<name> keep serving the old version until the new one covers every period the old one had; ' +
        'then they switch in one transaction (unless migrate ran with --no-swap-when-covered).',
    )
    .action(async (flags: EvolveFlags) => {
      const config = ctx.config();
      const jobs = ctx.jobs().reports;
      const reports = flags.report === undefined ? jobs : jobs.filter((r) => r.name === flags.report);
      if (flags.report !== undefined && reports.length === 0)
        throw new UsageError(`--report: no job definition is named "${flags.report}"`);
      const pool = createPool(config, { max: 2, logger: ctx.logger() });
      try {
        for (const report of reports) {
          if (flags.swap) {
            const client = await pool.connect();
            try {
              const swapped = await swapVersion(client, config.schema, report, { force: true });
              if (swapped !== undefined)
                ctx.stdout.write(`${report.name}: now serves version ${swapped.to} (was ${swapped.from})\n`);
            } finally {
              client.release();
            }
          }
          if (flags.dropOld) {
            const client = await pool.connect();
            try {
              for (const table of await dropRetired(client, config.schema, report.name))
                ctx.stdout.write(`${report.name}: dropped ${config.schema}.${table}\n`);
            } finally {
              client.release();
            }
          }
        }
        const states = (await Promise.all(reports.map((r) => coverage(pool, config.schema, r.name)))).filter(
          (c): c is Coverage => c !== undefined,
        );
        if (flags.plan) ctx.stdout.write(`${await planEvolution(config, states)}\n`);
        const versions = await readVersions(pool, config.schema);
        for (const report of reports) {
          const mine = versions.filter((v) => v.report === report.name);
          const state = states.find((c) => c.report === report.name);
          const line =
            state === undefined
              ? `${report.name}: version ${mine.find((v) => v.state === 'serving')?.version ?? 1}` +
                (mine.some((v) => v.state === 'retired')
                  ? ` (replaced: ${mine
                      .filter((v) => v.state === 'retired')
                      .map((v) => v.table)
                      .join(', ')})`
                  : '')
              : progressLine(state);
          ctx.stdout.write(`${line}\n`);
        }
      } catch (error) {
        throw postgresFailure(error);
      } finally {
        await pool.end();
      }
    });
}

/** `daily_campaign: version 1 -> 2, 12 of 30 periods in the new shape (next: 2026-01-19 ...)`. */
export function progressLine(c: Coverage): string {
  const next = c.missing
    .slice(0, 3)
    .map((p) => p.start)
    .join(', ');
  return (
    `${c.report}: version ${c.serving.version} -> ${c.building.version}, ${c.covered} of ${c.periods} periods ` +
    `in the new shape${c.missing.length > 0 ? ` (still to load, newest first: ${next}${c.missing.length > 3 ? ', ...' : ''})` : ', ready to switch'}`
  );
}

/** Enqueues what the building versions lack; a line saying what was done, or why not. */
export async function planEvolution(config: Config, states: readonly Coverage[]): Promise<string> {
  if (states.length === 0) return 'no report is evolving';
  let queues;
  try {
    queues = await openQueues(config);
  } catch (error) {
    if (!(error instanceof RedisUnavailableError)) throw error;
    throw new CommandFailed(`${error.message}; run adops evolve --plan once Redis answers`, { cause: error });
  }
  try {
    const pulls = await enqueueEvolution(queues.pulls, states);
    const added = pulls.filter((p) => p.added).length;
    return `enqueued ${added} pulls of the new shapes, newest first (${pulls.length - added} were already waiting)`;
  } finally {
    await queues.close();
  }
}
