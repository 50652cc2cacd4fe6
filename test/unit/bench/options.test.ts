import { describe, expect, it } from 'vitest';
import { BenchUsageError, parseBenchOptions } from '../../../bench/options.js';

describe('bench options', () => {
  it('defaults to the issue: one million rows, 90 days, 2 workers x 8, 50 ms, 10% 500s', () => {
    const o = parseBenchOptions([], {});
    expect(o).toMatchObject({
      rows: 1_000_000,
      days: 90,
      workers: 2,
      concurrency: 8,
      latencyMs: 50,
      failRate: 0.1,
    });
    expect([...o.sections]).toEqual([
      'load',
      'emulator',
      'parser',
      'sync',
      'backfill',
      'cli',
      'pull',
      'memory',
      'requests',
    ]);
  });

  it('gives a quick run with --quick, and flags win over BENCH_* variables', () => {
    expect(parseBenchOptions(['--quick'], {})).toMatchObject({ rows: 100_000, days: 10 });
    expect(parseBenchOptions(['--rows', '2_000'], { BENCH_ROWS: '5000', BENCH_DAYS: '3' })).toMatchObject({
      rows: 2000,
      days: 3,
    });
  });

  it('runs only the sections named by --only', () => {
    expect([...parseBenchOptions(['--only', 'backfill'], {}).sections]).toEqual(['backfill']);
  });

  it('runs the scale pieces alone with --scale, on 50M rows unless --scale-rows says fewer', () => {
    expect(parseBenchOptions([], {})).toMatchObject({ scale: false });
    const scale = parseBenchOptions(['--scale'], {});
    expect(scale).toMatchObject({ scale: true, scaleRows: 50_000_000 });
    expect([...scale.sections]).toEqual([]);
    const small = parseBenchOptions(['--scale', '--scale-rows', '1_000_000', '--only', 'cli'], {});
    expect(small).toMatchObject({ scale: true, scaleRows: 1_000_000 });
    expect([...small.sections]).toEqual(['cli']);
    expect(() => parseBenchOptions(['--scale-rows', '10'], {})).toThrow(/--scale-rows=10 is not allowed/);
  });

  it('backfills 3 accounts x 20 reports x 365 days at 50/s each unless --scale-days and --scale-rate say less', () => {
    expect(parseBenchOptions(['--scale'], {})).toMatchObject({ scaleDays: 365, scaleRate: 50 });
    expect(parseBenchOptions(['--scale', '--scale-days', '30', '--scale-rate', '20'], {})).toMatchObject({
      scaleDays: 30,
      scaleRate: 20,
    });
    expect(() => parseBenchOptions(['--scale-days', '400'], {})).toThrow(/--scale-days=400 is not allowed/);
    expect(() => parseBenchOptions(['--scale-rate', '0'], {})).toThrow(/--scale-rate=0 is not allowed/);
  });

  it('refuses unknown flags, sections and out-of-range numbers with a message naming them', () => {
    expect(() => parseBenchOptions(['--rowz', '1'], {})).toThrow(BenchUsageError);
    expect(() => parseBenchOptions(['--only', 'load,speed'], {})).toThrow(/"speed" is not a section/);
    expect(() => parseBenchOptions(['--rows', '0'], {})).toThrow(/--rows=0 is not allowed/);
    expect(() => parseBenchOptions(['--fail-rate', '1'], {})).toThrow(/--fail-rate=1/);
  });
});
