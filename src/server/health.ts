/**
 * Probes and metrics, open without a key (they reveal no message content):
 * GET /livez — 200 while the process can answer at all;
 * GET /readyz — 200 when every readiness check passes, 503 otherwise;
 * GET /metrics — the metrics registry in Prometheus text exposition 0.0.4, as prom-client serializes it.
 */
import type { FastifyInstance } from 'fastify';
import type { ReadyReport, ServerDeps } from './deps.js';

async function boundedReady(deps: ServerDeps, timeoutMs: number): Promise<ReadyReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadyReport>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, checks: { ready: { ok: false, detail: `readiness checks took longer than ${timeoutMs} ms` } } }), timeoutMs);
  });
  try {
    return await Promise.race([deps.ready(), timeout]);
  } catch (err) {
    return { ok: false, checks: { ready: { ok: false, detail: err instanceof Error ? err.message : String(err) } } };
  } finally {
    clearTimeout(timer);
  }
}

export function healthRoutes(deps: ServerDeps, readyTimeoutMs: number) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/livez', async () => ({ status: 'ok' }));

    app.get('/readyz', async (request, reply) => {
      const report = await boundedReady(deps, readyTimeoutMs);
      if (!report.ok) request.log.warn({ checks: report.checks }, 'not ready');
      return reply.code(report.ok ? 200 : 503).send({ status: report.ok ? 'ok' : 'unavailable', checks: report.checks });
    });

    app.get('/metrics', async (_request, reply) => {
      const { registry } = deps.metrics;
      const text = await registry.metrics();
      return reply.type(registry.contentType).header('cache-control', 'no-store').send(text);
    });
  };
}
