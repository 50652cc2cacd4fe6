// Job definitions that follow the jobs folder while a worker runs: a new, changed or deleted
// definition is seen without a restart. The folder is looked at (names, sizes and modification
// times only) at most once per interval, and parsed again only when that changed.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from './errors.js';
import { loadJobs, type JobSet, type ReportJob } from './jobs.js';

/** The definitions of a folder as they are now. */
export interface LiveJobs {
  /** The current definitions: the last valid set read from the folder. */
  current(): JobSet;
}

export interface LiveJobsOptions {
  /** How often the folder is looked at, at most (default 2 s). */
  readonly checkEveryMs?: number;
  /** Told once per broken state of the folder; the previous valid definitions stay in use. */
  readonly onInvalid?: (error: ConfigError) => void;
  /** Told when a new set of definitions is in use. */
  readonly onChange?: (jobs: JobSet) => void;
  readonly now?: () => number;
}

/** What changes when a definition file is added, removed or edited. */
function folderSignature(dir: string): string {
  try {
    return readdirSync(dir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .map((f) => {
        const s = statSync(join(dir, f));
        return `${f}:${s.size}:${s.mtimeMs}`;
      })
      .join('|');
  } catch (error) {
    return `unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}

/**
 * Follows the definitions of `dir`, starting from `initial` (already read from it). A folder that
 * no longer parses (a file half-written, a typo) never stops a running worker: it keeps the last
 * valid definitions and reports the error once.
 */
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

/** The report lookup over `live`'s current definitions. */
export function reportLookup(live: LiveJobs): ReportLookup {
  return { get: (name) => live.current().reports.find((r) => r.name === name) };
}

/** A fixed set of definitions, for callers that do not follow a folder (tests, the demo). */
export function fixedJobs(jobs: JobSet): LiveJobs {
  return { current: () => jobs };
}
