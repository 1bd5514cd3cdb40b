/**
 * What runs for a push request before its body is read (the route's onRequest hook): the
 * endpoint's header credential check (401 at once, the body never buffered), then the
 * listener's push budget (503 with Retry-After beyond it). A request refused here is answered
 * at once; up to DISCARD_BYTES more of its body are read and dropped
 * (closing at once would reset the connection and the client could lose the answer), then the
 * connection is closed, so a refused sender cannot make the server read its whole body. The
 * admitted request holds its share of the budget until it is answered or the client goes away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PushEndpoint, PushResponse } from '../pipeline/types.js';
import type { PushBudget, PushRefusalReason, PushTicket } from './push-budget.js';

/** Body bytes of a refused request read (and dropped) after the answer before its connection is closed. */
export const DISCARD_BYTES = 1024 * 1024;

export interface PushGuardOptions {
  budget: PushBudget;
  /** Seconds a refused sender is asked to wait. */
  retryAfterS: number;
  /** Counts a refusal (the metric of refusals by reason). */
  onRefused(reason: PushRefusalReason | 'unauthorized'): void;
}

/** The bytes a request will bring: its Content-Length, or (chunked, or a bad length) the endpoint's limit. */
function declaredBytes(request: FastifyRequest, limit: number): number {
  const value = request.headers['content-length'];
  const n = typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : NaN;
  if (Number.isFinite(n)) return Math.min(n, limit);
  return request.headers['transfer-encoding'] === undefined ? 0 : limit;
}

export function pushGuard(options: PushGuardOptions, send: (reply: FastifyReply, res: PushResponse) => FastifyReply) {
  const tickets = new WeakMap<FastifyRequest, PushTicket>();
  const release = async (request: FastifyRequest): Promise<void> => {
    const ticket = tickets.get(request);
    if (ticket === undefined) return;
    tickets.delete(request);
    options.budget.release(ticket);
  };
  /** The refusal, then at most DISCARD_BYTES more of the body read and dropped, then the connection closed. */
  const refuse = (request: FastifyRequest, reply: FastifyReply, res: PushResponse): FastifyReply => {
    let read = 0;
    request.raw.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read > DISCARD_BYTES) request.raw.socket.destroy();
    });
    return send(reply, res);
  };
  const admit = (endpoint: PushEndpoint) => {
    return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
      const req = { method: request.method, url: request.url, headers: request.headers, remoteAddress: request.ip };
      const denied = endpoint.authorize?.(req);
      if (denied !== undefined) {
        options.onRefused('unauthorized');
        return refuse(request, reply, denied);
      }
      const admission = options.budget.admit(request.ip, declaredBytes(request, Math.max(1, endpoint.bodyLimit)));
      if (!admission.ok) {
        options.onRefused(admission.reason);
        const retryAfter = String(options.retryAfterS);
        const message = `${admission.message}; retry in ${retryAfter} s`;
        return refuse(request, reply, {
          status: 503,
          headers: { 'retry-after': retryAfter },
          body: { error: { code: 'MAILGATE_ERR_SERVER_BUSY', message } },
        });
      }
      tickets.set(request, admission.ticket);
      return undefined;
    };
  };
  return { admit, release };
}
