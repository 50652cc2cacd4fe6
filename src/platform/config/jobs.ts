// Job definitions: ADOPS_JOBS_DIR's YAML files checked, and the live view a worker follows without a restart.
import { lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CronExpressionParser } from 'cron-parser';
import { isTimeZone, planDateProblem } from '../dates/calendar.js';
import { isPeriodUnit, PERIOD_UNITS, type PeriodUnit } from '../dates/periods.js';
import { DIMENSIONS, isDimension, type Dimension } from './dimensions.js';
import { isWhole, parseConfigYaml } from './yaml.js';
import { readBoundedFile, ConfigError, errnoCode } from './files.js';

export const REPORT_NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** Names whose report_<name> would land on a system table (report_loads, ...) or its indexes (report_loads_pkey). */
const RESERVED_NAMES = ['loads', 'totals', 'raw', 'versions'];

/** Bytes a job file may hold: a definition is a few hundred; 1 MB of YAML keys parses for a minute. */
const MAX_JOB_FILE_BYTES = 64 * 1024;

const MAX_RETENTION_MONTHS = 1200; // Longest retention_months a report may declare (100 years).

const MAX_JOB_FILES = 500;
const MIN_TODAY_MS = 300_000; // today.every: a pull of the unfinished period at most every 5 minutes

type Fail = (field: string, message: string) => never;

export interface Schedule {
  readonly cron: string; // Five- or six-field cron expression.
  readonly timezone: string; // IANA time zone the cron and the report windows are computed in.
}

/** A report pulled by period into table report_<name>. */
export interface ReportJob {
  readonly kind: 'report';
  readonly name: string;
  readonly dimensions: readonly Dimension[];
  readonly period: PeriodUnit;
  readonly lookbackDays: number;
  readonly schedule: Schedule | undefined;
  /** How old its newest data may get before the report is late (`freshness: 30h`), in ms; see plan/freshness.ts. */
  readonly freshnessMs?: number;
  /** Months of history kept (`retention_months: 24`), older monthly partitions dropped; undefined: all. */
  readonly retentionMonths?: number;
  /** No period ending before it is pulled, healed or called missing (`start_date: 2025-01-01`); see plan/bounds.ts. */
  readonly startDate?: string;
  /** Pull the current, unfinished period this often (`today: { every: 30m }`), recorded provisional. */
  readonly today?: { readonly everyMs: number };
  /** Consecutive days one report request may cover (`days_per_request`); undefined: its account's default. */
  readonly daysPerRequest?: number;
  readonly file: string; // The file it came from, for messages.
}

/** The campaign and creative catalogue export, run on a schedule. */
export interface EntitiesJob {
  readonly kind: 'entities';
  readonly name: string;
  readonly schedule: Schedule | undefined;
  readonly file: string;
}

export type JobDefinition = ReportJob | EntitiesJob;

export interface JobSet {
  readonly reports: readonly ReportJob[];
  readonly entities: readonly EntitiesJob[];
}

const REPORT_KEYS = [
  'name',
  'kind',
  'dimensions',
  'period',
  'lookback_days',
  'schedule',
  'freshness',
  'retention_months',
  'start_date',
  'today',
  'days_per_request',
  'description',
];
const ENTITY_KEYS = ['name', 'kind', 'schedule', 'description'];
const SCHEDULE_KEYS = ['cron', 'timezone', 'allow_sub_minute'];

/** Reads and validates every *.yaml / *.yml file of `dir`, sorted by file name. */
export function loadJobs(dir: string): JobSet {
  let files: string[];
  try {
    files = yamlFiles(dir);
  } catch (error) {
    const code = errnoCode(error) ?? 'error';
    throw new ConfigError(
      `ADOPS_JOBS_DIR=${dir} cannot be read (${code}): expected a folder of job YAML files`,
      'ADOPS_JOBS_DIR',
      { cause: error },
    );
  }
  if (files.length > MAX_JOB_FILES)
    throw new ConfigError(
      `ADOPS_JOBS_DIR=${dir} holds ${files.length} job definitions (*.yaml, *.yml): at most ${MAX_JOB_FILES} are allowed`,
      'ADOPS_JOBS_DIR',
    );
  const jobs = files.map((f) => parseJob(readJobFile(join(dir, f), dir), join(dir, f)));
  for (const job of jobs) {
    const other = jobs.find((j) => j.name === job.name);
    if (other !== job)
      throw new ConfigError(
        `${job.file}: name: "${job.name}" is already defined in ${other?.file}; names must be unique`,
        `${job.file}: name`,
      );
  }
  return {
    reports: jobs.filter((j): j is ReportJob => j.kind === 'report'),
    entities: jobs.filter((j): j is EntitiesJob => j.kind === 'entities'),
  };
}

/** One job file of `dir`, following links only into it (a ConfigMap's): one elsewhere is refused unread. */
function readJobFile(path: string, dir: string): string {
  const target = linkedInside(path, dir);
  try {
    return readBoundedFile(target, MAX_JOB_FILE_BYTES, 'a job definition');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new ConfigError(`${path}: ${error.message}`, path, { cause: error });
  }
}

/** The file a link at `path` leads to when it stays inside `dir`; `path` itself when not a link. */
function linkedInside(path: string, dir: string): string {
  let target: string;
  try {
    if (!lstatSync(path).isSymbolicLink()) return path;
    target = realpathSync(path);
    // A link to a FIFO or a device is refused as such by readBoundedFile, wherever it leads.
    if (!statSync(target).isFile()) return path;
  } catch {
    return path; // gone, or a broken link: readBoundedFile names the error
  }
  const rel = relative(realpathSync(dir), target);
  if (rel === '..' || rel.startsWith(`..${sep}`) || rel.startsWith(sep) || rel === '')
    throw new ConfigError(
      `${path}: a symbolic link to a file outside ADOPS_JOBS_DIR; a job definition must be a file of the folder (links within it are followed)`,
      path,
    );
  return target;
}

/** What an unknown key may look like to be named in a message: else it is file content, not a field. */
const FIELD_LIKE = /^[a-z][a-z0-9_]{0,40}$/;

/** Fails on the first key of `o` not `allowed`, naming it only when it looks like a field (FIELD_LIKE). */
function checkKeys(o: object, allowed: readonly string[], fail: Fail, prefix = ''): void {
  Object.keys(o).forEach((key, i) => {
    const name = FIELD_LIKE.test(key) ? key : `key ${i + 1} (not shown: not a field name)`;
    if (!allowed.includes(key)) fail(prefix + name, `unknown field; allowed: ${allowed.join(', ')}`);
  });
}

/** Parses one job definition (`file` names it); no text of it is shown until every key is a job field. */
export function parseJob(text: string, file: string): JobDefinition {
  const doc = parseConfigYaml(text, file, file);
  const fail: Fail = (field, message) => {
    throw new ConfigError(`${file}: ${field}: ${message}`, `${file}: ${field}`);
  };
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    fail('(top level)', 'expected a mapping of name, dimensions, period, lookback_days, schedule');
  const o = doc as Record<string, unknown>;

  const kind = o.kind ?? 'report';
  if (kind !== 'report' && kind !== 'entities') fail('kind', 'not allowed; allowed: report, entities');
  checkKeys(o, kind === 'report' ? REPORT_KEYS : ENTITY_KEYS, fail);

  const name =
    typeof o.name === 'string' && REPORT_NAME.test(o.name)
      ? o.name
      : fail(
          'name',
          `${show(o.name)} is not allowed; expected ${REPORT_NAME.source} (lower case letter, then up to 40 lower case letters, digits or _)`,
        );
  if (RESERVED_NAMES.some((r) => name === r || name.startsWith(`${r}_`)))
    fail(
      'name',
      `"${name}" is reserved: report_${name} would collide with the system's own report_loads, report_totals, report_raw or report_versions; ` +
        'not allowed: loads, totals, raw, versions, or a name starting with loads_, totals_, raw_ or versions_',
    );
  if (name.includes('__'))
    fail(
      'name',
      `"${name}" holds "__", which marks the versions of a report's table (report_<name>__v2); use a single _`,
    );
  const schedule =
    o.schedule === undefined || o.schedule === null ? undefined : parseSchedule(o.schedule, fail);
  if (kind === 'entities') return Object.freeze({ kind, name, schedule, file });

  const dims: unknown[] =
    Array.isArray(o.dimensions) && o.dimensions.length > 0
      ? o.dimensions
      : fail('dimensions', `expected a non-empty list of dimensions from: ${DIMENSIONS.join(', ')}`);
  const seen = new Set<string>();
  dims.forEach((d, i) => {
    if (typeof d !== 'string' || !isDimension(d))
      return fail(`dimensions[${i}]`, `${show(d)} is not a dimension; allowed: ${DIMENSIONS.join(', ')}`);
    if (seen.has(d)) fail(`dimensions[${i}]`, `"${d}" is listed twice; each dimension may appear once`);
    seen.add(d);
  });

  const period = o.period ?? 'day';
  if (!isPeriodUnit(period))
    fail('period', `${show(period)} is not allowed; allowed: ${PERIOD_UNITS.join(', ')}`);
  const lookback = o.lookback_days ?? 0;
  if (!isWhole(lookback, 0, 366))
    fail('lookback_days', `${show(lookback)} is not allowed; expected a whole number from 0 to 366`);
  let freshnessMs: number | undefined;
  if (o.freshness !== undefined && o.freshness !== null) {
    freshnessMs = typeof o.freshness === 'string' ? parseDuration(o.freshness) : undefined;
    if (freshnessMs === undefined)
      fail(
        'freshness',
        `${show(o.freshness)} is not a duration; expected a whole number and a unit m, h or d, like 90m, 30h or 2d (at most 366d)`,
      );
  }
  const retention = o.retention_months ?? undefined;
  if (retention !== undefined && !isWhole(retention, 1, MAX_RETENTION_MONTHS))
    fail(
      'retention_months',
      `${show(retention)} is not allowed; expected a whole number of months from 1 to ${MAX_RETENTION_MONTHS}, or leave it out to keep everything`,
    );
  const start = o.start_date ?? undefined;
  const startProblem = start === undefined ? undefined : planDateProblem(start);
  if (startProblem !== undefined) fail('start_date', startProblem);
  const today = o.today ?? undefined;
  let everyMs: number | undefined;
  if (today !== undefined) {
    if (typeof today !== 'object' || Array.isArray(today)) fail('today', 'expected a mapping { every: 30m }');
    checkKeys(today, ['every'], fail, 'today.');
    const every = 'every' in today ? today.every : undefined;
    everyMs = typeof every === 'string' ? parseDuration(every) : undefined;
    if (everyMs === undefined || everyMs < MIN_TODAY_MS)
      fail(
        'today.every',
        `${show(every)} is not allowed; expected a duration of 5 minutes or more, like 30m or 2h`,
      );
  }
  const perRequest = o.days_per_request ?? undefined;
  // Rows of several periods in one answer are told apart only by their day.
  const noDay = perRequest !== 1 && !dims.includes('day') && ': it needs the day dimension (or 1)';
  if (perRequest !== undefined && (!isWhole(perRequest, 1, 366) || noDay !== false))
    fail(
      'days_per_request',
      `${show(perRequest)} is not allowed${noDay || '; expected whole days from 1 to 366'}`,
    );
  return Object.freeze({
    kind: 'report',
    name,
    dimensions: Object.freeze([...(dims as Dimension[])]),
    period: period as PeriodUnit,
    lookbackDays: lookback as number,
    schedule,
    ...(freshnessMs === undefined ? {} : { freshnessMs }),
    ...(retention === undefined ? {} : { retentionMonths: retention as number }),
    ...(typeof start === 'string' ? { startDate: start } : {}),
    ...(everyMs === undefined ? {} : { today: { everyMs } }),
    ...(perRequest === undefined ? {} : { daysPerRequest: perRequest as number }),
    file,
  });
}

function parseSchedule(value: unknown, fail: Fail): Schedule {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('schedule', 'expected a mapping { cron: "0 3 * * *", timezone: "UTC" }');
  const s = value as Record<string, unknown>;
  checkKeys(s, SCHEDULE_KEYS, fail, 'schedule.');
  const allowSubMinute = s.allow_sub_minute ?? false;
  if (typeof allowSubMinute !== 'boolean') fail('schedule.allow_sub_minute', 'expected true or false');
  const timezone = s.timezone ?? 'UTC';
  if (typeof timezone !== 'string' || !isTimeZone(timezone))
    fail(
      'schedule.timezone',
      `${show(timezone)} is not an IANA time zone; expected e.g. UTC, Europe/Berlin, America/New_York`,
    );
  const cron =
    typeof s.cron === 'string' && s.cron.trim() !== ''
      ? s.cron.trim()
      : fail('schedule.cron', 'missing; expected a cron expression such as "0 3 * * *"');
  const fields = cron.split(/\s+/).length;
  if (fields < 5 || fields > 6)
    fail(
      'schedule.cron',
      `"${cron}" has ${fields} fields; expected 5 (minute hour day month weekday) or 6 (with seconds first)`,
    );
  let perMinute = 1;
  try {
    perMinute = CronExpressionParser.parse(cron, { tz: timezone as string, strict: false }).fields.second
      .values.length;
  } catch (error) {
    fail(
      'schedule.cron',
      `"${cron}" is not a valid cron expression: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // Every run re-pulls the lookback periods: once a second is 60 re-pulls of each a minute.
  if (perMinute > 1 && allowSubMinute !== true)
    fail(
      'schedule.cron',
      `"${cron}" runs ${perMinute} times a minute; a schedule may run at most once a minute unless the file sets schedule.allow_sub_minute: true`,
    );
  return Object.freeze({ cron, timezone: timezone as string });
}

function show(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const MAX_MS = 366 * UNIT_MS.d; // The longest duration accepted: a year and a day.

/** Milliseconds of `text` (`90m`, `30h`, `2d`), or undefined when it is not such a duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^([1-9]\d{0,5})([mhd])$/.exec(text.trim());
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms <= MAX_MS ? ms : undefined;
}

/** The definitions of a folder as they are now. */
export interface LiveJobs {
  /** The current definitions: the last valid set read from the folder. */
  current(): JobSet;
}

export interface LiveJobsOptions {
  readonly checkEveryMs?: number; // How often the folder is looked at, at most (default 2 s).
  /** Told once per broken state of the folder; the previous valid definitions stay in use. */
  readonly onInvalid?: (error: ConfigError) => void;
  readonly onChange?: (jobs: JobSet) => void; // Told when a new set of definitions is in use.
  readonly now?: () => number;
}

/** The *.yaml and *.yml files of `dir`, by name. */
function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
}

/** What changes when a definition file is added, removed or edited. */
function folderSignature(dir: string): string {
  try {
    return yamlFiles(dir)
      .map((f) => {
        const s = statSync(join(dir, f));
        return `${f}:${s.size}:${s.mtimeMs}`;
      })
      .join('|');
  } catch (error) {
    return `unreadable:${errnoCode(error) ?? 'error'}`;
  }
}

/** Follows `dir`'s definitions; a folder that stops parsing keeps the last valid ones, reported once. */
export function liveJobs(dir: string, initial: JobSet, options: LiveJobsOptions = {}): LiveJobs {
  const every = options.checkEveryMs ?? 2_000;
  const now = options.now ?? Date.now;
  let jobs = initial;
  let signature = folderSignature(dir);
  let checkedAt = now();
  return {
    current() {
      if (now() - checkedAt < every) return jobs;
      checkedAt = now();
      const seen = folderSignature(dir);
      if (seen === signature) return jobs;
      signature = seen;
      try {
        jobs = loadJobs(dir);
        options.onChange?.(jobs);
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        options.onInvalid?.(error);
      }
      return jobs;
    },
  };
}

/** Finds a report definition by name, in the definitions as they are at the call. */
export interface ReportLookup {
  get(name: string): ReportJob | undefined;
}

export function reportLookup(live: LiveJobs): ReportLookup {
  return { get: (name) => live.current().reports.find((r) => r.name === name) };
}

/** A fixed set of definitions, for callers that do not follow a folder (tests, the demo). */
export function fixedJobs(jobs: JobSet): LiveJobs {
  return { current: () => jobs };
}
