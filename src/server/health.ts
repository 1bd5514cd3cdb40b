/**
 * Probes and metrics, open without a key (they reveal no message content):
 * GET /livez — 200 while the process can answer at all;
 * GET /readyz — 200 when every readiness check passes, 503 otherwise; each check with its state
 *   and error code only (error text names users, hosts and tenants: it is in /api/status);
 * GET /metrics — the metrics registry in Prometheus text exposition 0.0.4, as prom-client serializes it.
 */
import type { FastifyInstance } from 'fastify';
import { isGatewayError } from '../errors.js';
import type { Check, ReadyReport, ServerDeps } from './deps.js';

/** What an unauthenticated caller may see of a check: ok, state and code. */
export function publicCheck(check: Check): Check {
  const state = check.state === undefined ? {} : { state: check.state };
  return { ok: check.ok, ...state, ...(check.code === undefined ? {} : { code: check.code }) };
}

async function boundedReady(deps: ServerDeps, timeoutMs: number): Promise<ReadyReport> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadyReport>((resolve) => {
    const detail = `readiness checks took longer than ${timeoutMs} ms`;
    timer = setTimeout(() => resolve({ ok: false, checks: { ready: { ok: false, state: 'timeout', detail } } }), timeoutMs);
  });
  try {
    return await Promise.race([deps.ready(), timeout]);
  } catch (err) {
    const code = isGatewayError(err) ? { code: err.code } : {};
    const detail = err instanceof Error ? err.message : String(err);
    return { ok: false, checks: { ready: { ok: false, state: 'failed', ...code, detail } } };
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
      const checks = Object.fromEntries(Object.entries(report.checks).map(([name, check]) => [name, publicCheck(check)]));
      return reply.code(report.ok ? 200 : 503).send({ status: report.ok ? 'ok' : 'unavailable', checks });
    });

    app.get('/metrics', async (_request, reply) => {
      const { registry } = deps.metrics;
      const text = await registry.metrics();
      return reply.type(registry.contentType).header('cache-control', 'no-store').send(text);
    });
  };
}
