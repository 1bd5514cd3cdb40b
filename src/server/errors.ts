/**
 * Every error answer has the shape `{ error: { code, message } }` with a stable
 * MAILGATE_ERR_* code. Coded errors keep their code and get the HTTP status the catalogue declares
 * with it (src/errors.ts, adapters/<kind>/errors.ts);
 * anything else is logged and answered as MAILGATE_ERR_SERVER_INTERNAL.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE } from '../error-catalogue.js';
import { GatewayError, httpStatusOf, isGatewayError, type ErrorCode } from '../errors.js';

export interface ErrorBody {
  error: { code: string; message: string };
}

/** The HTTP status of a code, as the catalogue declares it (500 for a code without one). */
export function statusFor(code: string): number {
  return httpStatusOf(code, ERROR_CATALOGUE);
}

export function httpError(code: ErrorCode, message: string): GatewayError {
  return new GatewayError(code, message, { status: statusFor(code) });
}

/** Fastify's own client errors (body too large, bad JSON, unsupported type) under our codes. */
function fromFastify(err: FastifyError): GatewayError | undefined {
  const status = err.statusCode;
  if (status === undefined || status < 400 || status >= 500) return undefined;
  if (status === 413) return httpError('MAILGATE_ERR_SERVER_BODY_TOO_LARGE', 'The request body exceeds the limit of this endpoint.');
  if (status === 415) return httpError('MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE', err.message);
  if (status === 404) return httpError('MAILGATE_ERR_SERVER_NOT_FOUND', err.message);
  return httpError('MAILGATE_ERR_SERVER_BAD_REQUEST', err.message);
}

export function sendError(reply: FastifyReply, status: number, code: string, message: string): FastifyReply {
  const body: ErrorBody = { error: { code, message } };
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

function handleError(err: FastifyError | GatewayError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const coded = isGatewayError(err) ? err : fromFastify(err as FastifyError);
  if (coded) {
    const status = statusFor(coded.code);
    if (status >= 500) request.log.error({ err }, 'request failed');
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="mailgate"');
    return sendError(reply, status, coded.code, coded.message);
  }
  request.log.error({ err }, 'unexpected failure while answering');
  return sendError(reply, 500, 'MAILGATE_ERR_SERVER_INTERNAL', `Internal error (request ${request.id}); details are in the mailgate log.`);
}

export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, 404, 'MAILGATE_ERR_SERVER_NOT_FOUND', `No endpoint ${request.method} ${request.url.split('?')[0]}.`),
  );
}
