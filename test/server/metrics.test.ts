import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../src/errors.js';
import { createMetrics, Registry } from '../../src/metrics.js';
import { escapeLabelValue } from '../../src/server/prometheus.js';

describe('Prometheus text exposition 0.0.4', () => {
  it('renders counters, gauges and histograms exactly (golden)', async () => {
    const r = new Registry();
    const c = r.counter({ name: 'demo_requests_total', help: 'Requests with a "quote", a back\\slash\nand a newline.', labelNames: ['path', 'code'] });
    const g = r.gauge({ name: 'demo_depth', help: 'Depth.', labelNames: ['route'] });
    const h = r.histogram({ name: 'demo_seconds', help: 'Latency.', labelNames: ['op'], buckets: [0.1, 1, 10] });
    const plain = r.counter({ name: 'demo_plain_total', help: 'No labels, never incremented.' });
    c.inc({ path: '/a"b\\c\nd', code: '200' });
    c.inc({ path: '/a"b\\c\nd', code: '200' }, 2);
    c.inc({ path: '/x', code: '500' }, 0.5);
    g.set({ route: 'support' }, 42);
    g.set({ route: 'sales' }, -Infinity);
    g.dec({ route: 'support' });
    h.observe({ op: 'send' }, 0.05);
    h.observe({ op: 'send' }, 0.1);
    h.observe({ op: 'send' }, 5);
    h.observe({ op: 'send' }, 50);
    expect(plain.name).toBe('demo_plain_total');
    expect(await r.render()).toBe(
      [
        '# HELP demo_requests_total Requests with a "quote", a back\\\\slash\\nand a newline.',
        '# TYPE demo_requests_total counter',
        'demo_requests_total{path="/a\\"b\\\\c\\nd",code="200"} 3',
        'demo_requests_total{path="/x",code="500"} 0.5',
        '# HELP demo_depth Depth.',
        '# TYPE demo_depth gauge',
        'demo_depth{route="support"} 41',
        'demo_depth{route="sales"} -Inf',
        '# HELP demo_seconds Latency.',
        '# TYPE demo_seconds histogram',
        'demo_seconds_bucket{op="send",le="0.1"} 2',
        'demo_seconds_bucket{op="send",le="1"} 2',
        'demo_seconds_bucket{op="send",le="10"} 3',
        'demo_seconds_bucket{op="send",le="+Inf"} 4',
        'demo_seconds_sum{op="send"} 55.15',
        'demo_seconds_count{op="send"} 4',
        '# HELP demo_plain_total No labels, never incremented.',
        '# TYPE demo_plain_total counter',
        'demo_plain_total 0',
        '',
      ].join('\n'),
    );
    expect(escapeLabelValue('a"\\\n')).toBe('a\\"\\\\\\n');
  });

  it('refuses invalid names, label sets and values with a coded error', () => {
    const r = new Registry();
    const c = r.counter({ name: 'ok_total', help: 'x', labelNames: ['route'] });
    const coded = (fn: () => unknown) => {
      try {
        fn();
      } catch (err) {
        return isGatewayError(err, 'MAILGATE_ERR_SERVER_METRIC_INVALID');
      }
      return false;
    };
    expect(coded(() => r.counter({ name: '1bad', help: 'x' }))).toBe(true);
    expect(coded(() => r.counter({ name: 'ok_total', help: 'twice' }))).toBe(true);
    expect(coded(() => r.gauge({ name: 'g', help: 'x', labelNames: ['__reserved'] }))).toBe(true);
    expect(coded(() => r.histogram({ name: 'h', help: 'x', labelNames: ['le'] }))).toBe(true);
    expect(coded(() => r.histogram({ name: 'h2', help: 'x', buckets: [1, 1] }))).toBe(true);
    expect(coded(() => c.inc({} as { route: string }))).toBe(true);
    expect(coded(() => c.inc({ route: 'a', extra: 'b' } as { route: string }))).toBe(true);
    expect(coded(() => c.inc({ route: 'a' }, -1))).toBe(true);
    expect(coded(() => c.inc({ route: 'a' }, Number.NaN))).toBe(true);
  });

  it('fills gauges by collectors on scrape, and keeps the last values when a collector fails', async () => {
    const m = createMetrics({ processMetrics: false, collectTimeoutMs: 50 });
    let depth = 3;
    let fail = false;
    m.outboxDepth.collect(async () => {
      if (fail) throw new Error('store down');
      m.outboxDepth.reset();
      m.outboxDepth.set({ route: 'support' }, depth);
    });
    expect(await m.registry.render()).toContain('mailgate_outbox_depth{route="support"} 3\n');
    depth = 7;
    expect(await m.registry.render()).toContain('mailgate_outbox_depth{route="support"} 7\n');
    fail = true;
    const text = await m.registry.render();
    expect(text).toContain('mailgate_outbox_depth{route="support"} 7\n');
    expect(text).toContain('mailgate_metrics_collect_errors_total{metric="mailgate_outbox_depth"} 1\n');
    m.outboxDepth.collect(() => new Promise(() => undefined));
    expect(await m.registry.render()).toContain('mailgate_metrics_collect_errors_total{metric="mailgate_outbox_depth"} 2\n');
  });

  it('declares every named mailgate metric with HELP and TYPE (golden)', async () => {
    const m = createMetrics({ processMetrics: false });
    const declared = (await m.registry.render()).split('\n').filter((l) => l.startsWith('# TYPE'));
    expect(declared).toEqual([
      '# TYPE mailgate_messages_received_total counter',
      '# TYPE mailgate_messages_parsed_total counter',
      '# TYPE mailgate_messages_queued_total counter',
      '# TYPE mailgate_messages_delivered_total counter',
      '# TYPE mailgate_messages_unchanged_total counter',
      '# TYPE mailgate_messages_rejected_total counter',
      '# TYPE mailgate_messages_dead_lettered_total counter',
      '# TYPE mailgate_outbox_depth gauge',
      '# TYPE mailgate_api_requests_total counter',
      '# TYPE mailgate_api_request_duration_seconds histogram',
      '# TYPE mailgate_imap_connection_state gauge',
      '# TYPE mailgate_ai_units_total counter',
      '# TYPE mailgate_http_requests_total counter',
      '# TYPE mailgate_metrics_collect_errors_total counter',
    ]);
    m.messagesReceived.inc({ route: 'support', adapter: 'imap' }, 2);
    m.aiUnits.inc({ route: 'support' }, 5);
    const text = await m.registry.render();
    expect(text).toContain('mailgate_messages_received_total{route="support",adapter="imap"} 2\n');
    expect(text).toContain('mailgate_ai_units_total{route="support"} 5\n');
  });

  it('keeps exactly one current IMAP connection state per account', async () => {
    const m = createMetrics({ processMetrics: false });
    m.setImapConnectionState('support-inbox', 'connecting');
    m.setImapConnectionState('support-inbox', 'idle');
    m.setImapConnectionState('support-inbox', 'weird-new-state');
    const lines = (await m.registry.render()).split('\n').filter((l) => l.startsWith('mailgate_imap_connection_state{'));
    expect(lines.filter((l) => l.endsWith(' 1'))).toEqual(['mailgate_imap_connection_state{account="support-inbox",state="weird-new-state"} 1']);
    expect(lines.filter((l) => l.endsWith(' 0')).length).toBe(6); // the six states of the adapter (IMAP_CONNECTION_STATES)
  });

  it('adds process metrics by default', async () => {
    const text = await createMetrics().registry.render();
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(text).toMatch(/^process_start_time_seconds \d+$/m);
    expect(text).toMatch(/^nodejs_heap_used_bytes \d+$/m);
  });
});
