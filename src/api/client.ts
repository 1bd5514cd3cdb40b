/**
 * The Text Analytics API client: bearer auth, keep-alive (./http.ts pools connections), gzip
 * accepted, one deadline per attempt covering connect, upload and the whole response body,
 * retries per ./retry.ts. The token is sent, never logged or echoed.
 */
import { DEFAULT_REQUEST_TIMEOUT_MS, parseLimit } from '../limits.js';
import { GatewayError } from '../errors.js';
import type { PredictRawEmailsRequest, PredictRawEmailsResponse, SyncRawEmailsRequest, SyncRawEmailsResponse } from '../model/index.js';
import { isEncodedRequest, type EncodedRequest } from './encoded.js';
import { ApiError, namedRefusal, readEnvelope, type ApiResource } from './errors.js';
import { datasetPath, predictPath, sourcePath, type Endpoint, type ModelVersion } from './paths.js';
import { checkPredictResponse, checkSyncResponse } from './responses.js';
import { resolveRetryPolicy, type RetryPolicy } from './retry.js';
import { nodeHttpFetch, type HttpFetch } from './http.js';
import { send, type AttemptInfo, type Check, type HttpCall } from './transport.js';

export type { AttemptInfo } from './transport.js';

export interface ApiClientOptions {
  /** Service root, e.g. `https://cloud.uipath.com/<org>/<tenant>/reinfer_`. */
  baseUrl: string;
  token: string;
  /** Deadline of one attempt in ms (connect + upload + response body). Default 240000 (notes §1). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  userAgent?: string;
  /** Replaces the client's own HTTP exchange over Node's http/https (./http.ts): the global fetch, a proxy's, a test's. */
  fetch?: HttpFetch;
  /** Called after every attempt, successful or not (metrics, logs). */
  onAttempt?: (info: AttemptInfo) => void;
  /** Source of jitter, [0, 1). Default Math.random. */
  random?: () => number;
}

export interface RequestOptions {
  /** Cancels the call, including backoff waits; ends in MAILGATE_ERR_API_ABORTED. */
  signal?: AbortSignal;
  /** sync-raw-emails only: `?no_charge=true` (needs a privilege on the service; notes §1). */
  noCharge?: boolean;
  /** Called after every attempt of this call, after the client's own `onAttempt`. */
  onAttempt?: (info: AttemptInfo) => void;
}

export interface SourceInfo {
  [key: string]: unknown;
  name?: string;
  owner?: string;
  id?: string;
}

export interface ApiClient {
  /** `req` as an object, or already serialized (EncodedRequest: sent as is). */
  syncRawEmails(source: string, req: SyncRawEmailsRequest | EncodedRequest, opts?: RequestOptions): Promise<SyncRawEmailsResponse>;
  predictRawEmails(
    dataset: string,
    version: ModelVersion,
    req: PredictRawEmailsRequest | EncodedRequest,
    opts?: RequestOptions,
  ): Promise<PredictRawEmailsResponse>;
  getSource(source: string, opts?: RequestOptions): Promise<SourceInfo>;
  createSource(source: string, body?: Record<string, unknown>, opts?: RequestOptions): Promise<SourceInfo>;
  /** getSource; createSource when it answers 404; getSource again when a concurrent create won (409). */
  ensureSource(source: string, opts?: RequestOptions): Promise<SourceInfo>;
  /** Creates the dataset when it does not exist (an existing one, answered 409, is fine). */
  ensureDataset(dataset: string, opts?: RequestOptions): Promise<void>;
}

function checkOptions(options: ApiClientOptions): { base: string; timeoutMs: number } {
  let url: URL;
  try {
    url = new URL(options.baseUrl);
  } catch (cause) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `api base URL "${options.baseUrl}" is not a URL`, { cause });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `api base URL must be http(s), got ${url.protocol}`);
  }
  if (typeof options.token !== 'string' || options.token === '' || /[\r\n]/.test(options.token)) {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'api token must be a non-empty single-line string');
  }
  const timeoutMs = parseLimit('api timeoutMs', options.timeoutMs, DEFAULT_REQUEST_TIMEOUT_MS);
  return { base: url.href.replace(/\/+$/, ''), timeoutMs };
}

function serialize(body: unknown): string {
  return isEncodedRequest(body) ? body.json : JSON.stringify(body);
}

function sourceOf(body: Record<string, unknown>): SourceInfo {
  const source = body.source;
  return source !== null && typeof source === 'object' ? (source as SourceInfo) : {};
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  const { base, timeoutMs } = checkOptions(options);
  const call: HttpCall = {
    fetch: options.fetch ?? nodeHttpFetch(),
    headers: {
      authorization: `Bearer ${options.token}`,
      accept: 'application/json',
      'accept-encoding': 'gzip, deflate',
      'content-type': 'application/json',
      'user-agent': options.userAgent ?? 'mailgate',
    },
    timeoutMs,
    policy: resolveRetryPolicy(options.retry),
    random: options.random ?? Math.random,
    onAttempt: options.onAttempt,
  };
  const request = <T>(
    endpoint: Endpoint,
    method: string,
    path: string,
    body: unknown,
    opts: RequestOptions,
    check: Check<T>,
    resource: ApiResource,
  ): Promise<T> =>
    send(
      call,
      {
        endpoint,
        method,
        url: `${base}${path}`,
        body: body === undefined ? undefined : serialize(body),
        signal: opts.signal,
        onAttempt: opts.onAttempt,
        // Creating a source that exists is answered 409: that is the answer, not a transient conflict.
        ...(endpoint === 'create-source' || endpoint === 'create-dataset' ? { final: (err: ApiError) => err.status === 409 } : {}),
      },
      check,
    ).catch((err: unknown) => {
      throw namedRefusal(err, resource);
    });
  const count = (req: { documents: unknown[] } | EncodedRequest): number => (isEncodedRequest(req) ? req.documents : req.documents.length);

  const client: ApiClient = {
    async syncRawEmails(source, req, opts = {}) {
      const query = opts.noCharge === true ? '?no_charge=true' : '';
      return request(
        'sync-raw-emails',
        'POST',
        `${sourcePath(source)}/sync-raw-emails${query}`,
        req,
        opts,
        (status, body) => checkSyncResponse(status, body, count(req)),
        { kind: 'source', name: source },
      );
    },
    async predictRawEmails(dataset, version, req, opts = {}) {
      return request(
        'predict-raw-emails',
        'POST',
        predictPath(dataset, version),
        req,
        opts,
        (status, body) => checkPredictResponse(status, body, count(req)),
        { kind: 'dataset', name: dataset, version: String(version) },
      );
    },
    async getSource(source, opts = {}) {
      return request('get-source', 'GET', sourcePath(source), undefined, opts, (_, body) => sourceOf(body), {
        kind: 'source',
        name: source,
      });
    },
    async createSource(source, body = {}, opts = {}) {
      return request('create-source', 'PUT', sourcePath(source), { source: body }, opts, (_, res) => sourceOf(res), {
        kind: 'source',
        name: source,
      });
    },
    async ensureSource(source, opts = {}) {
      try {
        return await client.getSource(source, opts);
      } catch (err) {
        if (!(err instanceof ApiError) || err.code !== 'MAILGATE_ERR_API_NOT_FOUND') throw err;
      }
      try {
        return await client.createSource(source, {}, opts);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 409) throw err;
        return client.getSource(source, opts); // created by someone else in between
      }
    },
    async ensureDataset(dataset, opts = {}) {
      try {
        await request('create-dataset', 'PUT', datasetPath(dataset), { dataset: {} }, opts, () => undefined, {
          kind: 'dataset',
          name: dataset,
        });
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 409) throw err;
      }
    },
  };
  return client;
}

export { ApiError, readEnvelope };
