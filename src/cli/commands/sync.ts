import { QueueEvents } from 'bullmq';
import { InvalidArgumentError, type Command } from 'commander';
import { createApiClientFromConfig } from '../../api/client.js';
import { ApiError } from '../../api/errors.js';
import { enqueueEntitySync, SyncWaitError, waitForEntitySync } from '../../entities/enqueue.js';
import { runEntitySync, type EntitySyncResult } from '../../entities/sync.js';
import { closeConnection, RedisUnavailableError, workerConnection } from '../../queue/connection.js';
import { ENTITY_QUEUE } from '../../queue/names.js';
import { openQueues } from '../../queue/queues.js';
import { EntityFieldError } from '../../warehouse/entities/errors.js';
import { createPool } from '../../warehouse/pool.js';
import { CommandFailed, type CliContext } from '../context.js';

interface SyncFlags {
  readonly wait: boolean;
  readonly direct: boolean;
  readonly timeout: number;
  readonly concurrency: number;
}

/** `adops sync`: export campaigns and creatives into Postgres, through the queue or in-process. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('sync')
    .description(
      'export campaigns and creatives into Postgres (tables campaigns, creatives, campaign_zones): ' +
        'enqueues a sync for the workers and prints its job id',
    )
    .option('--wait', 'wait for the sync to finish and print its counts; exit 1 if it failed', false)
    .option('--timeout <seconds>', 'with --wait: give up after this many seconds', whole(1, 86_400), 3_600)
    .option('--direct', 'run the sync in this process instead of a worker (no Redis needed)', false)
    .option(
      '--concurrency <n>',
      'with --direct: campaigns whose creatives are listed at once',
      whole(1, 64),
      4,
    )
    .addHelpText(
      'after',
      '\nA sync reads every campaign and their creatives, then writes them in one transaction: ' +
        'entities no longer returned get deleted_at set. Reads ADOPS_BASE_URL, ADOPS_API_KEY (with ' +
        '--direct), DATABASE_URL, ADOPS_SCHEMA, REDIS_URL and ADOPS_QUEUE_PREFIX.',
    )
    .action((flags: SyncFlags) => (flags.direct ? runDirect(ctx, flags) : runQueued(ctx, flags)));
}

async function runDirect(ctx: CliContext, flags: SyncFlags): Promise<void> {
  const config = ctx.config();
  const logger = ctx.logger();
  const api = createApiClientFromConfig(config, logger);
  const pool = createPool(config, { max: 2, logger });
  try {
    const result = await runEntitySync({
      pool,
      schema: config.schema,
      api,
      logger,
      campaignConcurrency: flags.concurrency,
    });
    ctx.stdout.write(`${summary(result)}\n`);
  } catch (error) {
    if (error instanceof ApiError || error instanceof EntityFieldError)
      throw new CommandFailed(`entity sync failed, nothing was written: ${error.message}`, { cause: error });
    throw error;
  } finally {
    await pool.end();
    await api.close();
  }
}

async function runQueued(ctx: CliContext, flags: SyncFlags): Promise<void> {
  const config = ctx.config();
  let queues;
  try {
    queues = await openQueues(config);
  } catch (error) {
    if (error instanceof RedisUnavailableError)
      throw new CommandFailed(`${error.message} (or run adops sync --direct)`, { cause: error });
    throw error;
  }
  let events: QueueEvents | undefined;
  const eventsRedis = flags.wait ? workerConnection(config) : undefined;
  try {
    if (eventsRedis !== undefined) {
      // Listening before the job exists: a fast worker's completion cannot slip past.
      events = new QueueEvents(ENTITY_QUEUE, { connection: eventsRedis, prefix: config.queue.prefix });
      events.on('error', () => undefined);
      await events.waitUntilReady();
    }
    const { jobId, added } = await enqueueEntitySync(queues.syncs);
    ctx.stdout.write(
      added ? `enqueued entity sync ${jobId}\n` : `an entity sync is already queued or running: ${jobId}\n`,
    );
    if (events === undefined) return;
    const result = await waitForEntitySync(queues.syncs, events, jobId, flags.timeout * 1000);
    ctx.stdout.write(`${summary(result)}\n`);
  } catch (error) {
    if (error instanceof SyncWaitError) throw new CommandFailed(error.message, { cause: error });
    throw error;
  } finally {
    await events?.close().catch(() => undefined);
    if (eventsRedis !== undefined) await closeConnection(eventsRedis);
    await queues.close();
  }
}

function summary(r: EntitySyncResult): string {
  return `synced ${r.campaigns} campaigns and ${r.creatives} creatives (${r.deleted} newly deleted, ${r.revived} revived)`;
}

function whole(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return Number(value);
  };
}
