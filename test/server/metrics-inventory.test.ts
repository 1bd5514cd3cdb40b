/**
 * The metric families GET /metrics exposes, each with its type, HELP text, label names and
 * (for histograms) buckets: dashboards and alerts are written against these, so none may
 * change or disappear. Read over HTTP from the exposition text, so the test does not depend
 * on how the registry is built.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { buildApp } from '../../src/server/index.js';
import { fixture } from './support.js';

interface Family {
  type: string;
  help: string;
  labels: string[];
  buckets?: number[];
}

const ROUTE_ADAPTER = ['adapter', 'route'];
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 240];

/** Every family exposed before the registry moved to prom-client, as it was then. */
const INVENTORY: Record<string, Family> = {
  mailgate_messages_received_total: { type: 'counter', help: 'Raw messages handed to intake by an adapter.', labels: ROUTE_ADAPTER },
  mailgate_messages_parsed_total: { type: 'counter', help: 'Messages parsed into a document.', labels: ROUTE_ADAPTER },
  mailgate_messages_queued_total: { type: 'counter', help: 'Outbox items newly written for delivery.', labels: ROUTE_ADAPTER },
  mailgate_messages_delivered_total: { type: 'counter', help: 'Documents the API accepted.', labels: ROUTE_ADAPTER },
  mailgate_messages_unchanged_total: {
    type: 'counter',
    help: 'Documents skipped because text and properties were unchanged (not billed).',
    labels: ROUTE_ADAPTER,
  },
  mailgate_messages_rejected_total: { type: 'counter', help: 'Documents the API rejected with 400 or 422.', labels: ROUTE_ADAPTER },
  mailgate_messages_dead_lettered_total: {
    type: 'counter',
    help: 'Items moved to the dead letters for any reason: rejected, unparseable, retries exhausted.',
    labels: ROUTE_ADAPTER,
  },
  mailgate_outbox_depth: { type: 'gauge', help: 'Items waiting for delivery.', labels: ['route'] },
  mailgate_route_paused: {
    type: 'gauge',
    help: '1 while delivery of the route is paused (a refused token, an unknown source or transform tag, ...), else 0.',
    labels: ['route'],
  },
  mailgate_api_requests_total: {
    type: 'counter',
    help: 'Requests to the Text Analytics API by endpoint and HTTP status (or network, timeout).',
    labels: ['endpoint', 'status'],
  },
  mailgate_api_request_duration_seconds: {
    type: 'histogram',
    help: 'Latency of requests to the Text Analytics API in seconds, by endpoint and HTTP status (or network, timeout).',
    labels: ['endpoint', 'status'],
    buckets: SECONDS_BUCKETS,
  },
  mailgate_adapter_state: {
    type: 'gauge',
    help: 'Current state of each health line of an adapter (a mailbox, an account) by kind and instance (1 = current).',
    labels: ['instance', 'kind', 'state'],
  },
  mailgate_imap_connection_state: {
    type: 'gauge',
    help: 'Current connection state of each IMAP account (1 = current).',
    labels: ['account', 'state'],
  },
  mailgate_ai_units_total: {
    type: 'counter',
    help: 'AI units billed: created comments and updates whose text changed.',
    labels: ['route'],
  },
  mailgate_http_requests_total: {
    type: 'counter',
    help: 'Requests answered by the mailgate HTTP server, by route pattern.',
    labels: ['method', 'path', 'status'],
  },
  mailgate_metrics_collect_errors_total: { type: 'counter', help: 'Scrape-time collectors that failed or timed out.', labels: ['metric'] },
  process_start_time_seconds: { type: 'gauge', help: 'Start time of the process since the Unix epoch, in seconds.', labels: [] },
  process_resident_memory_bytes: { type: 'gauge', help: 'Resident memory size in bytes.', labels: [] },
  nodejs_heap_used_bytes: { type: 'gauge', help: 'V8 heap in use, in bytes.', labels: [] },
};

const SAMPLE_RE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Families of a text exposition: type and HELP from the comments, label names and buckets from the samples. */
function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    const f = families.get(name) ?? { type: 'untyped', help: '', labels: [] };
    families.set(name, f);
    return f;
  };
  for (const line of text.split('\n')) {
    const comment = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (comment) {
      if (comment[1] === 'HELP') family(comment[2]!).help = comment[3]!;
      else family(comment[2]!).type = comment[3]!;
      continue;
    }
    const sample = SAMPLE_RE.exec(line);
    if (!sample) continue;
    const series = sample[1]!;
    const base = families.has(series) ? series : series.replace(/_(bucket|sum|count)$/, '');
    const f = family(base);
    for (const [, label, value] of (sample[2] ?? '').matchAll(LABEL_RE)) {
      if (label === 'le' && series.endsWith('_bucket')) {
        if (value !== '+Inf') f.buckets = [...(f.buckets ?? []), Number(value)];
      } else if (!f.labels.includes(label!)) f.labels = [...f.labels, label!].sort();
    }
  }
  return families;
}

/** One series in every labelled family, so that each family shows its label names. */
function touchEverySeries(m: Metrics): void {
  const ra = { route: 'support', adapter: 'imap' };
  for (const c of [m.messagesReceived, m.messagesParsed, m.messagesQueued, m.messagesDelivered, m.messagesUnchanged]) c.inc(ra);
  m.messagesRejected.inc(ra);
  m.messagesDeadLettered.inc(ra);
  m.outboxDepth.set({ route: 'support' }, 2);
  m.routePaused.set({ route: 'support' }, 0);
  m.apiRequests.inc({ endpoint: 'sync-raw-emails', status: '200' });
  m.apiRequestDuration.observe({ endpoint: 'sync-raw-emails', status: '200' }, 0.2);
  m.setAdapterState('imap', 'support-inbox', 'idle');
  m.aiUnits.inc({ route: 'support' }, 3);
  m.httpRequests.inc({ method: 'GET', path: '/livez', status: '200' });
  m.collectErrors.inc({ metric: 'mailgate_outbox_depth' });
}

describe('GET /metrics inventory', () => {
  it('exposes every metric family with its type, HELP, label names and buckets', async () => {
    const metrics = createMetrics();
    touchEverySeries(metrics);
    const app = buildApp({ api_keys: [] }, { ...fixture().deps, metrics });
    try {
      const res = await app.inject('/metrics');
      expect(res.statusCode).toBe(200);
      const families = parseExposition(res.body);
      for (const [name, expected] of Object.entries(INVENTORY)) {
        const { buckets, ...rest } = expected;
        expect({ name, ...families.get(name) }).toEqual({ name, ...rest, ...(buckets ? { buckets } : {}) });
      }
    } finally {
      await app.close();
    }
  });
});
