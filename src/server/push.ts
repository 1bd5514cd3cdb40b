/**
 * The push adapters' endpoints (webhooks, uploads), mounted generically: each one gets the
 * exact body bytes whatever the content type (verification runs over them), lower-case
 * headers, and its answer is sent as it is. A body over the endpoint's `bodyLimit` is answered
 * 413 with a coded error before more of it is read. An endpoint that declares `streamBody` (an
 * upload that may hold an archive) gets the body unread, as a stream that fails with the same
 * 413 error once it passes the limit.
 */
import { Readable, Transform } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, type ErrorCode } from '../errors.js';
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
    const streamed = push.endpoints.filter((e) => e.streamBody === true);
    for (const endpoint of push.endpoints) if (endpoint.streamBody !== true) mount(app, endpoint, guard);
    // Endpoints that take their body unread: in a context of their own, whose parser hands the stream on.
    if (streamed.length > 0) {
      await app.register(async (scope) => {
        scope.removeAllContentTypeParsers();
        scope.addContentTypeParser('*', (_req: FastifyRequest, payload: Readable, done: (err: Error | null, body?: Readable) => void) =>
          done(null, payload),
        );
        for (const endpoint of streamed) mount(scope, endpoint, guard);
      });
    }
  };
}

function mount(app: FastifyInstance, endpoint: PushEndpoint, guard: ReturnType<typeof pushGuard>): void {
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
      const streaming = endpoint.streamBody === true && request.body instanceof Readable;
      if (streaming && declared(request) > endpoint.bodyLimit) {
        void reply.header('connection', 'close');
        return send(reply, tooLarge(endpoint));
      }
      const res = await endpoint.handle(
        {
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          ...(streaming && { stream: limitedBody(request, endpoint) }),
          remoteAddress: request.ip,
        },
        request.params as Record<string, string>,
      );
      // An answer given before the body was read whole: the rest is not read, the connection closes.
      if (streaming && !request.raw.complete) void reply.header('connection', 'close');
      return send(reply, res);
    },
  });
}

function declared(request: FastifyRequest): number {
  const value = request.headers['content-length'];
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : 0;
}

function tooLarge(endpoint: PushEndpoint): PushResponse {
  const code = endpoint.tooLarge ?? 'MAILGATE_ERR_SERVER_BODY_TOO_LARGE';
  return { status: 413, body: { error: { code, message: `the body exceeds ${endpoint.bodyLimit} bytes` } } };
}

/**
 * The body stream of a streaming endpoint, held to its limit. A body whose Content-Length is
 * within the limit is the request's own stream: the HTTP parser delivers no byte past that
 * length, so it cannot go over. Any other (chunked) body goes through `limited`.
 */
function limitedBody(request: FastifyRequest, endpoint: PushEndpoint): Readable {
  const body = request.body as Readable;
  const length = request.headers['content-length'];
  const known = typeof length === 'string' && /^\d{1,15}$/.test(length) && Number(length) <= endpoint.bodyLimit;
  return known && request.headers['transfer-encoding'] === undefined ? body : limited(body, endpoint);
}

/** The body as it comes, ending with a GatewayError in the endpoint's 413 code once it passes the limit. */
function limited(source: Readable, endpoint: PushEndpoint): Readable {
  let seen = 0;
  const out = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen <= endpoint.bodyLimit) return callback(null, chunk);
      const { code, message } = (tooLarge(endpoint).body as { error: { code: ErrorCode; message: string } }).error;
      callback(new GatewayError(code, message));
    },
  });
  source.on('error', (err) => out.destroy(err));
  return source.pipe(out);
}
