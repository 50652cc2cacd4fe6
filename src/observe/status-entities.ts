// The catalogue part of `adops status` as terminal text: the last written sync, its unreadable
// fields, and a newer sync still running, interrupted or failed.
import { problemText } from '../catalogue/fields.js';
import type { EntitySyncStatus } from '../warehouse/catalogue/runs.js';
import { terminalSafe } from './format.js';

/** Problems listed in full under the per-field counts. */
const SHOWN = 5;

/** Lines of the catalogue section (empty when no sync ever ran). */
export function renderEntityStatus(e: EntitySyncStatus | undefined): string[] {
  if (e === undefined || (e.lastWritten === null && e.latest === null)) return [];
  const lines = ['', 'Catalogue (adops sync):'];
  const w = e.lastWritten;
  if (w === null) lines.push('  never written');
  else {
    const r = w.result;
    lines.push(
      `  last written ${w.finishedAt} (run ${w.runId}): ${r.campaigns ?? 0} campaigns, ${r.creatives ?? 0} creatives, ` +
        `${r.deleted ?? 0} newly deleted, ${r.revived ?? 0} revived`,
    );
    const p = w.problems;
    if (p !== null && p.count > 0) {
      const skipped = p.skipped > 0 ? `; ${p.skipped} entities with an unreadable id were skipped` : '';
      const repaired = p.repaired ?? 0;
      if (p.count > repaired)
        lines.push(
          `  ${p.count - repaired} fields could not be read and were stored as NULL (raw keeps them)${skipped}:`,
        );
      if (repaired > 0)
        lines.push(
          `  ${repaired} text fields held NUL characters or unpaired surrogates, which Postgres cannot store: ` +
            'stored with the NULs removed and U+FFFD for each surrogate, in their columns and in raw:',
        );
      for (const [field, n] of Object.entries(p.byField)) lines.push(`    ${field}: ${n}`);
      for (const problem of p.examples.slice(0, SHOWN)) lines.push(`    e.g. ${problemText(problem)}`);
    }
  }
  const l = e.latest;
  if (l !== null) {
    const of = `${l.campaignsDone}/${l.campaignsTotal ?? '?'} campaigns, ${l.requests} requests, try ${l.tries}`;
    if (l.state === 'failed')
      lines.push(`  run ${l.runId} failed: ${terminalSafe(l.error ?? 'no reason recorded')}`);
    else if (l.state === 'running') lines.push(`  run ${l.runId} running since ${l.startedAt}: ${of}`);
    else
      lines.push(
        `  run ${l.runId} interrupted at ${l.updatedAt} (${of}); it resumes from its checkpoint when its job runs again`,
      );
  }
  return lines;
}
