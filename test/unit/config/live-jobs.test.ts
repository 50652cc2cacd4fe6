import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadJobs, liveJobs, reportLookup } from '../../../src/platform/config/jobs.js';
import type { ConfigError } from '../../../src/platform/config/files.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'adops-live-jobs-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const report = (name: string, dims = 'day, zone_id') => `name: ${name}\ndimensions: [${dims}]\nperiod: day\n`;

describe('liveJobs', () => {
  it('sees a definition added, changed and deleted, at most once per interval', () => {
    const dir = folder({ 'a.yaml': report('a') });
    let clock = 0;
    const changes: string[][] = [];
    const live = liveJobs(dir, loadJobs(dir), {
      checkEveryMs: 1_000,
      now: () => clock,
      onChange: (jobs) => changes.push(jobs.reports.map((r) => r.name)),
    });
    const lookup = reportLookup(live);
    writeFileSync(join(dir, 'b.yaml'), report('b'));
    expect(lookup.get('b')).toBeUndefined(); // not looked at again within the interval
    clock += 1_000;
    expect(lookup.get('b')?.dimensions).toEqual(['day', 'zone_id']);
    writeFileSync(join(dir, 'b.yaml'), report('b', 'day, campaign_id, zone_id'));
    utimesSync(join(dir, 'b.yaml'), new Date(), new Date(Date.now() + 5_000));
    clock += 1_000;
    expect(lookup.get('b')?.dimensions).toEqual(['day', 'campaign_id', 'zone_id']);
    rmSync(join(dir, 'a.yaml'));
    clock += 1_000;
    expect(lookup.get('a')).toBeUndefined();
    expect(changes).toEqual([['a', 'b'], ['a', 'b'], ['b']]);
  });

  it('keeps the last valid definitions when the folder stops parsing, and says so once', () => {
    const dir = folder({ 'a.yaml': report('a') });
    let clock = 0;
    const errors: ConfigError[] = [];
    const live = liveJobs(dir, loadJobs(dir), {
      checkEveryMs: 10,
      now: () => clock,
      onInvalid: (e) => errors.push(e),
    });
    writeFileSync(join(dir, 'broken.yaml'), 'name: broken\ndimensions: [day, placement]\nperiod: day\n');
    clock += 10;
    expect(live.current().reports.map((r) => r.name)).toEqual(['a']);
    clock += 10;
    live.current();
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toMatch(/broken.yaml: dimensions\[1\]: "placement" is not a dimension/);
    rmSync(join(dir, 'broken.yaml'));
    writeFileSync(join(dir, 'c.yaml'), report('c'));
    clock += 10;
    expect(live.current().reports.map((r) => r.name)).toEqual(['a', 'c']);
  });
});
