// One line per command of `adops`, read by `adops --help` without loading the commands themselves
// (each command module loads its dependencies only when it runs).

/** What each command does, as `--help` lists it. */
export const SUMMARIES = {
  migrate:
    'apply sql/ migrations in order, once each, under an advisory lock; create report_<name> tables and BI views',
  worker: 'process pulls until SIGTERM/SIGINT, then finish running pulls and stop',
  schedule:
    'upsert one job scheduler per job definition (cron in its time zone); remove those of deleted definitions',
  backfill:
    'enqueue one pull per report and period from --from to --to (periods loaded before are pulled again)',
  heal: 'enqueue every period of the last N days that has no successful load or whose last attempt failed',
  pull: 'pull one report straight to stdout (no queue, no database): rows on stdout, totals on stderr',
  sync:
    'export campaigns and creatives into Postgres (tables campaigns, creatives, campaign_zones): ' +
    'enqueues a sync for the workers and prints its job id',
  status: 'per report: last loaded period, missing and failed periods, queue counts, coverage grid',
  doctor:
    'probe the configured API server (reachability, TLS, auth forms, scopes, report params, gzip, ' +
    'clock, rate-limit headers) and print the settings to use',
  evolve:
    'show each report table version and the progress of a change of dimensions; --plan, --swap, --drop-old',
  replay: 're-flatten and reload the archived response of a load (report_raw), without calling the API',
  emulator: 'run the local API emulator (spec-faithful, deterministic reports, fault injection)',
  dashboard:
    'serve a web page (Bull Board) showing the BullMQ queues and their jobs; prints its URL as ' +
    'the first line of stdout and runs until Ctrl-C (SIGINT) or SIGTERM',
  demo:
    'run the whole pipeline on the embedded emulator: migrate, sync the catalogue, backfill the last days of ' +
    'every default report with an in-process worker, print status and three example BI queries',
} as const;

/** A command of `adops`. */
export type CommandName = keyof typeof SUMMARIES;
