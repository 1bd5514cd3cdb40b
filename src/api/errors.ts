/**
 * Typed failures of the API client: one class, a stable code per kind of failure, the HTTP
 * status, the API's own `message`, and the server's requested wait (`Retry-After`).
 */
import { GatewayError, type ErrorCode } from '../errors.js';
import { parseRetryAfter } from './retry.js';

/** Characters of a non-JSON body kept in the error message (HTML pages from proxies). */
export const BODY_SNIPPET_CHARS = 200;

export interface ApiErrorOptions {
  status?: number;
  /** The `message` of the API's `{"status":"error"}` envelope, when there was one. */
  apiMessage?: string;
  retryAfterMs?: number;
  /** Start of a body that was not the expected JSON. */
  bodySnippet?: string;
  cause?: unknown;
  /** Attempts made when this error ended the call. */
  attempts?: number;
  /** Set when retries ran out: the attempts or the time budget. */
  exhausted?: 'attempts' | 'budget';
  /** What to check or do about a refusal of the token or the target (see namedRefusal). */
  hint?: string;
}

export class ApiError extends GatewayError {
  readonly apiMessage: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly bodySnippet: string | undefined;
  readonly attempts: number | undefined;
  readonly exhausted: 'attempts' | 'budget' | undefined;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(code, message, { cause: options.cause, status: options.status });
    this.name = 'ApiError';
    this.apiMessage = options.apiMessage;
    this.retryAfterMs = options.retryAfterMs;
    this.bodySnippet = options.bodySnippet;
    this.attempts = options.attempts;
    this.exhausted = options.exhausted;
    this.hint = options.hint;
  }
}

/** The resource a request is about: a source (sync, get, create) or a dataset's model version (predict). */
export type ApiResource = { kind: 'source'; name: string } | { kind: 'dataset'; name: string; version?: string };

function hintFor(status: number | undefined, r: ApiResource): string | undefined {
  const what =
    r.kind === 'source' ? `source ${r.name}` : `dataset ${r.name}${r.version === undefined ? '' : ` (model version ${r.version})`}`;
  if (status === 401)
    return `the API refused the token for ${what}: check api.token (MAILGATE_API_TOKEN) and that it is a token of api.url's tenant`;
  if (status === 403)
    return r.kind === 'source'
      ? `the token's account may not write to ${what}: grant it the sources permission on project ${r.name.split('/')[0]} or use another token`
      : `the token's account may not predict with ${what}: grant it the datasets permission on project ${r.name.split('/')[0]} or use another token`;
  if (status === 404)
    return r.kind === 'source'
      ? `${what} was not found: create it in project ${r.name.split('/')[0]}, or check the route's source (project/name) and api.url`
      : `${what} was not found: check the route's dataset (project/name) and model_version, that the dataset has a trained model, and api.url`;
  return undefined;
}

/**
 * A refusal of the token or the target (401, 403, 404) as an error that names the resource and
 * what to check; other errors are returned as they are.
 */
export function namedRefusal(err: unknown, resource: ApiResource): unknown {
  if (!(err instanceof ApiError) || err.hint !== undefined) return err;
  const hint = hintFor(err.status, resource);
  if (hint === undefined) return err;
  const named = new ApiError(err.code, `${err.message}; ${hint}`, {
    status: err.status,
    apiMessage: err.apiMessage,
    retryAfterMs: err.retryAfterMs,
    bodySnippet: err.bodySnippet,
    cause: err.cause,
    attempts: err.attempts,
    exhausted: err.exhausted,
    hint,
  });
  named.stack = err.stack;
  return named;
}

export function isApiError(err: unknown): err is ApiError {
  return err instanceof ApiError;
}

/** The stable code of an HTTP error status. */
export function codeForStatus(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'MAILGATE_ERR_API_BAD_REQUEST';
    case 401:
      return 'MAILGATE_ERR_API_UNAUTHORIZED';
    case 402:
      return 'MAILGATE_ERR_API_QUOTA';
    case 403:
      return 'MAILGATE_ERR_API_FORBIDDEN';
    case 404:
      return 'MAILGATE_ERR_API_NOT_FOUND';
    case 408:
      return 'MAILGATE_ERR_API_TIMEOUT';
    case 409:
      return 'MAILGATE_ERR_API_CONFLICT';
    case 422:
      return 'MAILGATE_ERR_API_UNPROCESSABLE';
    case 429:
      return 'MAILGATE_ERR_API_RATE_LIMITED';
    default:
      return status >= 500 && status <= 599 ? 'MAILGATE_ERR_API_SERVER' : 'MAILGATE_ERR_API_HTTP';
  }
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > BODY_SNIPPET_CHARS ? `${flat.slice(0, BODY_SNIPPET_CHARS)}…` : flat;
}

/** The body parsed as JSON, or undefined when it is empty or not JSON. */
function tryJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export type Envelope = { ok: true; body: Record<string, unknown> } | { ok: false; error: ApiError };

/**
 * Reads a response body against the `{"status":"ok"|"error"}` envelope (notes §7.1).
 * A non-2xx always yields the status's code, with the API's message or a snippet of the body;
 * a 2xx that is not `{"status":"ok"}` JSON is MAILGATE_ERR_API_BAD_RESPONSE.
 */
export function readEnvelope(status: number, text: string, retryAfter: string | null, now: number): Envelope {
  const json = tryJson(text);
  const obj = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  const apiMessage = typeof obj?.message === 'string' ? obj.message : undefined;
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  if (status >= 200 && status <= 299) {
    if (obj?.status === 'ok') return { ok: true, body: obj };
    const what =
      obj === undefined ? (text.trim() === '' ? 'an empty body' : 'a body that is not JSON') : `status ${JSON.stringify(obj.status)}`;
    const detail = apiMessage ?? (obj === undefined && text.trim() !== '' ? snippet(text) : undefined);
    return {
      ok: false,
      error: new ApiError(
        'MAILGATE_ERR_API_BAD_RESPONSE',
        `API answered ${status} with ${what}${detail === undefined ? '' : `: ${detail}`}`,
        {
          status,
          apiMessage,
          retryAfterMs,
          bodySnippet: obj === undefined ? snippet(text) : undefined,
        },
      ),
    };
  }
  const bodySnippet = apiMessage === undefined ? snippet(text) : undefined;
  const reason = apiMessage ?? (bodySnippet === '' ? '(empty body)' : `(non-JSON body) ${bodySnippet}`);
  return {
    ok: false,
    error: new ApiError(codeForStatus(status), `API answered ${status}: ${reason}`, { status, apiMessage, retryAfterMs, bodySnippet }),
  };
}
