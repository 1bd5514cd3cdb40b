/**
 * mailgate_route_paused{route}: a route that cannot deliver (a refused token, an unknown source
 * or transform tag) shows as 1 on /metrics from its pause until it resumes, every other route as
 * 0 — what the shipped alert MailgateRoutePaused fires on.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics.js';
import { RuntimeEvents } from '../../src/pipeline/events.js';
import { trackPausedRoutes } from '../../src/service/observe.js';

async function paused(text: Promise<string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await text).matchAll(/^mailgate_route_paused\{route="([^"]+)"\} (\S+)$/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

describe('mailgate_route_paused', () => {
  it('is 0 for every route at start, 1 while a route is paused, 0 again once it resumes', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const events = new RuntimeEvents();
    trackPausedRoutes(events, metrics, ['support', 'sales']);
    expect(await paused(metrics.registry.metrics())).toEqual({ support: 0, sales: 0 });

    const since = new Date();
    events.emit('route:paused', {
      route: 'support',
      target: 'acme/support',
      code: 'MAILGATE_ERR_API_UNAUTHORIZED',
      message: '401 Unauthorized',
      since,
      until: new Date(since.getTime() + 60_000),
      pauseMs: 60_000,
    });
    expect(await paused(metrics.registry.metrics())).toEqual({ support: 1, sales: 0 });

    events.emit('route:resumed', { route: 'support', target: 'acme/support', since, pausedMs: 60_000 });
    expect(await paused(metrics.registry.metrics())).toEqual({ support: 0, sales: 0 });
  });
});
