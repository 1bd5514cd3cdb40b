/**
 * A Gmail API stand-in over real HTTP, for tests, benchmarks and trying the `gmail` kind without
 * a Workspace domain: the token endpoint (identity.ts), profile, labels, messages list/get (raw,
 * full, minimal), modify and batchModify, history with expiry (mailboxes.ts), the batch endpoint,
 * users.watch with Pub/Sub push carrying a signed OIDC token (pubsub.ts), and per-user quota
 * with measurement (meter.ts). Faults are injected through the returned object: 429/403 rate
 * limits, 401 on valid tokens, expired history, mailboxes without delegation or without Gmail.
 * docs/gmail.md lists which behaviours are documented by Google and which assumed.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Identity } from './identity.js';
import { Mailbox } from './mailboxes.js';
import type { MessageSpec } from './message.js';
import { Meter, type Fault, type MeterLimits, type UserStats } from './meter.js';
import { Pubsub } from './pubsub.js';
import { gmailRequest, apiError, type Reply } from './resources.js';
import { batchReply } from './batch.js';

export interface GmailStandInOptions {
  /** Lifetime of issued access tokens in seconds. Default 3599 (what Google issues). */
  tokenLifetimeS?: number;
  limits?: Partial<MeterLimits>;
}

/** Google allows 100 calls in one batch request. */
export const BATCH_LIMIT = 100;

export class GmailStandIn {
  readonly identity: Identity;
  readonly pubsub: Pubsub;
  readonly mailboxes = new Map<string, Mailbox>();
  /** HTTP requests by kind, for requests-per-message figures. */
  readonly http = { token: 0, api: 0, batch: 0, batchCalls: 0, certs: 0 };
  /** Largest batch seen (calls). */
  maxBatch = 0;
  private readonly meters = new Map<string, Meter>();
  private readonly limits: MeterLimits;
  private fail401 = 0;
  private nextId = 0x18c0000000000000n;
  private seed = 0;
  private server = createServer((req, res) => void this.serve(req, res));
  url = '';

  constructor(options: GmailStandInOptions = {}) {
    this.identity = new Identity(options.tokenLifetimeS ?? 3599);
    this.limits = { perSecond: 250, perMinute: 15_000, ...options.limits };
    this.pubsub = new Pubsub(this.identity);
    this.identity.known = (u) => this.mailboxes.has(u);
  }

  get tokenUrl(): string {
    return `${this.url}/token`;
  }

  get certsUrl(): string {
    return `${this.url}/oauth2/v1/certs`;
  }

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    this.url = `http://${host}:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** The service account key file to write for mailgate (its token_uri is this stand-in's). */
  keyFile(): Record<string, string> {
    return this.identity.keyFile(this.tokenUrl);
  }

  addMailbox(address: string, opts: { delegated?: boolean; forbidden?: boolean } = {}): Mailbox {
    const mb = new Mailbox(address.toLowerCase(), { delegated: opts.delegated ?? true, forbidden: opts.forbidden ?? false }, () =>
      (this.nextId++).toString(16),
    );
    this.mailboxes.set(mb.address, mb);
    if (opts.delegated === false) this.identity.undelegated.add(mb.address);
    return mb;
  }

  mailbox(address: string): Mailbox {
    const mb = this.mailboxes.get(address.toLowerCase());
    if (mb === undefined) throw new Error(`no mailbox ${address}`);
    return mb;
  }

  /** Delivers messages (label INBOX unless given); pushes to a watching subscription. Their ids. */
  deliver(address: string, specs: MessageSpec[], labels: string[] = ['INBOX']): string[] {
    const mb = this.mailbox(address);
    const ids = specs.map((s) => mb.add(s, labels, this.seed++).id);
    const watched = mb.watch;
    // A lapsed watch (its expiration passed) pushes nothing until users.watch is called again.
    if (
      watched !== undefined &&
      watched.expiration > Date.now() &&
      ids.some((id) => [...mb.messages.get(id)!.labelIds].some((l) => watched.labelIds.includes(l)))
    )
      this.pubsub.notify(mb.address, mb.historyId);
    return ids;
  }

  meter(address: string): Meter {
    let m = this.meters.get(address);
    if (m === undefined) this.meters.set(address, (m = new Meter(this.limits)));
    return m;
  }

  stats(address: string): UserStats {
    return this.meter(address.toLowerCase()).stats;
  }

  /** The next `count` calls of the user are refused with a rate limit. */
  rateLimit(address: string, fault: Fault): void {
    this.meter(address.toLowerCase()).inject(fault);
  }

  /** The next `count` API requests with a valid token are answered 401. */
  refuseTokens(count: number): void {
    this.fail401 += count;
  }

  /** The mailbox's watch lapses now (as after its 7 days): no pushes until users.watch is called again. */
  lapseWatch(address: string): void {
    const w = this.mailbox(address).watch;
    if (w !== undefined) w.expiration = Date.now() - 1;
  }

  /** The mailbox's history is dropped: history.list from any earlier id answers 404. */
  expireHistory(address: string): void {
    this.mailbox(address).expire();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', this.url);
    let reply: Reply;
    try {
      reply = this.route(req.method ?? 'GET', url, req.headers, raw);
    } catch (err) {
      reply = apiError(500, 'backendError', (err as Error).message);
    }
    const headers: Record<string, string> = { ...reply.headers };
    let payload: Buffer | undefined;
    if (typeof reply.body === 'string') payload = Buffer.from(reply.body);
    else if (reply.body !== undefined) {
      payload = Buffer.from(JSON.stringify(reply.body));
      headers['content-type'] ??= 'application/json; charset=UTF-8';
    }
    res.writeHead(reply.status, headers);
    res.end(payload);
  }

  private route(method: string, url: URL, headers: IncomingMessage['headers'], raw: Buffer): Reply {
    if (url.pathname === '/token' && method === 'POST') {
      this.http.token += 1;
      const r = this.identity.token(new URLSearchParams(raw.toString('utf8')), this.tokenUrl);
      return { status: r.status, body: r.body };
    }
    if (url.pathname === '/oauth2/v1/certs' && method === 'GET') {
      this.http.certs += 1;
      return { status: 200, body: this.identity.certs(), headers: { 'cache-control': 'public, max-age=3600' } };
    }
    const auth = this.identity.check(headers['authorization']);
    if (url.pathname === '/batch/gmail/v1' && method === 'POST') {
      this.http.batch += 1;
      return batchReply(
        String(headers['content-type'] ?? ''),
        raw.toString('utf8'),
        BATCH_LIMIT,
        (calls) => {
          this.http.batchCalls += calls;
          this.maxBatch = Math.max(this.maxBatch, calls);
        },
        (m, path, query, body) => this.call(auth, m, path, query, body),
      );
    }
    if (!url.pathname.startsWith('/gmail/v1/')) return apiError(404, 'notFound', `No route ${url.pathname}`);
    this.http.api += 1;
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        return apiError(400, 'parseError', 'Invalid JSON payload received.');
      }
    }
    return this.call(auth, method, url.pathname, url.searchParams, body);
  }

  /** One API call (a request, or one call of a batch). */
  private call(auth: ReturnType<Identity['check']>, method: string, path: string, query: URLSearchParams, body: unknown): Reply {
    if (typeof auth === 'string')
      return apiError(401, 'authError', auth, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' });
    if (this.fail401 > 0) {
      this.fail401 -= 1;
      return apiError(401, 'authError', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    }
    const m = /^\/gmail\/v1\/users\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return apiError(404, 'notFound', `No route ${path}`);
    const userId = decodeURIComponent(m[1]!).toLowerCase();
    const user = userId === 'me' ? auth.user : userId;
    if (user !== auth.user) return apiError(403, 'forbidden', 'Delegation denied for ' + auth.user);
    const mb = this.mailboxes.get(user);
    if (mb === undefined) return apiError(400, 'failedPrecondition', 'Mail service not enabled');
    return gmailRequest({ mb, meter: this.meter(user), scopes: auth.scopes, pubsub: this.pubsub }, method, m[2] ?? '', query, body);
  }
}

export async function startGmailStandIn(options: GmailStandInOptions = {}): Promise<GmailStandIn> {
  const s = new GmailStandIn(options);
  await s.listen();
  return s;
}
