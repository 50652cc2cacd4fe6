// `npm run bench`: the load path against the psql COPY limit and a naive loader, the emulator's
// serving rate, and a backfill through the queue; prints a table and writes bench/results.json.
// The only place the bench reads process.env and process.argv.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { runBackfill } from './backfill/index.js';
import { runLoadSection, type LoadSectionResult } from './load/index.js';
import { runParserSection } from './parser/index.js';
import { runSyncSection } from './sync/index.js';
import { runCliSection } from './cli/index.js';
import { runMemorySection } from './memory/index.js';
import { renderAccountsBackfill, runAccountsBackfill } from './scale/accounts-backfill.js';
import { runBiPartitions } from './scale/bi-partitions.js';
import { renderHistoryScale, runEnqueueScale, runHistoryScale } from './scale/history.js';
import { runPullSection } from './pull/index.js';
import { renderRequests, requestsTargets, runRequestsSection } from './requests/index.js';
import { installInterruptHandler } from './cleanup.js';
import { describeMachine } from './machine.js';
import { BenchUsageError, parseBenchOptions, type BenchOptions } from './options.js';
import { summarizeProfiles } from './profile.js';
import {
  bestBackfill,
  checkTargets,
  renderResults,
  summarizeBackfill,
  summarizeCapacity,
  summarizeCli,
  summarizeLoad,
  summarizeMemory,
  type BackfillSummary,
  type Results,
} from './results.js';

/** Runs of each backfill scenario; the best counts (a shared machine only ever slows a run down). */
const BACKFILL_ROUNDS = 2;

const say = (line: string) => process.stderr.write(`${line}\n`);

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  try {
    await redis.connect();
    return /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?';
  } finally {
    redis.disconnect();
  }
}

async function run(o: BenchOptions): Promise<Results> {
  const machine = await describeMachine(o.adminUrl, await redisVersion(o.redisUrl));
  let loaded: LoadSectionResult | undefined;
  if (o.sections.has('load') || o.sections.has('emulator')) loaded = await runLoadSection(o, say);
  const load = loaded?.load === undefined ? undefined : summarizeLoad(loaded.load);
  if (loaded?.load?.profileDir !== undefined) say(await summarizeProfiles(loaded.load.profileDir, 25));
  const parser = o.sections.has('parser') ? await runParserSection(o, say) : undefined;
  const sync = o.sections.has('sync') ? await runSyncSection(o, say) : undefined;
  const cli = o.sections.has('cli') ? summarizeCli(await runCliSection(o, say)) : undefined;
  const memory = o.sections.has('memory') ? summarizeMemory(await runMemorySection(o, say)) : undefined;
  const pull = o.sections.has('pull') ? await runPullSection(o, say) : undefined;
  const requests = o.sections.has('requests') ? await runRequestsSection(o, say) : undefined;
  let backfill: Results['backfill'];
  if (o.sections.has('backfill')) {
    const profileDir = o.profile ? resolve(join(o.cacheDir, 'profiles-backfill')) : undefined;
    const scenario = async (failRate: number, label: string) => {
      const runs: BackfillSummary[] = [];
      for (let round = 0; round < BACKFILL_ROUNDS; round++) {
        say(`backfill ${label}, round ${round + 1} of ${BACKFILL_ROUNDS}...`);
        const run = summarizeBackfill(
          await runBackfill(o, failRate, say, round === 0 && failRate === 0 ? profileDir : undefined),
          machine.cpus,
        );
        say(`  wall ${(run.wallMs / 1000).toFixed(2)} s, ideal ${(run.idealMs / 1000).toFixed(2)} s`);
        runs.push(run);
      }
      return bestBackfill(runs);
    };
    const clean = await scenario(0, 'without faults');
    if (profileDir !== undefined) say(await summarizeProfiles(profileDir, 25));
    const faulty = await scenario(o.failRate, `with ${Math.round(o.failRate * 100)}% injected 500s`);
    say('backfill capacity: the clean backfill with no latency...');
    const capacity = summarizeCapacity(
      await runBackfill({ ...o, latencyMs: 0 }, 0, say),
      o.workers * o.concurrency,
      o.latencyMs,
    );
    backfill = { clean, faulty, capacity };
  }
  const scale = o.scale
    ? {
        history: await runHistoryScale(o, say),
        enqueue: await runEnqueueScale(o, say),
        biQuery: await runBiPartitions(o, say),
        accountsBackfill: await runAccountsBackfill(o, say),
      }
    : undefined;
  return {
    generatedAt: new Date().toISOString(),
    machine,
    options: {
      rows: o.rows,
      days: o.days,
      naiveSample: o.naiveSample,
      workers: o.workers,
      concurrency: o.concurrency,
      latencyMs: o.latencyMs,
      failRate: o.failRate,
      seed: o.seed,
    },
    load,
    parser,
    sync,
    cli,
    memory,
    pull,
    requests,
    emulator:
      loaded === undefined
        ? undefined
        : {
            ...loaded.emulator,
            overOurLoad:
              load === undefined ? undefined : loaded.emulator.itemsPerSecond / load.ours.rowsPerSecond,
          },
    backfill,
    scale,
    targets: [
      ...checkTargets(load, backfill?.clean, sync, cli, memory, pull),
      ...(requests === undefined ? [] : requestsTargets(requests)),
    ],
  };
}

/** The JSON as the repository's Prettier would write it (so `npm run lint` passes), when Prettier is installed. */
async function formatJson(text: string, file: string): Promise<string> {
  try {
    const prettier = await import('prettier');
    const config = (await prettier.resolveConfig(file)) ?? {};
    return await prettier.format(text, { ...config, parser: 'json', filepath: file });
  } catch {
    return text; // a production install has no Prettier: plain JSON is fine
  }
}

async function main(): Promise<number> {
  let options: BenchOptions;
  try {
    options = parseBenchOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (error instanceof BenchUsageError) {
      say(error.message);
      return 2;
    }
    throw error;
  }
  installInterruptHandler(say);
  const results = await run(options);
  await mkdir(dirname(options.resultsFile), { recursive: true });
  await writeFile(
    options.resultsFile,
    await formatJson(`${JSON.stringify(results, null, 2)}\n`, options.resultsFile),
  );
  console.log(renderResults(results));
  if (results.requests !== undefined) console.log(`\n${renderRequests(results.requests)}`);
  if (results.scale !== undefined)
    console.log(`\n${renderHistoryScale(results.scale.history, results.scale.enqueue)}`);
  if (results.scale?.accountsBackfill !== undefined)
    console.log(`\n${renderAccountsBackfill(results.scale.accountsBackfill)}`);
  console.log(`\nresults written to ${options.resultsFile}`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    say(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 1;
  },
);
