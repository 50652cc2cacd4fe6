// Outcome figures of the reliability cases. Each test file writes its own fragment (files run in
// parallel processes) under test-artifacts/reliability/<runId>/, then merges every fragment into
// test-artifacts/reliability.json under a lock, so whichever file finishes last leaves the
// complete set. scripts/reliability-report.ts turns that file into RELIABILITY.md's table, taking
// the latest run that wrote every file.
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../../src/platform/config/files.js';

/** One row of RELIABILITY.md. */
export interface CaseFigures {
  /** Stable id, e.g. `faults/500s`. */
  readonly id: string;
  readonly title: string;
  readonly injected: string;
  readonly periodsExact: number;
  readonly periodsTotal: number;
  readonly duplicates: number;
  /** Extra requests or attempts the faults cost (what "retries" means is in `notes`). */
  readonly retries: number;
  /** Pulls that ended failed on purpose (permanent faults), each with its reason recorded. */
  readonly failedAsExpected: number;
  readonly notes: string;
  readonly ms: number;
}

const dir = () => join(packageRoot(), 'test-artifacts', 'reliability');
export const FIGURES_FILE = (): string => join(packageRoot(), 'test-artifacts', 'reliability.json');

/** Accumulates a file's figures; `flush()` (in afterAll) writes and merges them. */
export function figureBook(file: string): { add(c: CaseFigures): void; flush(runId: string): void } {
  const cases: CaseFigures[] = [];
  return {
    add: (c) => {
      cases.push(c);
    },
    flush: (runId) => {
      if (cases.length === 0) return;
      // One folder per run: a concurrent run in the same tree never overwrites this run's figures.
      mkdirSync(join(dir(), runId), { recursive: true });
      const fragment = { file, runId, finishedAt: new Date().toISOString(), cases };
      writeAtomically(join(dir(), runId, `${file}.json`), JSON.stringify(fragment, null, 2));
      withLock(join(dir(), '.lock'), () => {
        const fragments = readdirSync(dir(), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .flatMap((d) =>
            readdirSync(join(dir(), d.name))
              .filter((f) => f.endsWith('.json'))
              .map((f) => join(dir(), d.name, f)),
          )
          .sort()
          .map((path) => JSON.parse(readFileSync(path, 'utf8')) as typeof fragment);
        writeAtomically(
          FIGURES_FILE(),
          JSON.stringify({ generatedAt: new Date().toISOString(), fragments }, null, 2),
        );
      });
    },
  };
}

function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Runs `fn` holding an O_EXCL lock file; a lock older than 30 s is taken over (its holder died). */
function withLock(path: string, fn: () => void): void {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      closeSync(openSync(path, 'wx'));
      break;
    } catch {
      if (Date.now() > deadline) {
        rmSync(path, { force: true });
        continue;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    fn();
  } finally {
    rmSync(path, { force: true });
  }
}
