/**
 * Runs one request through a provider the way the webhook endpoint does (handshake, verify,
 * normalize, submit; a refusal answers the provider's status and stores nothing), so the
 * provider tests need not wait for the endpoint and the server.
 */
import { isGatewayError } from '../../../src/errors.js';
import { contentKey } from '../../../src/pipeline/origin.js';
import type { Intake, PushRequest, PushResponse } from '../../../src/pipeline/types.js';
import { WebhookRefusal, type NormalizedMessage, type ProviderModule, type VerifyContext } from '../../../adapters/webhooks/provider.js';

export interface Outcome {
  response: PushResponse;
  messages: NormalizedMessage[];
}

export async function runProvider<C>(
  p: ProviderModule<C>,
  req: PushRequest,
  config: C,
  ctx: VerifyContext,
  sink: Intake,
): Promise<Outcome> {
  try {
    const early = p.handshake ? await p.handshake(req, config, ctx) : undefined;
    if (early) return { response: early, messages: [] };
    await p.verify(req, config, ctx);
    const messages = await p.normalize(req, config, ctx);
    const results = await sink.accept(
      messages.map((m) => ({
        raw: m.raw,
        key: contentKey(m.raw),
        route: 'r',
        receivedAt: new Date(ctx.now()),
        origin: {
          adapter: `webhook:${p.name}`,
          instance: '',
          id: m.eventId ?? '',
          details: m.eventId ? { eventId: m.eventId } : {},
          envelope: m.envelope,
        },
      })),
      { whenFull: 'refuse' },
    );
    return { response: p.accepted ? p.accepted() : { status: 200, body: { results } }, messages };
  } catch (err) {
    if (isGatewayError(err) && err.code === 'MAILGATE_ERR_INTAKE_UNAVAILABLE') {
      return { response: { status: p.refusalStatus('unavailable'), body: { code: err.code } }, messages: [] };
    }
    if (!(err instanceof WebhookRefusal)) throw err;
    return { response: { status: p.refusalStatus(err.kind), body: { code: err.code, message: err.message } }, messages: [] };
  }
}

/** A VerifyContext with a fixed clock, a real replay cache and a fetch that serves a fixed map (never the network). */
export function testContext(now: number, files: Record<string, Buffer | string> = {}): VerifyContext & { fetched: string[] } {
  const seen = new Set<string>();
  const fetched: string[] = [];
  return {
    fetched,
    now: () => now,
    remember(token) {
      if (seen.has(token)) return false;
      seen.add(token);
      return true;
    },
    async fetch(url) {
      fetched.push(url);
      const body = files[url];
      if (body === undefined) throw new Error(`no such URL in the test: ${url}`);
      return Buffer.from(body);
    },
  };
}

export function request(body: Buffer | string, headers: Record<string, string> = {}): PushRequest {
  return { method: 'POST', url: '/webhooks/in', headers, body: Buffer.from(body), remoteAddress: '192.0.2.7' };
}
