import type { Command } from 'commander';
import { DEFAULT_ACCOUNT, selectAccounts } from '../../config/accounts.js';
import { accountConfig, requireApiKey, requireBaseUrl, secretsOf } from '../../config/env.js';
import { renderJson, renderText } from '../../doctor/render.js';
import { runProbes } from '../../doctor/probes.js';
import { decide } from '../../doctor/verdict.js';
import { redactSecrets } from '../../log/redact.js';
import { CommandFailed, type CliContext } from '../context.js';
import { SUMMARIES } from './summaries.js';

interface DoctorFlags {
  readonly json: boolean;
  readonly account?: string;
}

/** `adops doctor`: probe the configured server and print the settings a pull needs. */
export function register(program: Command, ctx: CliContext): void {
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
    const baseUrl = requireBaseUrl(config);
    const apiKey = requireApiKey(config);
    const observations = await runProbes({
      baseUrl,
      apiKey,
      configured: { auth: config.auth, reportParams: config.reportParams },
      // A doctor should answer in seconds: a server that takes longer to connect is a finding.
      connectTimeoutMs: Math.min(config.http.connectTimeoutMs, 10_000),
    });
    const verdict = decide(observations, Date.now());
    const secrets = secretsOf(all);
    // An account of the accounts file takes its settings in its own entry: the variables would
    // only change the default of every account that leaves them out.
    const target =
      all.accountsFile === undefined ? undefined : { account: account.name, file: all.accountsFile };
    ctx.stdout.write(
      flags.json
        ? renderJson(observations, verdict, secrets, target)
        : renderText(observations, verdict, secrets, target),
    );
    if (!verdict.ok)
      failed.push(
        redactSecrets(`${named ? `account ${account.name}: ` : ''}${verdict.problems.join('; ')}`, secrets),
      );
  }
  if (failed.length > 0) throw new CommandFailed(`doctor: a pull cannot work: ${failed.join('; ')}`);
}
