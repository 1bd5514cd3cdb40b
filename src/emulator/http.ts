/**
 * HTTP answers of the emulated API: the `{status: ok|error}` envelope, always consistent
 * with the HTTP status, and the path-name rules (notes §1 "Path patterns").
 */
import { STATUS_CODES } from 'node:http';
import { createHash } from 'node:crypto';

/**
 * An error answer of the emulated API. Its code is the HTTP status: the emulator speaks the
 * service's protocol, where the status and `message` are all a client gets.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** `404 Not Found`, `401 Unauthorized`: the service's bare status messages. */
export function statusMessage(status: number): string {
  return `${status} ${reason(status)}`;
}

export const notFound = (): ApiError => new ApiError(404, statusMessage(404));
export const badRequest = (message: string): ApiError => new ApiError(400, message);
export const unprocessable = (message: string): ApiError => new ApiError(422, message);

export function errorBody(message: string): { status: 'error'; message: string } {
  return { status: 'error', message };
}

/** An HTML error page like the ones proxies and load balancers send. */
export function htmlErrorPage(status: number): string {
  const title = statusMessage(status);
  return `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;
}

export const PROJECT_RE = /^[A-Za-z0-9_.-]{1,1024}$/;
export const RESOURCE_NAME_RE = /^[A-Za-z0-9_-]{1,256}$/;
export const RESOURCE_ID_RE = /^[0-9a-f]{16}$/;

/** Deterministic 16-hex id of a named resource, so that ids survive a reset-and-replay. */
export function resourceId(kind: 'source' | 'dataset', project: string, name: string): string {
  return createHash('sha256').update(`${kind}:${project}/${name}`).digest('hex').slice(0, 16);
}

/** `?id=a&id=b` (or a single `?id=a`) as a list. */
export function queryList(value: unknown): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map(String);
}
