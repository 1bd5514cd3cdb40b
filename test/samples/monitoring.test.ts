/**
 * The Grafana dashboard and the Prometheus alert rules in samples/ read only metrics mailgate
 * exports, with labels those metrics have: the names and labels come from the registry
 * createMetrics() builds, not from a list kept by hand. promtool (Debian's prometheus package,
 * installed by scripts/setup.sh) checks the rules and runs their unit tests.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createMetrics } from '../../src/metrics.js';
import { promqlUse, withoutVariables } from './promql.js';

const ROOT = join(import.meta.dirname, '../..');
const SAMPLES = join(ROOT, 'samples');
/** Labels Prometheus adds to every scraped series, and the bucket label of histograms. */
const TARGET_LABELS = ['instance', 'job'];
/** Series Prometheus makes itself for each target. */
const PROMETHEUS_SERIES = new Set(['up']);

interface Exported {
  type: string;
  labels: Set<string>;
}

/** Every series name a scrape of mailgate can hold, with the labels it carries. */
function exportedSeries(): Map<string, Exported> {
  const { registry } = createMetrics();
  const out = new Map<string, Exported>();
  for (const metric of registry.getMetricsAsArray() as unknown as Array<{ name: string; type: string; labelNames?: readonly string[] }>) {
    const { name, type } = metric;
    const labels = new Set([...(metric.labelNames ?? []), ...TARGET_LABELS]);
    out.set(name, { type, labels });
    if (type === 'histogram') {
      out.set(`${name}_bucket`, { type: 'histogram', labels: new Set([...labels, 'le']) });
      out.set(`${name}_sum`, { type: 'histogram', labels });
      out.set(`${name}_count`, { type: 'histogram', labels });
    }
  }
  return out;
}

interface Query {
  where: string;
  expr: string;
}

function dashboardQueries(): Query[] {
  const dashboard = JSON.parse(readFileSync(join(SAMPLES, 'grafana/mailgate.json'), 'utf8')) as {
    panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
  };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `panel "${p.title}"`, expr: t.expr })));
}

function alertQueries(): Query[] {
  const rules = parseYaml(readFileSync(join(SAMPLES, 'prometheus/alerts.yml'), 'utf8')) as {
    groups: Array<{ rules: Array<{ alert: string; expr: string }> }>;
  };
  return rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })));
}

/** What is wrong with one expression: unknown metrics, labels a metric does not have. */
function problems(q: Query, exported: Map<string, Exported>): string[] {
  const use = promqlUse(q.expr);
  const out: string[] = [];
  if (use.selectors.length === 0) out.push(`${q.where}: reads no metric`);
  const known = new Set<string>(['le']);
  for (const s of use.selectors) {
    if (PROMETHEUS_SERIES.has(s.metric)) {
      TARGET_LABELS.forEach((l) => known.add(l));
      continue;
    }
    const m = exported.get(s.metric);
    if (!m) {
      out.push(`${q.where}: ${s.metric} is not a metric mailgate exports`);
      continue;
    }
    m.labels.forEach((l) => known.add(l));
    for (const l of s.labels) if (!m.labels.has(l)) out.push(`${q.where}: ${s.metric} has no label ${l}`);
  }
  for (const l of use.groupings) if (!known.has(l)) out.push(`${q.where}: groups by ${l}, which none of its metrics has`);
  return out;
}

describe('the dashboard and alert rules in samples/', () => {
  const exported = exportedSeries();

  it('read the registry of metrics from code, including the paused-route gauge', () => {
    expect(exported.get('mailgate_outbox_depth')?.labels).toContain('route');
    expect(exported.get('mailgate_route_paused')).toMatchObject({ type: 'gauge' });
    expect(exported.get('mailgate_route_paused')!.labels).toContain('route');
    expect(exported.get('mailgate_api_request_duration_seconds_bucket')!.labels).toContain('le');
  });

  it('the checker finds an unknown metric, a label a metric lacks and a grouping none has', () => {
    expect(problems({ where: 'x', expr: 'sum by (route) (rate(mailgate_messages_recieved_total[5m]))' }, exported)).toEqual([
      'x: mailgate_messages_recieved_total is not a metric mailgate exports',
      'x: groups by route, which none of its metrics has',
    ]);
    expect(problems({ where: 'x', expr: 'mailgate_ai_units_total{adapter="imap"}' }, exported)).toEqual([
      'x: mailgate_ai_units_total has no label adapter',
    ]);
  });

  it('every dashboard panel reads metrics mailgate exports, with their labels', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(15);
    expect(queries.flatMap((q) => problems(q, exported))).toEqual([]);
    // The instance picker reads a real metric too.
    const dashboard = JSON.parse(readFileSync(join(SAMPLES, 'grafana/mailgate.json'), 'utf8')) as {
      templating: { list: Array<{ name: string; definition?: string }> };
    };
    const picker = dashboard.templating.list.find((v) => v.name === 'instance')!;
    const [, metric, label] = /^label_values\((\w+),\s*(\w+)\)$/.exec(picker.definition!)!;
    expect(exported.get(metric!)?.labels).toContain(label);
  });

  it('every alert rule reads metrics mailgate exports, with their labels, and one alerts on a paused route', () => {
    const queries = alertQueries();
    expect(queries.flatMap((q) => problems(q, exported))).toEqual([]);
    const paused = queries.find((q) => q.where === 'alert MailgateRoutePaused')!;
    expect(withoutVariables(paused.expr)).toMatch(/mailgate_route_paused\)? == 1$/);
  });

  it('promtool accepts the rules and their unit tests pass (a paused route fires after a minute, …)', () => {
    const dir = join(SAMPLES, 'prometheus');
    const check = spawnSync('promtool', ['check', 'rules', 'alerts.yml'], { cwd: dir, encoding: 'utf8' });
    expect(check.error, 'promtool is missing: scripts/setup.sh installs Debian\'s prometheus package').toBeUndefined();
    expect(check.stdout + check.stderr).toContain(`SUCCESS: ${alertQueries().length} rules found`);
    expect(check.status).toBe(0);
    const unit = spawnSync('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: dir, encoding: 'utf8' });
    expect(unit.stdout + unit.stderr).toContain('SUCCESS');
    expect(unit.status).toBe(0);
  });
});
