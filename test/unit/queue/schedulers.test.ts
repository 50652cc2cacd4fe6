import { describe, expect, it } from 'vitest';
import { loadJobs } from '../../../src/platform/config/jobs.js';
import { wantedSchedulers } from '../../../src/schedule/scheduler.js';

describe('wantedSchedulers', () => {
  const jobs = loadJobs('jobs');

  it('ticks each report once (its tick pulls every account) and syncs each account its own catalogue', () => {
    const accounts = [
      { name: 'default', reports: undefined },
      { name: 'north', reports: ['daily_campaign'] },
    ];
    const wanted = wantedSchedulers(jobs, accounts);
    const ticks = wanted.filter((w) => w.queue === 'ticks');
    expect(ticks.map((t) => t.data)).toEqual(
      jobs.reports.filter((r) => r.schedule !== undefined).map((r) => ({ report: r.name })),
    );
    const syncs = wanted.filter((w) => w.queue === 'syncs');
    const scheduled = jobs.entities.filter((e) => e.schedule !== undefined);
    expect(scheduled.length).toBeGreaterThan(0);
    expect(syncs.map((s) => [s.id, s.data])).toEqual(
      scheduled.flatMap((e) => [
        [`adops-entities-${e.name}`, {}],
        [`adops-entities-${e.name}@north`, { account: 'north' }],
      ]),
    );
  });

  it('adds a scheduler every today.every for a report asking for today', () => {
    const [first, ...rest] = jobs.reports;
    const today = { reports: [{ ...first!, today: { everyMs: 1_800_000 } }, ...rest], entities: [] };
    expect(wantedSchedulers(today).filter((w) => w.id.startsWith('adops-today-'))).toEqual([
      {
        id: `adops-today-${first!.name}`,
        queue: 'ticks',
        repeat: { every: 1_800_000 },
        name: 'tick',
        data: { report: first!.name, today: 'yes' },
      },
    ]);
  });

  it('keeps the ids and data of a single-account deployment', () => {
    const syncs = wantedSchedulers(jobs).filter((w) => w.queue === 'syncs');
    expect(syncs.every((s) => !s.id.includes('@') && Object.keys(s.data).length === 0)).toBe(true);
  });
});
