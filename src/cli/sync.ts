// `adops sync`: the catalogue (campaigns, creatives) into Postgres, enqueued for a worker and
// optionally waited for, or run in this process with --direct.
import type { Command } from 'commander';
import { createApiClientFromConfig } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import { createLocalGate } from '../limits/limiter.js';
import { syncClientOptions, syncRetryFromConfig } from '../catalogue/read.js';
import { runEntitySync, type EntitySyncResult } from '../catalogue/sync.js';
import { DEFAULT_ACCOUNT, oneAccount, selectAccounts } from '../platform/config/accounts.js';
import { accountConfig, secretsOf } from '../platform/config/env.js';
import { enqueueEntitySync, SyncWaitError, waitForEntitySync } from '../catalogue/enqueue.js';
import { intOption, rethrowAs, SUMMARIES, withQueues, withWarehouse, type CliContext } from './context.js';
import {
  outageWatch,
  queueOutageOption,
  redisOutageAlias,
  outageSecondsOf,
  syncProgressView,
} from './progress.js';

interface SyncFlags {
  readonly wait: boolean;
  readonly direct: boolean;
  readonly timeout: number;
  readonly concurrency: number;
  readonly account?: string;
  readonly queueOutageSeconds?: number;
  readonly redisOutageSeconds?: number; // The old name of --queue-outage-seconds.
}

export function registerSync(program: Command, ctx: CliContext): void {
  program
    .command('sync')
    .description(SUMMARIES.sync)
    .option(
      '--wait',
      'wait for the sync to finish, showing its progress on stderr, and print its counts; exit 1 if it failed',
      false,
    )
    .option(
      '--timeout <seconds>',
      'with --wait: give up after this many seconds',
      intOption(1, 86_400),
      3_600,
    )
    .option(...queueOutageOption)
    .addOption(redisOutageAlias())
    .option('--direct', 'run the sync in this process instead of a worker (no Redis needed)', false)
    .option(
      '--account <name>',
      'only this account of ADOPS_ACCOUNTS_FILE (default: every account; --direct needs one when there are several)',
    )
    .option(
      '--concurrency <n>',
      'with --direct: campaigns whose creatives are listed at once',
      intOption(1, 64),
      4,
    )
    .addHelpText(
      'after',
      '\nA sync reads every campaign and their creatives, then writes them in one transaction: ' +
        'entities no longer returned get deleted_at set. A 429 waits for its Retry-After and ' +
        'faults are retried per request; a queued sync that dies with its worker resumes from ' +
        'the pages it had read. Reads ADOPS_BASE_URL, ADOPS_API_KEY (with --direct), ' +
        'DATABASE_URL, ADOPS_SCHEMA, REDIS_URL and ADOPS_QUEUE_PREFIX.',
    )
    .action((flags: SyncFlags) => (flags.direct ? runDirect(ctx, flags) : runQueued(ctx, flags)));
}

async function runDirect(ctx: CliContext, flags: SyncFlags): Promise<void> {
  const config = ctx.config();
  const logger = ctx.logger();
  // No Redis here: a 429 pauses this process' requests only.
  const gate = createLocalGate();
  const account = oneAccount(config.accounts, flags.account);
  const api = createApiClientFromConfig(accountConfig(config, account), logger, syncClientOptions(gate));
  const view = syncProgressView(ctx.stderr);
  const result = await withWarehouse(ctx, 2, (wh) =>
    runEntitySync({
      wh,
      account: account.name,
      api,
      logger,
      gate,
      retry: syncRetryFromConfig(config),
      campaignConcurrency: flags.concurrency,
      onProgress: (p) => view.update(p),
      secrets: secretsOf(config),
    }).catch(rethrowAs([ApiError], 'entity sync failed, nothing was written: ')),
  ).finally(async () => {
    view.stop();
    await api.close();
  });
  ctx.stdout.write(`${summary(result)}\n`);
}

async function runQueued(ctx: CliContext, flags: SyncFlags): Promise<void> {
  const accounts = selectAccounts(ctx.config().accounts, flags.account);
  await withQueues(
    ctx,
    async (queues) => {
      // One sync per account: each has its own catalogue.
      const enqueued = [];
      for (const account of accounts) {
        const { jobId, added } = await enqueueEntitySync(queues.syncs, account.name);
        const who =
          accounts.length > 1 || account.name !== DEFAULT_ACCOUNT ? ` of account ${account.name}` : '';
        ctx.stdout.write(
          added
            ? `enqueued entity sync${who} ${jobId}\n`
            : `an entity sync${who} is already queued or running: ${jobId}\n`,
        );
        enqueued.push({ jobId, who });
      }
      if (!flags.wait) return;
      for (const { jobId, who } of enqueued) {
        const [view, watch] = [syncProgressView(ctx.stderr), outageWatch(ctx, outageSecondsOf(ctx, flags))];
        const result = await waitForEntitySync(queues.syncs, jobId, {
          timeoutMs: flags.timeout * 1000,
          ...watch,
          onProgress: (p) => view.update(p),
        })
          .catch(
            watch.gaveUp(
              `entity sync job ${jobId}${who} to finish`,
              (store) =>
                `it goes on in a worker once ${store} is back; see \`adops status\`, or run \`adops sync\` again`,
            ),
          )
          .finally(view.stop);
        ctx.stdout.write(`${summary(result)}${who}\n`);
      }
    },
    ' (or run adops sync --direct)',
  ).catch(rethrowAs([SyncWaitError]));
}

/** The one stdout line of a finished sync; unreadable fields are pointed at `adops status`. */
export function summary(r: EntitySyncResult): string {
  const base = `synced ${r.campaigns} campaigns and ${r.creatives} creatives (${r.deleted} newly deleted, ${r.revived} revived)`;
  const problems = r.problems ?? 0;
  if (problems === 0) return base;
  const skipped = (r.skipped ?? 0) > 0 ? `, ${r.skipped} entities with an unreadable id skipped` : '';
  return `${base}; ${problems} fields could not be read${skipped}: see adops status`;
}
