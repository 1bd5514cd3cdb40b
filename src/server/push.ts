/**
 * The push adapters' endpoints (webhooks, uploads), mounted generically: each one gets the
 * exact body bytes whatever the content type (verification runs over them), lower-case
 * headers, and its answer is sent as it is. A body over the endpoint's `bodyLimit` is answered
 * 413 with a coded error before more of it is read.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PushEndpoint, PushResponse } from '../pipeline/types.js';
import { pushGuard, type PushGuardOptions } from './push-guard.js';

export interface PushRoutes {
  /** Each answers with the intake its adapter's `start` got. */
  endpoints: readonly PushEndpoint[];
}

function send(reply: FastifyReply, res: PushResponse): FastifyReply {
  void reply.code(res.status);
  for (const [name, value] of Object.entries(res.headers ?? {})) void reply.header(name, value);
  const body = res.body;
  if (body === undefined) return reply.send();
  if (typeof body === 'string' || Buffer.isBuffer(body)) return reply.send(body);
  if (!reply.hasHeader('content-type')) void reply.type('application/json; charset=utf-8');
  return reply.send(JSON.stringify(body));
}

/** `guard`: the listener's header checks and push budget, run before a body is read (push-guard.ts). */
export function pushRoutes(push: PushRoutes, guardOptions: PushGuardOptions) {
  return async (app: FastifyInstance): Promise<void> => {
    const guard = pushGuard(guardOptions, send);
    app.addHook('onResponse', guard.release);
    app.addHook('onRequestAbort', guard.release);
    // Scoped to this plugin: the raw bytes for any content type, parsed by nobody but the endpoint.
    app.removeAllContentTypeParsers();
    type Done = (err: Error | null, body?: Buffer) => void;
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req: FastifyRequest, body: Buffer, done: Done) => done(null, body));
    for (const endpoint of push.endpoints) {
      app.route({
        method: endpoint.method,
        url: endpoint.path,
        // fastify wants a positive limit; an endpoint that takes no body (GET) declares 0.
        bodyLimit: Math.max(1, endpoint.bodyLimit),
        onRequest: guard.admit(endpoint),
        // Over the limit the provider (or client) gets the endpoint's own code; other errors go to the server's handler.
        errorHandler: (err: FastifyError, _request, reply) => {
          if (err.statusCode !== 413 || endpoint.tooLarge === undefined) throw err;
          const message = `the body exceeds ${endpoint.bodyLimit} bytes`;
          return send(reply, { status: 413, body: { error: { code: endpoint.tooLarge, message } } });
        },
        // Exempt from a loopback listener's Host check: a provider's request arrives through a
        // proxy under the public name, and every push request is authenticated by itself.
        config: { anyHost: true },
        handler: async (request, reply) => {
          const res = await endpoint.handle(
            {
              method: request.method,
              url: request.url,
              headers: request.headers,
              body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
              remoteAddress: request.ip,
            },
            request.params as Record<string, string>,
          );
          return send(reply, res);
        },
      });
    }
  };
}
