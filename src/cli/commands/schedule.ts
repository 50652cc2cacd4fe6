import type { Command } from 'commander';
import { listSchedulers, syncSchedulers } from '../../queue/scheduler.js';
import type { CliContext } from '../context.js';
import { open } from './backfill.js';
import { SUMMARIES } from './summaries.js';

/** `adops schedule`: one BullMQ job scheduler per job definition; safe to run on every deploy. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('schedule')
    .description(SUMMARIES.schedule)
    .addHelpText(
      'after',
      '\nRunning it again changes nothing. Each report tick pulls yesterday and its lookback_days ' +
        'periods, plus missing or failed periods of the last ADOPS_HEAL_DAYS days. Reads ' +
        'ADOPS_JOBS_DIR, REDIS_URL and ADOPS_QUEUE_PREFIX.',
    )
    .action(async () => {
      const jobs = ctx.jobs();
      const queues = await open(ctx);
      try {
        const r = await syncSchedulers(queues, jobs, ctx.config().accounts);
        const verb = new Map<string, string>();
        for (const [word, ids] of [
          ['created', r.created],
          ['updated', r.updated],
          ['unchanged', r.unchanged],
        ] as const)
          for (const id of ids) verb.set(id, word);
        for (const s of await listSchedulers(queues))
          ctx.stdout.write(
            `${verb.get(s.id) ?? 'kept'} ${s.id}: "${s.cron ?? '?'}" ${s.timezone ?? 'UTC'}, next ${s.next ?? '?'}\n`,
          );
        for (const id of r.removed) ctx.stdout.write(`removed ${id}\n`);
        ctx.stdout.write(
          `${r.created.length} created, ${r.updated.length} updated, ${r.unchanged.length} unchanged, ${r.removed.length} removed\n`,
        );
      } finally {
        await queues.close();
      }
    });
}
