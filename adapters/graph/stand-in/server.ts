/**
 * A Microsoft Graph stand-in over real HTTP, for tests, benchmarks and trying the `graph` kind
 * without a tenant: the identity platform's metadata and token endpoints (auth.ts), the mail
 * resources (resources.ts, delta.ts), `$batch`, subscriptions with the validation handshake and
 * lifecycle events (subscriptions.ts), and per-mailbox throttling with measurement (meter.ts).
 * Faults are injected through the returned object: 429/503 bursts with `Retry-After`, expired
 * delta tokens (410 or `syncStateNotFound`), 401 on valid tokens, expired tokens, forbidden
 * mailboxes. docs/graph.md lists which behaviours are documented by Microsoft and which assumed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Identity, type StandInClient } from './auth.js';
import { Tenant, type Mailbox } from './mailboxes.js';
import type { MessageSpec } from './message.js';
import { Meter, type MailboxStats, type MeterLimits } from './meter.js';
import { graphError, mailboxRequest, preferences, type GraphReply, type GraphRequest } from './resources.js';
import { Subscriptions } from './subscriptions.js';

export interface GraphStandInOptions {
  tenantId?: string;
  clients?: StandInClient[];
  /** Lifetime of issued access tokens in seconds. Default 3599 (what Entra ID issues). */
  tokenLifetimeS?: number;
  limits?: Partial<MeterLimits>;
}

const BATCH_MAX = 20;

export class GraphStandIn {
  readonly tenant = new Tenant();
  readonly identity: Identity;
  readonly subscriptions: Subscriptions;
  readonly tenantId: string;
  /** HTTP requests by path kind, for request-per-message figures. */
  readonly http = { token: 0, metadata: 0, graph: 0, batch: 0, batchMembers: 0 };
  private readonly meters = new Map<string, Meter>();
  private readonly limits: MeterLimits;
  private fail401 = 0;
  private server = createServer((req, res) => void this.serve(req, res));
  /** Base URL once listening, e.g. `http://127.0.0.1:40123`. */
  url = '';

  constructor(options: GraphStandInOptions = {}) {
    this.tenantId = options.tenantId ?? '7f3c8a52-4a57-4c58-9d8c-2b1f6a0e5d11';
    this.identity = new Identity(
      this.tenantId,
      options.clients ?? [{ clientId: '3b1a5f0e-0000-4000-8000-000000000001', secret: 'stand-in-secret' }],
      options.tokenLifetimeS ?? 3599,
    );
    this.subscriptions = new Subscriptions(this.tenant, this.tenantId);
    this.limits = { concurrency: 4, requests: 10_000, windowMs: 600_000, latencyMs: 2, ...options.limits };
  }

  get graphUrl(): string {
    return `${this.url}/v1.0`;
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    const a = this.server.address() as AddressInfo;
    this.url = `http://${host}:${a.port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  meter(mb: Mailbox): Meter {
    let m = this.meters.get(mb.id);
    if (m === undefined) this.meters.set(mb.id, (m = new Meter(this.limits)));
    return m;
  }

  stats(user: string): MailboxStats {
    const mb = this.tenant.mailbox(user);
    if (mb === undefined) throw new Error(`no mailbox ${user}`);
    return this.meter(mb).stats;
  }

  addMailbox(upn: string, opts: { forbidden?: boolean } = {}): Mailbox {
    return this.tenant.addMailbox(upn, opts);
  }

  /** Puts messages into a folder (a well-known name or a path below one, created where missing); their ids. */
  deliver(user: string, folder: string, specs: MessageSpec[]): string[] {
    const mb = this.tenant.mailbox(user)!;
    const f = this.tenant.ensurePath(mb, folder);
    return specs.map((s) => this.tenant.addMessage(mb, f, s).id);
  }

  /** Messages in a folder. */
  count(user: string, folder: string): number {
    const mb = this.tenant.mailbox(user)!;
    return this.tenant.ensurePath(mb, folder).messages.size;
  }

  /** A message's state by id: its folder and flags. */
  find(user: string, id: string): { folder: string; isRead: boolean; categories: string[] } | undefined {
    const mb = this.tenant.mailbox(user)!;
    const at = this.tenant.locate(mb, id);
    return at && { folder: at.folder.wellKnownName ?? at.folder.displayName, isRead: at.message.isRead, categories: at.message.categories };
  }

  /** The next `count` requests of the mailbox are answered `status` (429, 503, 504) with `Retry-After: retryAfterS`. */
  throttle(user: string, count: number, retryAfterS: number, status = 429): void {
    this.meter(this.tenant.mailbox(user)!).inject({ count, retryAfterS, status });
  }

  /** The next `count` Graph requests with a valid token are answered 401. */
  refuseTokens(count: number): void {
    this.fail401 += count;
  }

  /** Every delta/skip token of the folder minted so far is refused from now on. */
  expireDelta(user: string, folder: string, as: 'gone' | 'syncStateNotFound' = 'gone'): void {
    const mb = this.tenant.mailbox(user)!;
    const f = this.tenant.folder(mb, folder)!;
    f.epoch += 1;
    f.expiredAs = as;
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrivedAt = Date.now();
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', this.url);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    let reply: GraphReply;
    try {
      reply = await this.route(req.method ?? 'GET', url, headers, raw, arrivedAt);
    } catch (err) {
      reply = graphError(500, 'InternalServerError', (err as Error).message);
    }
    send(res, reply);
  }

  private async route(method: string, url: URL, headers: Record<string, string>, raw: Buffer, arrivedAt: number): Promise<GraphReply> {
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] !== 'v1.0') return this.identityRoute(method, parts, raw);
    this.http.graph += 1;
    const denied = this.identity.check(headers['authorization']);
    if (denied !== undefined) return unauthorized(denied);
    if (this.fail401 > 0) {
      this.fail401 -= 1;
      return unauthorized('Lifetime validation failed, the token is expired.');
    }
    let body: unknown;
    if (raw.length > 0 && (headers['content-type'] ?? '').includes('json')) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return graphError(400, 'BadRequest', 'The body is not valid JSON.');
      }
    }
    const path = `/${parts.slice(1).map(decodeURIComponent).join('/')}`;
    if (path === '/$batch' && method === 'POST') return this.batch(body, headers, arrivedAt);
    return this.one({ method, path, query: url.searchParams, headers, body }, arrivedAt);
  }

  private identityRoute(method: string, parts: string[], raw: Buffer): GraphReply {
    const [tenant, a, b, c] = parts;
    if (method === 'GET' && a === 'v2.0' && b === '.well-known' && c === 'openid-configuration') {
      this.http.metadata += 1;
      return this.identity.metadata(this.url, tenant ?? '');
    }
    if (method === 'POST' && a === 'oauth2' && b === 'v2.0' && c === 'token') {
      this.http.token += 1;
      return this.identity.token(tenant ?? '', new URLSearchParams(raw.toString('utf8')), `${this.url}/${tenant}/oauth2/v2.0/token`);
    }
    return { status: 404, body: { error: 'not_found' } };
  }

  /** One Graph request (top level or a `$batch` member). */
  private async one(req: GraphRequest, arrivedAt: number): Promise<GraphReply> {
    const [root, user, ...rest] = req.path.split('/').filter(Boolean);
    if (root === 'subscriptions') return this.subscriptionRoute(req, user);
    if (root !== 'users' || user === undefined) return graphError(400, 'BadRequest', `Unsupported resource ${req.path}.`);
    const mb = this.tenant.mailbox(user);
    if (mb === undefined) return graphError(404, 'ErrorInvalidUser', `The requested user '${user}' is invalid.`);
    return this.meter(mb).run(arrivedAt, preferences(req.headers['prefer']).immutableId, () => {
      if (mb.forbidden) return graphError(403, 'ErrorAccessDenied', 'Access is denied. Check credentials and try again.');
      return mailboxRequest(this.tenant, mb, rest, req, this.graphUrl);
    });
  }

  private async subscriptionRoute(req: GraphRequest, id: string | undefined): Promise<GraphReply> {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (id === undefined && req.method === 'POST') return this.subscriptions.create(body);
    if (id !== undefined && req.method === 'PATCH') return this.subscriptions.renew(id, body);
    if (id !== undefined && req.method === 'DELETE') return this.subscriptions.remove(id);
    if (id !== undefined && req.method === 'GET') return this.subscriptions.get(id);
    return graphError(405, 'MethodNotAllowed', 'Not supported.');
  }

  /**
   * `$batch` (learn.microsoft.com/graph/json-batching): at most 20 requests; independent ones run
   * at the same time, one with `dependsOn` after the one it names, and fails with 424 when that
   * one failed. Bodies that are not JSON come back base64-encoded.
   */
  private async batch(body: unknown, outer: Record<string, string>, arrivedAt: number): Promise<GraphReply> {
    this.http.batch += 1;
    const requests = (body as { requests?: unknown } | undefined)?.requests;
    if (!Array.isArray(requests) || requests.length === 0) return graphError(400, 'BadRequest', 'Invalid batch payload format.');
    if (requests.length > BATCH_MAX)
      return graphError(400, 'BadRequest', `The number of batch requests in the payload exceeds the limit of ${BATCH_MAX}.`);
    this.http.batchMembers += requests.length;
    type Member = { id: string; method: string; url: string; headers?: Record<string, string>; body?: unknown; dependsOn?: string[] };
    const members = requests as Member[];
    const ids = new Set(members.map((m) => m.id));
    if (ids.size !== members.length) return graphError(400, 'BadRequest', 'Batch request ids must be unique.');
    const done = new Map<string, Promise<GraphReply>>();
    const runMember = async (m: Member): Promise<GraphReply> => {
      for (const dep of m.dependsOn ?? []) {
        const prior = done.get(dep);
        if (prior === undefined) return graphError(400, 'BadRequest', `dependsOn names an unknown request ${dep}.`);
        const r = await prior;
        if (r.status >= 400) return { status: 424, body: { error: { code: 'FailedDependency', message: `Request ${dep} failed.` } } };
      }
      const u = new URL(m.url.startsWith('/') ? m.url : `/${m.url}`, 'http://batch');
      const headers = { ...Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])) };
      if (outer['prefer'] && headers['prefer'] === undefined) headers['prefer'] = outer['prefer'];
      const path = u.pathname.split('/').filter(Boolean).map(decodeURIComponent).join('/');
      return this.one({ method: m.method.toUpperCase(), path: `/${path}`, query: u.searchParams, headers, body: m.body }, arrivedAt);
    };
    for (const m of members) done.set(m.id, runMember(m));
    const responses = await Promise.all(
      members.map(async (m) => {
        const r = await done.get(m.id)!;
        const isBuffer = Buffer.isBuffer(r.body);
        return {
          id: m.id,
          status: r.status,
          headers: { ...(isBuffer ? {} : { 'content-type': 'application/json' }), ...r.headers },
          ...(r.body === undefined ? {} : { body: isBuffer ? (r.body as Buffer).toString('base64') : r.body }),
        };
      }),
    );
    return { status: 200, body: { responses } };
  }
}

function unauthorized(message: string): GraphReply {
  return graphError(401, 'InvalidAuthenticationToken', message, { 'www-authenticate': 'Bearer realm="", error="invalid_token"' });
}

function send(res: ServerResponse, reply: GraphReply): void {
  const headers: Record<string, string> = { ...reply.headers };
  let payload: Buffer | undefined;
  if (Buffer.isBuffer(reply.body)) payload = reply.body;
  else if (reply.body !== undefined) {
    payload = Buffer.from(JSON.stringify(reply.body));
    headers['content-type'] ??= 'application/json; odata.metadata=minimal; charset=utf-8';
  }
  res.writeHead(reply.status, headers);
  res.end(payload);
}

export async function startGraphStandIn(options: GraphStandInOptions = {}): Promise<GraphStandIn> {
  const s = new GraphStandIn(options);
  await s.listen();
  return s;
}
