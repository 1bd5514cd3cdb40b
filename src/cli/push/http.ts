/** HTTP for the client commands of mailgate's own endpoints (`webhook simulate`, `upload`): one request, its answer, its coded error. */
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { GatewayError } from '../../errors.js';

/** A request body read from a file as it is sent, with its length declared. */
export interface FileBody {
  path: string;
  length: number;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

/** `https://user:pass@host/path` → the URL without credentials and their basic auth header (fetch refuses credentials in URLs). */
export function splitCredentials(url: string): { url: string; authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `--url ${url} is not an absolute URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `--url must be http or https, got ${parsed.protocol}`);
  }
  if (parsed.username === '' && parsed.password === '') return { url };
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.href, authorization: `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}` };
}

export async function request(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  body: Buffer | FileBody | undefined,
  timeoutMs: number,
): Promise<Answer> {
  const target = splitCredentials(url);
  const all = { ...headers };
  const hasAuth = Object.keys(all).some((k) => k.toLowerCase() === 'authorization');
  if (target.authorization !== undefined && !hasAuth) all['authorization'] = target.authorization;
  try {
    const res = await fetch(target.url, {
      method,
      headers: all,
      ...bodyInit(body, all),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    throw new GatewayError('MAILGATE_ERR_CLI_UNREACHABLE', `${method} ${target.url}: no answer (${cause})`, { cause: err });
  }
}

/** A buffer as a plain ArrayBuffer copy (what the DOM typings of fetch take); a file streamed with its length declared. */
function bodyInit(body: Buffer | FileBody | undefined, headers: Record<string, string>): RequestInit & { duplex?: 'half' } {
  if (body === undefined) return {};
  if (Buffer.isBuffer(body)) return { body: new Uint8Array(body).buffer };
  headers['content-length'] = String(body.length);
  return { body: Readable.toWeb(createReadStream(body.path)) as ReadableStream<Uint8Array>, duplex: 'half' };
}

/**
 * The coded error of an answer: `{error: {code, message}}`, the body of every refusal (an upload
 * endpoint of an older mailgate answered `{code, message}`: read too); undefined without one.
 */
export function codedError(text: string): { code: string; message: string } | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const candidate = (body as { error?: unknown })?.error ?? body;
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const { code, message } = candidate as { code?: unknown; message?: unknown };
  return typeof code === 'string' ? { code, message: typeof message === 'string' ? message : '' } : undefined;
}

export const isSuccess = (status: number): boolean => status >= 200 && status < 300;
