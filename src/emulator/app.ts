/**
 * The emulator's fastify app, built in a factory (listening happens in index.ts).
 *
 * Per API request, in order: the fault plan is consulted (a fault models the network or a
 * proxy in front of the service, so it comes before authentication), then the bearer token
 * is checked, then the route runs. Every answer carries `Server-Timing: total;dur=<ms>` and
 * is counted under its endpoint in the stats.
 */
import { listenerOptions } from '../server/guards.js';
import { setTimeout as delay } from 'node:timers/promises';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type HTTPMethods } from 'fastify';
import { FaultPlan } from './faults.js';
import { ApiError, errorBody, htmlErrorPage, reason, statusMessage } from './http.js';
import type { ResolvedOptions } from './options.js';
import { registerAdminRoutes } from './routes/admin.js';
import { registerCommentRoutes } from './routes/comments.js';
import { registerDatasetRoutes } from './routes/datasets.js';
import { registerPredictRoutes } from './routes/predict.js';
import { registerSourceRoutes } from './routes/sources.js';
import { registerSyncRoutes } from './routes/sync.js';
import type { EmulatorState } from './state.js';
import type { EndpointName, FaultRule } from './types.js';

export interface AppContext {
  state: EmulatorState;
  options: ResolvedOptions;
  faults: FaultPlan;
}

/** A route handler returns the answer's fields; the envelope (`status: ok`) is added for it. */
export type ApiHandler = (req: FastifyRequest) => Promise<Record<string, unknown>> | Record<string, unknown>;
export type RegisterApi = (method: HTTPMethods, url: string, endpoint: EndpointName, handler: ApiHandler) => void;

interface RequestInfo {
  start: bigint;
  endpoint: EndpointName | undefined;
  fault: FaultRule | undefined;
  dropped: boolean;
}

/** Socket inactivity after which the emulator closes a connection: longer than api.timeout_ms's default. */
export const EMULATOR_IDLE_TIMEOUT_MS = 300_000;

export function buildEmulatorApp(state: EmulatorState, options: ResolvedOptions, faults: FaultPlan = new FaultPlan()): FastifyInstance {
  const ctx: AppContext = { state, options, faults };
  const app = Fastify({
    ...(typeof options.logger === 'object'
      ? { loggerInstance: options.logger as FastifyBaseLogger }
      : { logger: options.logger ? { level: 'info', redact: ['req.headers.authorization'] } : false }),
    bodyLimit: options.bodyLimit,
    forceCloseConnections: true,
    // The listener bounds of `mailgate serve`, except that a silent connection may last longer
    // than the API client's default deadline (240 s): a stall fault must reach the client's timeout.
    ...listenerOptions({ idle_timeout_ms: EMULATOR_IDLE_TIMEOUT_MS }, 'emulator '),
  });
  const info = new WeakMap<FastifyRequest, RequestInfo>();

  const drop = (req: FastifyRequest, reply: FastifyReply): void => {
    const i = info.get(req);
    if (i) i.dropped = true;
    state.count(i?.endpoint ?? 'other', 'dropped');
    reply.hijack();
    req.raw.socket.destroy();
  };
  /** Status line, headers and half the body of the real answer, then the socket is destroyed (after `stall_ms`). */
  const truncate = (req: FastifyRequest, reply: FastifyReply, answer: Record<string, unknown>, stallMs: number): void => {
    const i = info.get(req);
    if (i) i.dropped = true;
    state.count(i?.endpoint ?? 'other', 'truncated');
    reply.hijack();
    const body = Buffer.from(JSON.stringify(answer));
    reply.raw.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length) });
    reply.raw.write(body.subarray(0, Math.floor(body.length / 2)), () => {
      const cut = (): void => void req.raw.socket.destroy();
      if (stallMs === 0) return cut();
      setTimeout(cut, stallMs).unref();
    });
  };
  const sendFault = (reply: FastifyReply, rule: FaultRule): FastifyReply => {
    const status = rule.status!;
    if (rule.retry_after !== undefined) reply.header('retry-after', String(rule.retry_after));
    if (rule.html === true) return reply.code(status).type('text/html').send(htmlErrorPage(status));
    return reply.code(status).send(errorBody(rule.message ?? statusMessage(status)));
  };

  app.addHook('onRequest', async (req, reply) => {
    const admin = req.url.startsWith('/_emulator/');
    const endpoint = admin ? undefined : ((req.routeOptions.config as { endpoint?: EndpointName } | undefined)?.endpoint ?? 'other');
    const fault = endpoint === undefined ? undefined : faults.pick(endpoint);
    info.set(req, { start: process.hrtime.bigint(), endpoint, fault, dropped: false });
    if (fault?.delay_ms !== undefined) await delay(fault.delay_ms);
    if (fault?.drop === true) return drop(req, reply);
    if (fault?.status !== undefined && fault.apply !== true) return sendFault(reply, fault);
    if (endpoint !== undefined && !authorized(req, options.tokens)) return reply.code(401).send(errorBody(statusMessage(401)));
    return undefined;
  });
  app.addHook('onSend', async (req, reply, payload) => {
    const start = info.get(req)?.start;
    if (start !== undefined) reply.header('server-timing', `total;dur=${Number(process.hrtime.bigint() - start) / 1e6}`);
    return payload;
  });
  app.addHook('onResponse', async (req, reply) => {
    const i = info.get(req);
    if (i?.endpoint !== undefined && !i.dropped) state.count(i.endpoint, reply.statusCode);
  });
  app.setErrorHandler((err, _req, reply) => {
    if (err instanceof ApiError) return reply.code(err.status).send(errorBody(err.message));
    const status = (err as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.code(status).send(errorBody(`${status} ${reason(status)}: ${(err as Error).message}`));
    }
    return reply.code(500).send(errorBody(`500 Internal Server Error: ${(err as Error).message}`));
  });
  // A known path asked with another method is 405 with `Allow`; an unknown path is 404.
  const known: Array<{ method: string; path: RegExp }> = [];
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?', 1)[0]!;
    const allowed = [...new Set(known.filter((k) => k.path.test(path)).map((k) => k.method))];
    if (allowed.length === 0) return reply.code(404).send(errorBody(statusMessage(404)));
    return reply
      .code(405)
      .header('allow', allowed.join(', '))
      .send(errorBody(statusMessage(405)));
  });

  const register: RegisterApi = (method, url, endpoint, handler) => {
    known.push({ method, path: pathPattern(url) });
    app.route({
      method,
      url,
      config: { endpoint },
      handler: async (req, reply) => {
        const fault = info.get(req)?.fault;
        const afterApply = fault?.drop_after_apply === true || fault?.apply === true || fault?.truncate === true;
        let body: Record<string, unknown> | undefined;
        try {
          body = await handler(req);
        } catch (err) {
          if (!afterApply) throw err;
        }
        if (fault?.drop_after_apply === true) return drop(req, reply);
        if (fault?.apply === true) return sendFault(reply, fault);
        if (fault?.truncate === true) return truncate(req, reply, { status: 'ok', ...body }, fault.stall_ms ?? 0);
        return reply.code(200).send({ status: 'ok', ...body });
      },
    });
  };
  registerSourceRoutes(register, ctx);
  registerSyncRoutes(register, ctx);
  registerCommentRoutes(register, ctx);
  registerDatasetRoutes(register, ctx);
  registerPredictRoutes(register, ctx);
  registerAdminRoutes(app, ctx);
  return app;
}

function authorized(req: FastifyRequest, tokens: ReadonlySet<string>): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m !== null && tokens.has(m[1]!);
}

/** `/api/v1/sources/:project/:source` as a regular expression over request paths. */
function pathPattern(url: string): RegExp {
  const segments = url.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`);
}
