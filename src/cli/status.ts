// The commands that look before or after a pull: `adops status` (what is loaded, missing and failed; --check
// for monitoring) and `adops doctor` (the configured server probed, and the settings a pull needs).
import type { Command } from 'commander';
import { DEFAULT_ACCOUNT, selectAccounts } from '../platform/config/accounts.js';
import {
  accountConfig,
  requireApiKey,
  requireBaseUrl,
  secretsOf,
  type Config,
} from '../platform/config/env.js';
import { runProbes } from '../doctor/probes.js';
import { renderJson, renderText } from '../doctor/render.js';
import { decide } from '../doctor/verdict.js';
import type { Logger } from '../platform/log/logger.js';
import { redactSecrets } from '../platform/log/redact.js';
import { checkProblems, renderStatus } from '../status/render.js';
import { collectStatus, readUnconfiguredAccounts, type Status } from '../status/status.js';
import {
  CommandFailed,
  intOption,
  SUMMARIES,
  usageError,
  withWarehouse,
  type CliContext,
} from './context.js';

interface StatusFlags {
  readonly days?: number;
  readonly json: boolean;
  readonly check: boolean;
  readonly account?: string;
}

export function registerStatus(program: Command, ctx: CliContext): void {
  program
    .command('status')
    .description(SUMMARIES.status)
    .option('--days <n>', 'days shown (default ADOPS_HEAL_DAYS, 30)', intOption(1, 366, 'days'))
    .option('--json', 'print the status as JSON for scripts', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account, grouped)')
    .option(
      '--check',
      'for monitoring and cron: one line per late report and per missing, failed, unreconciled or disagreeing period; ' +
        'exit 0 when all is fresh and complete in the window, 1 otherwise',
      false,
    )
    .addHelpText(
      'after',
      '\nA report is late when its newest loaded period ended longer ago than its freshness ' +
        '(`freshness: 30h` in its job YAML; default: its period plus its schedule interval, 48h for a ' +
        'nightly daily report). A missing period counts once it is that old or older than a loaded one.',
    )
    .action(async (flags: StatusFlags) => {
      if (flags.check && flags.json) throw usageError('--check and --json cannot be combined: choose one');
      const config = ctx.config();
      const jobs = ctx.jobs();
      const accounts = selectAccounts(config.accounts, flags.account);
      // Postgres is queried while the queues connect; without Redis the warehouse half is still worth it.
      const queues = queueCounts(config, ctx.logger());
      const status = await withWarehouse(ctx, 4, async (wh) => {
        const [collected, unconfigured] = await Promise.all([
          collectStatus(wh, jobs, queues.counts, flags.days ?? config.healDays, new Date(), accounts).finally(
            queues.close,
          ),
          // Every account holding rows is named, configured or not; --account asks about one only.
          flags.account === undefined
            ? readUnconfiguredAccounts(
                wh,
                config.accounts.map((a) => a.name),
              )
            : [],
        ]);
        return unconfigured.length === 0 ? collected : { ...collected, unconfiguredAccounts: unconfigured };
      });
      if (flags.check) return check(ctx, status);
      ctx.stdout.write(flags.json ? `${JSON.stringify(status, null, 2)}\n` : renderStatus(status));
    });
}

/** The queues, opened while Postgres is queried: `counts` resolves to them, or undefined when unreachable. */
function queueCounts(config: Config, logger: Logger) {
  // Closed before the queues answered (the warehouse half failed first): say nothing about them.
  let closed = false;
  const queues = import('../platform/queue/queues.js').then(({ openQueues }) => openQueues(config));
  return {
    counts: queues.catch((error: unknown) => {
      if (!closed) logger.warn(error instanceof Error ? error.message : String(error));
      return undefined;
    }),
    close: async () => {
      closed = true;
      await (await queues.catch(() => undefined))?.close();
    },
  };
}

/** Prints one line per problem; throws CommandFailed (exit 1) when there is any. */
function check(ctx: CliContext, status: Status): void {
  const problems = checkProblems(status);
  if (problems.length === 0) {
    ctx.stdout.write(
      `ok: ${status.reports.length} reports fresh and complete over the last ${status.days} days\n`,
    );
    return;
  }
  for (const p of problems) ctx.stdout.write(`${p.line}\n`);
  const reports = new Set(problems.filter((p) => p.kind !== 'queues').map((p) => p.report));
  const where = [
    ...(problems.some((p) => p.kind === 'queues') ? ['the queues'] : []),
    ...(reports.size > 0 ? [`${reports.size} report(s): ${[...reports].join(', ')}`] : []),
  ];
  throw new CommandFailed(
    `${problems.length} problem(s) in ${where.join(' and ')}; ` +
      '`adops heal` re-pulls missing and failed periods',
  );
}

type DoctorFlags = Pick<StatusFlags, 'json' | 'account'>;

export function registerDoctor(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(SUMMARIES.doctor)
    .option('--json', 'print one JSON object for scripts instead of the table', false)
    .option('--account <name>', 'only this account of ADOPS_ACCOUNTS_FILE (default: every account)')
    .addHelpText(
      'after',
      '\nExit codes: 0 a pull can work (the settings follow "Set these:"), 1 it cannot (the reasons ' +
        'are printed), 2 bad configuration. Reads ADOPS_BASE_URL, ADOPS_API_KEY(_FILE), ADOPS_AUTH, ' +
        'ADOPS_REPORT_PARAMS and ADOPS_HTTP_CONNECT_TIMEOUT_MS, or with ADOPS_ACCOUNTS_FILE each ' +
        "account's entry, whose lines to paste it then prints instead of variables; needs no Postgres " +
        'or Redis. About a dozen small GET requests; the key is never printed.',
    )
    .action((flags: DoctorFlags) => doctor(ctx, flags));
}

async function doctor(ctx: CliContext, flags: DoctorFlags): Promise<void> {
  const all = ctx.config();
  const accounts = selectAccounts(all.accounts, flags.account);
  const failed: string[] = [];
  // Each account is its own server and key: probed one after the other, each with its own verdict.
  for (const account of accounts) {
    const config = accountConfig(all, account);
    const named = accounts.length > 1 || account.name !== DEFAULT_ACCOUNT;
    if (named && !flags.json)
      ctx.stdout.write(`${accounts.indexOf(account) > 0 ? '\n' : ''}account ${account.name}:\n`);
    const observations = await runProbes({
      baseUrl: requireBaseUrl(config),
      apiKey: requireApiKey(config),
      configured: { auth: config.auth, reportParams: config.reportParams },
      // A doctor should answer in seconds: a server that takes longer to connect is a finding.
      connectTimeoutMs: Math.min(config.http.connectTimeoutMs, 10_000),
    });
    const verdict = decide(observations, Date.now());
    const secrets = secretsOf(all);
    // An accounts-file account takes its settings from its entry: variables only change the defaults.
    const target =
      all.accountsFile === undefined ? undefined : { account: account.name, file: all.accountsFile };
    ctx.stdout.write((flags.json ? renderJson : renderText)(observations, verdict, secrets, target));
    if (!verdict.ok)
      failed.push(
        redactSecrets(`${named ? `account ${account.name}: ` : ''}${verdict.problems.join('; ')}`, secrets),
      );
  }
  if (failed.length > 0) throw new CommandFailed(`doctor: a pull cannot work: ${failed.join('; ')}`);
}
