import { register } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics.js';

describe('mailgate metrics on prom-client', () => {
  it('fills gauges by collectors on scrape, and keeps the last values when a collector fails', async () => {
    const m = createMetrics({ processMetrics: false, collectTimeoutMs: 50 });
    let depth = 3;
    let fail = false;
    m.outboxDepth.collect(async () => {
      if (fail) throw new Error('store down');
      m.outboxDepth.reset();
      m.outboxDepth.set({ route: 'support' }, depth);
    });
    expect(await m.registry.metrics()).toContain('mailgate_outbox_depth{route="support"} 3\n');
    depth = 7;
    expect(await m.registry.metrics()).toContain('mailgate_outbox_depth{route="support"} 7\n');
    fail = true;
    const text = await m.registry.metrics();
    expect(text).toContain('mailgate_outbox_depth{route="support"} 7\n');
    expect(text).toContain('mailgate_metrics_collect_errors_total{metric="mailgate_outbox_depth"} 1\n');
    m.outboxDepth.collect(() => new Promise(() => undefined));
    expect(await m.registry.metrics()).toContain('mailgate_metrics_collect_errors_total{metric="mailgate_outbox_depth"} 2\n');
  });

  it('declares every named mailgate metric with HELP and TYPE (golden)', async () => {
    const m = createMetrics({ processMetrics: false });
    const declared = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('# TYPE'));
    expect(declared).toEqual([
      '# TYPE mailgate_messages_received_total counter',
      '# TYPE mailgate_messages_parsed_total counter',
      '# TYPE mailgate_messages_queued_total counter',
      '# TYPE mailgate_messages_delivered_total counter',
      '# TYPE mailgate_messages_unchanged_total counter',
      '# TYPE mailgate_messages_rejected_total counter',
      '# TYPE mailgate_messages_dead_lettered_total counter',
      '# TYPE mailgate_messages_poison_total counter',
      '# TYPE mailgate_messages_filtered_total counter',
      '# TYPE mailgate_outbox_depth gauge',
      '# TYPE mailgate_route_paused gauge',
      '# TYPE mailgate_api_requests_total counter',
      '# TYPE mailgate_api_request_duration_seconds histogram',
      '# TYPE mailgate_adapter_state gauge',
      '# TYPE mailgate_imap_connection_state gauge',
      '# TYPE mailgate_ai_units_total counter',
      '# TYPE mailgate_http_requests_total counter',
      '# TYPE mailgate_push_refused_total counter',
      '# TYPE mailgate_metrics_collect_errors_total counter',
    ]);
    m.messagesReceived.inc({ route: 'support', adapter: 'imap' }, 2);
    m.aiUnits.inc({ route: 'support' }, 5);
    const text = await m.registry.metrics();
    expect(text).toContain('mailgate_messages_received_total{route="support",adapter="imap"} 2\n');
    expect(text).toContain('mailgate_ai_units_total{route="support"} 5\n');
  });

  it('keeps exactly one current IMAP connection state per account', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setAdapterState('imap', 'support-inbox', 'connecting');
    m.setAdapterState('imap', 'support-inbox', 'idle');
    m.setAdapterState('imap', 'support-inbox', 'weird-new-state');
    const lines = (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('mailgate_imap_connection_state{'));
    expect(lines.filter((l) => l.endsWith(' 1'))).toEqual([
      'mailgate_imap_connection_state{account="support-inbox",state="weird-new-state"} 1',
    ]);
    expect(lines.filter((l) => l.endsWith(' 0')).length).toBe(6); // the six states the imap kind declares (health.states)
  });

  it('keeps one current state per health line of any kind, and a kind-declared gauge only for its own kind', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setAdapterState('graph', 'tenant/ana@example.com', 'backoff');
    m.setAdapterState('graph', 'tenant/ana@example.com', 'ok');
    m.setAdapterState('imap', 'support-inbox', 'idle');
    const text = await m.registry.metrics();
    const current = text.split('\n').filter((l) => l.startsWith('mailgate_adapter_state{') && l.endsWith(' 1'));
    expect(current).toEqual([
      'mailgate_adapter_state{kind="graph",instance="tenant/ana@example.com",state="ok"} 1',
      'mailgate_adapter_state{kind="imap",instance="support-inbox",state="idle"} 1',
    ]);
    expect(text).toContain('mailgate_adapter_state{kind="graph",instance="tenant/ana@example.com",state="backoff"} 0');
    expect(text).not.toMatch(/mailgate_imap_connection_state\{account="tenant/);
  });

  it("adds prom-client's default process metrics by default, and the names dashboards used before", async () => {
    const text = await createMetrics().registry.metrics();
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(text).toMatch(/^process_start_time_seconds \d+$/m);
    expect(text).toMatch(/^nodejs_heap_used_bytes \d+$/m);
    expect(text).toMatch(/^process_cpu_user_seconds_total [\d.e-]+$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds [\d.e-]+$/m);
    expect(text).toContain('# TYPE nodejs_gc_duration_seconds histogram\n');
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+$/m);
    expect(await createMetrics({ processMetrics: false }).registry.metrics()).not.toMatch(/^(process|nodejs)_/m);
  });

  it('keeps each instance in its own registry, apart from the global default one', async () => {
    const a = createMetrics();
    const b = createMetrics();
    a.aiUnits.inc({ route: 'support' }, 4);
    expect(await a.registry.metrics()).toContain('mailgate_ai_units_total{route="support"} 4\n');
    expect(await b.registry.metrics()).not.toContain('mailgate_ai_units_total{route=');
    expect(register.getSingleMetric('mailgate_ai_units_total')).toBeUndefined();
  });

  it('refuses a collector bound that is not a positive integer, with a coded error', () => {
    for (const collectTimeoutMs of [0, -1, 1.5, Number.NaN]) {
      let err: unknown;
      try {
        createMetrics({ processMetrics: false, collectTimeoutMs });
      } catch (e) {
        err = e;
      }
      expect(isGatewayError(err, 'MAILGATE_ERR_CONFIG_INVALID')).toBe(true);
    }
  });
});
