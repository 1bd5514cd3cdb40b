/** HTTP for the client commands of mailgate's own endpoints (`webhook simulate`, `upload`): one request, its answer, its coded error. */
import { GatewayError } from '../../errors.js';

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
  body: Buffer | undefined,
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
      // A copy into a plain ArrayBuffer: what the DOM typings of fetch take.
      ...(body !== undefined && { body: new Uint8Array(body).buffer }),
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : err instanceof Error ? err.message : String(err);
    throw new GatewayError('MAILGATE_ERR_CLI_UNREACHABLE', `${method} ${target.url}: no answer (${cause})`, { cause: err });
  }
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
