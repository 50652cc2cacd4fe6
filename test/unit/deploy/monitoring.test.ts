// deploy/prometheus/alerts.yml passes promtool's check and its own rule tests, and the alerts and
// the Grafana dashboard ask only for metrics that a worker exports.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  createWorkerMetrics,
  registerPacingGauge,
  registerReportGauges,
} from '../../../src/worker/metrics.js';
import { promtool } from '../../helpers/promtool.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const RULES = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const RULE_TESTS = join(ROOT, 'deploy', 'prometheus', 'alerts.test.yml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'adops-export.json');

/** Every metric name a worker's /metrics can show (histograms with their series suffixes). */
function exported(): Set<string> {
  const metrics = createWorkerMetrics(async () => ({}));
  registerReportGauges(metrics.registry, async () => []);
  registerPacingGauge(metrics.registry, async () => []);
  const names = new Set<string>(['up']); // Prometheus' own, per scrape target
  for (const m of metrics.registry.getMetricsAsArray()) {
    names.add(m.name);
    for (const suffix of ['_bucket', '_count', '_sum']) names.add(`${m.name}${suffix}`);
  }
  return names;
}

/** The metric names a PromQL expression reads. */
function metricsIn(expr: string): string[] {
  return [...expr.matchAll(/\b(adops_[a-z_]+|up)\b(?=\s*[{[)\s]|$)/g)].map((m) => m[1]!);
}

/** Each `by (...)`/`on (...)` of an expression over per-report gauges that drops the account or the report. */
function aggregationProblems(expr: string): string[] {
  if (!/adops_report_/.test(expr)) return [];
  const clauses = [...expr.matchAll(/\b(by|on)\s*\(([^)]*)\)/g)];
  const problems = clauses
    .map((m) => ({ clause: m[0], labels: (m[2] ?? '').split(',').map((l) => l.trim()) }))
    .filter((c) => !(c.labels.includes('account') && c.labels.includes('report')))
    .map((c) => `${c.clause} drops the account or the report`);
  // A bare sum/max/count over the gauges would drop both.
  if (clauses.length === 0) problems.push('aggregates without by (account, report)');
  return problems;
}

const rules = parse(readFileSync(RULES, 'utf8')) as {
  groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
};
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
  panels: Array<{ id: number; title: string; targets: Array<{ expr: string; legendFormat?: string }> }>;
};

describe('Prometheus alerts', () => {
  it('pass promtool check rules', () => {
    const out = execFileSync(promtool(), ['check', 'rules', RULES], { encoding: 'utf8' });
    expect(out).toMatch(/SUCCESS: 9 rules found/);
  }, 120_000);

  it('fire and stay quiet as their promtool rule tests expect', () => {
    const out = execFileSync(promtool(), ['test', 'rules', RULE_TESTS], { encoding: 'utf8' });
    expect(out).toMatch(/SUCCESS/);
  }, 120_000);

  it('cover a stale report, one never loaded, missing periods, failing pulls, a stuck queue, a worker down and campaigns behind', () => {
    const names = rules.groups.flatMap((g) => g.rules.map((r) => r.alert));
    expect(names).toEqual(
      expect.arrayContaining([
        'AdopsReportStale',
        'AdopsReportNeverLoaded',
        'AdopsPeriodsMissing',
        'AdopsPullsFailing',
        'AdopsQueueStuck',
        'AdopsWorkerDown',
        'AdopsCampaignsBehind',
      ]),
    );
  });

  it('keep the account: every aggregation of a per-report gauge is by (account, report)', () => {
    for (const rule of rules.groups.flatMap((g) => g.rules))
      for (const problem of aggregationProblems(rule.expr)) expect.fail(`${rule.alert}: ${problem}`);
  });

  it('read only metrics that workers export', () => {
    const known = exported();
    for (const rule of rules.groups.flatMap((g) => g.rules)) {
      const used = metricsIn(rule.expr);
      expect(used.length, rule.alert).toBeGreaterThan(0);
      for (const name of used) expect(known, `${rule.alert} reads ${name}`).toContain(name);
    }
  });
});

describe('Grafana dashboard', () => {
  it('has panels with unique ids, each with a query', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) expect(p.targets.length, p.title).toBeGreaterThan(0);
  });

  it('shows per-report gauges per account and report', () => {
    for (const p of dashboard.panels)
      for (const t of p.targets) {
        // A stat panel may total over them (sum of max by (account, report)), never lump accounts.
        for (const problem of aggregationProblems(t.expr)) expect.fail(`${p.title}: ${problem}`);
        if (/adops_report_/.test(t.expr) && /legendFormat/.test(JSON.stringify(t)))
          expect(JSON.stringify(t), p.title).toContain('{{account}}');
      }
  });

  it('queries only metrics that workers export', () => {
    const known = exported();
    expect(metricsIn('rate(adops_nope_total[5m])')).toEqual(['adops_nope_total']);
    for (const p of dashboard.panels)
      for (const t of p.targets)
        for (const name of metricsIn(t.expr)) expect(known, `${p.title} reads ${name}`).toContain(name);
  });
});
