/**
 * The request handler of one webhook endpoint: handshake? → verify → normalize → submit → the
 * provider's success answer. Nothing is acknowledged before `Intake.accept` resolved; a refusal
 * answers the provider's status for its kind; our own failures answer 503 so the provider retries.
 */
import { GatewayError, isGatewayError, type ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { contentKey, eventAlias } from '../../src/pipeline/origin.js';
import type { Inbound, Intake, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import type { WebhookEntry } from './config.js';
import { header } from './util.js';
import { readBody } from './body.js';
import { WebhookRefusal, type NormalizedMessage, type ProviderModule, type VerifyContext } from './provider.js';
import type { ReplayCache } from './replay.js';

/** Retry-After when the sink does not say (seconds). */
export const DEFAULT_RETRY_AFTER_S = 30;

export interface EndpointCounters {
  accepted: number;
  duplicates: number;
  dead: number;
  /** Requests refused, by error code. */
  refused: Partial<Record<ErrorCode, number>>;
  /** Requests answered 503 because the message could not be stored. */
  unavailable: number;
}

export interface EndpointDeps {
  entry: WebhookEntry;
  module: ProviderModule<WebhookEntry>;
  logger: Logger;
  now: () => number;
  fetch: (url: string) => Promise<Buffer>;
  replay: ReplayCache;
  counters: EndpointCounters;
  bodyLimit: number;
  /** The intake the adapter's `start` got (throws MAILGATE_ERR_INTAKE_UNAVAILABLE before and after). */
  intake: () => Intake;
}

const errorBody = (code: ErrorCode, message: string) => ({ error: { code, message } });

function retryAfterS(err: unknown): number {
  const ms = isGatewayError(err) ? err.details?.['retryAfterMs'] : undefined;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.ceil(ms / 1000) : DEFAULT_RETRY_AFTER_S;
}

/** A VerifyContext whose remembered tokens can be forgotten again when the request is not stored. */
function requestContext(d: EndpointDeps): { ctx: VerifyContext; release(): void } {
  const tokens: string[] = [];
  const ctx: VerifyContext = {
    now: d.now,
    fetch: d.fetch,
    remember: (token, ttlMs) => {
      const fresh = d.replay.remember(token, ttlMs);
      if (fresh) tokens.push(token);
      return fresh;
    },
  };
  return { ctx, release: () => tokens.forEach((t) => d.replay.forget(t)) };
}

/** The provider's event id as the message's second identity (a retry with other bytes is a duplicate too). */
function aliasOf(adapter: string, instance: string, eventId: string | undefined): { alias?: string } {
  const alias = eventAlias(adapter, instance, eventId);
  return alias === undefined ? {} : { alias };
}

function inbounds(d: EndpointDeps, messages: NormalizedMessage[]): Inbound[] {
  const receivedAt = new Date(d.now());
  const adapter = `webhook:${d.entry.provider}`;
  return messages.map((m) => {
    const key = contentKey(m.raw);
    return {
      raw: m.raw,
      key,
      route: d.entry.route,
      receivedAt,
      ...aliasOf(adapter, d.entry.name, m.eventId),
      origin: {
        adapter,
        instance: d.entry.name,
        id: m.eventId !== undefined && m.eventId !== '' ? m.eventId : key,
        envelope: { provider: d.entry.provider, ...m.envelope },
        details: m.eventId === undefined ? {} : { eventId: m.eventId },
      },
    };
  });
}

function refusal(d: EndpointDeps, r: WebhookRefusal, req: Omit<PushRequest, 'body'> & { body?: Buffer }): PushResponse {
  const status = d.module.refusalStatus(r.kind);
  d.counters.refused[r.code] = (d.counters.refused[r.code] ?? 0) + 1;
  // Never the body, headers, tokens or signatures: the code, our own message and where it came from.
  d.logger.warn(
    { code: r.code, kind: r.kind, status, remoteAddress: req.remoteAddress, bytes: req.body?.length ?? req.headers['content-length'] },
    `webhook refused: ${r.message}`,
  );
  const headers: Record<string, string> = status >= 500 ? { 'Retry-After': String(DEFAULT_RETRY_AFTER_S) } : {};
  return { status, headers, body: errorBody(r.code, r.message) };
}

/**
 * Nothing was stored and the failure is ours (the store, the outbox depth, a verifier that cannot
 * work, a bug): a status the provider retries, with Retry-After.
 */
function unavailable(d: EndpointDeps, err: unknown): PushResponse {
  d.counters.unavailable++;
  const expected =
    err instanceof WebhookRefusal ||
    (isGatewayError(err) && (err.code === 'MAILGATE_ERR_INTAKE_UNAVAILABLE' || err.code === 'MAILGATE_ERR_INTAKE_OUTBOX_FULL'));
  const code: ErrorCode = expected ? (err as GatewayError | WebhookRefusal).code : 'MAILGATE_ERR_INTAKE_UNAVAILABLE';
  const message = expected ? (err as Error).message : 'the message could not be stored; retry later';
  const logged = isGatewayError(err)
    ? { code: err.code, message: err.message }
    : { message: err instanceof Error ? err.message : String(err) };
  d.logger[expected ? 'warn' : 'error']({ err: logged, code }, 'webhook not stored: answered with a retryable status');
  const status = err instanceof WebhookRefusal ? d.module.refusalStatus('unavailable') : 503;
  return { status, headers: { 'Retry-After': String(retryAfterS(err)) }, body: errorBody(code, message) };
}

async function accept(d: EndpointDeps, req: PushRequest, ctx: VerifyContext): Promise<PushResponse> {
  if (req.body.length > d.bodyLimit) throw new WebhookRefusal('too_large', `the body exceeds ${d.bodyLimit} bytes`);
  await d.module.verify(req, d.entry, ctx);
  const messages = await d.module.normalize(req, d.entry, ctx);
  if (messages.length > 0) {
    const results = await d.intake().accept(inbounds(d, messages), { whenFull: 'refuse' });
    for (const r of results) {
      if (r.duplicate) d.counters.duplicates++;
      else if (r.dead) d.counters.dead++;
      else d.counters.accepted++;
    }
  }
  return d.module.accepted?.() ?? { status: 200, body: { ok: true } };
}

/** The provider's header-only check, run before the body is read: a refusal answer, or undefined to go on. */
export function createAuthorizer(d: EndpointDeps): ((req: Omit<PushRequest, 'body'>) => PushResponse | undefined) | undefined {
  const authorize = d.module.authorize;
  if (authorize === undefined) return undefined;
  return (req) => {
    if (req.method !== 'POST') return undefined;
    try {
      authorize(req, d.entry);
      return undefined;
    } catch (err) {
      if (err instanceof WebhookRefusal && err.kind !== 'unavailable') return refusal(d, err, req);
      throw err;
    }
  };
}

export function createHandler(d: EndpointDeps): (req: PushRequest) => Promise<PushResponse> {
  return async (req) => {
    const { ctx, release } = requestContext(d);
    try {
      // The body as it arrives: a form is refused the moment it holds more parts than it may (body.ts).
      if (req.stream !== undefined) req = { ...req, body: await readBody(req.stream, header(req, 'content-type')) };
      const answer = d.module.handshake ? await d.module.handshake(req, d.entry, ctx) : undefined;
      if (answer) return answer;
      if (req.method !== 'POST')
        return { status: 405, headers: { Allow: 'POST' }, body: errorBody('MAILGATE_ERR_WEBHOOK_MALFORMED', 'use POST') };
      return await accept(d, req, ctx);
    } catch (err) {
      // Not stored: a retry with the same token must not look like a replay.
      release();
      if (err instanceof WebhookRefusal && err.kind !== 'unavailable') return refusal(d, err, req);
      return unavailable(d, err);
    }
  };
}
