/**
 * The API client's HTTP exchange over Node's `http` and `https` modules: what the transport
 * (./transport.ts) asks of `fetch` — a method, headers, a string body, a signal, and back a
 * status, a header and the body's text — without loading Node's fetch. Node compiles its fetch
 * (undici) at its first use: about 20 ms of the thread that sends, which every `mailgate import`
 * paid before its first message was read, and `http` costs a fraction of it.
 *
 * Connections are kept alive and pooled by the protocol's global agent (keep-alive since Node 19;
 * NODE_USE_ENV_PROXY applies to it as it does to fetch). A gzip or deflate body (the client
 * accepts both) is decompressed. Failures are the socket's own errors (ECONNREFUSED, ECONNRESET…),
 * which the transport classifies as it does fetch's causes; a signal that fires ends the exchange,
 * its body included, with the signal's reason.
 */
import type { ClientRequest, IncomingMessage, RequestOptions } from 'node:http';

/** The answer as the transport reads it: a subset of fetch's Response. */
export interface HttpAnswer {
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export interface HttpInit {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  /** Always 'manual': a 3xx is an answer, never followed. */
  redirect: 'manual';
  signal: AbortSignal;
}

/** One exchange; fetch itself (or a replacement) fits. */
export type HttpFetch = (url: string, init: HttpInit) => Promise<HttpAnswer>;

/** `request` of the URL's protocol: `https` is loaded only once used. */
function requestOf(scheme: string): (url: URL, options: RequestOptions) => ClientRequest {
  if (scheme === 'http:') return process.getBuiltinModule('node:http').request;
  if (scheme === 'https:') return process.getBuiltinModule('node:https').request;
  throw new TypeError(`unsupported protocol ${scheme}`);
}

function headerOf(res: IncomingMessage, name: string): string | null {
  const v = res.headers[name.toLowerCase()];
  if (v === undefined) return null;
  return Array.isArray(v) ? v.join(', ') : v;
}

/** The body's bytes, decoded as its Content-Encoding says (identity, gzip or deflate). */
function bodyOf(res: IncomingMessage, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      res.destroy();
      return reject(signal.reason);
    }
    const chunks: Buffer[] = [];
    let done = false;
    const fail = (err: unknown) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      reject(err);
    };
    const onAbort = () => {
      fail(signal.reason);
      res.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('error', fail);
    res.on('close', () => {
      if (!res.complete)
        fail(Object.assign(new Error('the connection closed before the whole response body arrived'), { code: 'ECONNRESET' }));
    });
    res.on('end', () => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const encoding = (headerOf(res, 'content-encoding') ?? 'identity').trim().toLowerCase();
      try {
        if (encoding === 'identity' || raw.length === 0) resolve(raw.toString('utf8'));
        else if (encoding === 'gzip' || encoding === 'x-gzip')
          resolve(process.getBuiltinModule('node:zlib').gunzipSync(raw).toString('utf8'));
        else if (encoding === 'deflate') resolve(process.getBuiltinModule('node:zlib').inflateSync(raw).toString('utf8'));
        else reject(new Error(`unsupported Content-Encoding ${encoding}`));
      } catch (err) {
        reject(err);
      }
    });
  });
}

/** A fetch for the API client over `http`/`https` and their global agents. */
export function nodeHttpFetch(): HttpFetch {
  return (url, init) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const signal = init.signal;
      if (signal.aborted) return reject(signal.reason);
      let req: ClientRequest;
      try {
        const target = new URL(url);
        req = requestOf(target.protocol)(target, { method: init.method, headers: init.headers });
      } catch (err) {
        return reject(err);
      }
      const onAbort = () => {
        reject(signal.reason);
        req.destroy();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      });
      req.on('response', (res: IncomingMessage) => {
        signal.removeEventListener('abort', onAbort);
        let text: Promise<string> | undefined;
        resolve({
          status: res.statusCode ?? 0,
          headers: { get: (name) => headerOf(res, name) },
          text: () => (text ??= bodyOf(res, signal)),
        });
      });
      req.end(init.body);
    });
}
