/**
 * buildApp(config, deps): the fastify instance of `mailgate serve` — probes, metrics, the
 * admin API, the preview page and the console. A factory: it never listens; the caller does
 * (`app.listen(...)`), tests use `app.inject()` or `listen({ port: 0 })`.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { parseLimit } from '../limits.js';
import { SERVER_DEFAULTS } from './defaults.js';
import { isLoopbackHost } from '../net.js';
import { createLogger } from '../logger.js';
import { adminRoutes } from './admin.js';
import { keyChecker, requireKey } from './auth.js';
import { consoleRoutes } from './console.js';
import type { ServerDeps } from './deps.js';
import { installErrorHandlers } from './errors.js';
import { hostGuard, listenerOptions, type ListenerTimeouts } from './guards.js';
import { consolePageRoute } from './console-page.js';
import { healthRoutes } from './health.js';
import { openApiRoute } from './openapi/route.js';
import { previewPageRoute, type PreviewAuthMode } from './preview-page.js';
import { previewItemRoutes, previewParseRoutes } from './preview-routes.js';
import { pushRoutes } from './push.js';
import { pushGuardOptions, type PushServerOptions } from './push-options.js';

export interface ServerOptions extends ListenerTimeouts {
  /** Admin API keys (`server.api_keys`); empty disables the admin API. */
  api_keys: readonly string[];
  /** Open POST /api/preview and /api/preview/threads without a key (they store and send nothing). Default false. */
  public_preview?: boolean;
  /** Limits of the preview endpoints (`server.preview`). */
  preview?: { max_body_bytes?: number; max_concurrent?: number };
  /** The address the server listens on: a loopback one turns the Host check on. */
  listen_host?: string;
  /** Host values a loopback listener accepts besides localhost, 127.0.0.1 and [::1] (`server.allowed_hosts`). */
  allowed_hosts?: readonly string[];
  /** Bound on the readiness checks of GET /readyz, in ms. Default 5000. */
  ready_timeout_ms?: number;
  /** The push budget of this listener (`server.push`). */
  push?: PushServerOptions;
  /** Proxies whose `X-Forwarded-For` names the client (addresses or CIDR ranges, `server.trusted_proxies`). Default none. */
  trusted_proxies?: readonly string[];
  /**
   * `public`: the listener of `server.public_listen` — `/livez` and the push endpoints marked
   * public, nothing else. Default `private`: everything (the only listener, or the one beside it).
   */
  role?: 'private' | 'public';
}

function observe(deps: ServerDeps) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const path = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, path, status: String(reply.statusCode) });
    const fields = {
      method: request.method,
      path,
      url: request.url.split('?')[0],
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (path.startsWith('/api/') && request.method !== 'GET') request.log.info(fields, 'admin request');
    else request.log.debug(fields, 'request');
  };
}

export function buildApp(config: ServerOptions, deps: ServerDeps): FastifyInstance {
  const preview = {
    bodyLimit: parseLimit('server.preview.max_body_bytes', config.preview?.max_body_bytes, SERVER_DEFAULTS.preview.max_body_bytes),
    maxConcurrent: parseLimit('server.preview.max_concurrent', config.preview?.max_concurrent, SERVER_DEFAULTS.preview.max_concurrent),
  };
  const readyTimeoutMs = parseLimit('server.ready_timeout_ms', config.ready_timeout_ms, 5_000);
  const checker = keyChecker(config.api_keys);
  const publicPreview = config.public_preview ?? false;
  const pageAuth: PreviewAuthMode = publicPreview ? 'open' : checker.enabled ? 'key' : 'disabled';

  const app = Fastify({
    loggerInstance: (deps.logger ?? createLogger(false)).child({ component: 'server' }),
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    ...(config.trusted_proxies !== undefined && config.trusted_proxies.length > 0 && { trustProxy: [...config.trusted_proxies] }),
    ...listenerOptions(config),
  }) as unknown as FastifyInstance;
  installErrorHandlers(app);
  // The public listener has no Host check: its push endpoints are exempt anyway and /livez holds no data.
  if (config.role !== 'public' && config.listen_host !== undefined && isLoopbackHost(config.listen_host)) {
    app.addHook('onRequest', hostGuard(config.allowed_hosts ?? []));
  }
  app.addHook('onResponse', observe(deps));
  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-content-type-options', 'nosniff');
    if (request.url.startsWith('/api/')) void reply.header('cache-control', 'no-store');
  });

  const guard = pushGuardOptions(config.push, config.role ?? 'private', deps.metrics);
  if (config.role === 'public') {
    app.get('/livez', async () => ({ status: 'ok' }));
    const endpoints = (deps.push?.endpoints ?? []).filter((e) => e.public === true);
    if (deps.push && endpoints.length > 0) void app.register(pushRoutes({ ...deps.push, endpoints }, guard));
    return app;
  }
  const startedAt = new Date();
  void app.register(healthRoutes(deps, readyTimeoutMs));
  void app.register(openApiRoute({ push: deps.push?.endpoints ?? [], publicPreview }));
  void app.register(previewPageRoute(pageAuth));
  void app.register(consolePageRoute(pageAuth, checker.enabled));
  void app.register(async (admin) => {
    admin.addHook('onRequest', requireKey(checker));
    await admin.register(adminRoutes(deps, startedAt));
    await admin.register(consoleRoutes(deps));
    await admin.register(previewItemRoutes(deps));
    if (!publicPreview) await admin.register(previewParseRoutes(deps, preview));
  });
  if (publicPreview) void app.register(previewParseRoutes(deps, preview));
  if (deps.push && deps.push.endpoints.length > 0) void app.register(pushRoutes(deps.push, guard));
  return app;
}
