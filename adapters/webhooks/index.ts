/**
 * The webhooks adapter: one push endpoint per `adapters.webhooks[]` entry, verified and
 * normalized by the entry's provider module (providers.ts), stored through the intake (`accept`, `whenFull: 'refuse'`) before
 * the provider gets its 2xx.
 */
import { intakeSlot } from '../../src/pipeline/push-slot.js';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { GatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, AdapterContext, AdapterHealth, PushEndpoint } from '../../src/pipeline/types.js';
import { webhookEntrySchema, webhookPath, type WebhookEntry, type WebhookEntryInput } from './config.js';
import { createAuthorizer, createHandler, type EndpointCounters } from './endpoint.js';
import { webhookOperation } from './openapi.js';
import { HEAD_PROBES, providerOf } from './providers.js';
import { ReplayCache } from './replay.js';

export { webhookEntrySchema, webhooksSchema, webhookPath, type WebhookEntry } from './config.js';
export { PROVIDERS } from './providers.js';
export { ReplayCache } from './replay.js';

export interface WebhookAdapterContext {
  logger: Logger;
  /** Unix milliseconds; injectable for tests. */
  now?: () => number;
  /** HTTPS GET used by verifiers (SNS certificates, S3 content). */
  fetch?: (url: string) => Promise<Buffer>;
}

async function httpsGet(url: string): Promise<Buffer> {
  const res = await fetch(url, { redirect: 'error', signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`GET ${new URL(url).host} answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

export function createWebhookAdapter(input: WebhookEntry | WebhookEntryInput, ctx: WebhookAdapterContext): Adapter {
  const entry = webhookEntrySchema.parse(input);
  const now = ctx.now ?? Date.now;
  const logger = ctx.logger.child({ adapter: 'webhooks', instance: entry.name, account: entry.name, provider: entry.provider });
  const slot = intakeSlot(`webhook ${entry.name}`);
  const counters: EndpointCounters = { accepted: 0, duplicates: 0, dead: 0, refused: {}, unavailable: 0 };
  const deps = {
    entry,
    module: providerOf(entry),
    logger,
    now,
    fetch: ctx.fetch ?? httpsGet,
    replay: new ReplayCache(now),
    counters,
    bodyLimit: entry.body_limit,
    intake: () => slot.intake(),
  };
  const handle = createHandler(deps);
  const authorize = createAuthorizer(deps);
  const path = webhookPath(entry);
  const endpoint = (method: 'POST' | 'HEAD'): PushEndpoint => ({
    method,
    path,
    bodyLimit: entry.body_limit,
    tooLarge: 'MAILGATE_ERR_WEBHOOK_TOO_LARGE',
    // Read as it comes (endpoint.ts): a form flood is refused before it is buffered whole.
    streamBody: true,
    public: true,
    ...(authorize && { authorize }),
    handle: (req) => handle(req),
    openapi: webhookOperation(entry, deps.module, method),
  });

  return {
    kind: 'webhooks',
    name: entry.name,
    mode: 'push',
    start: (intake, signal) => slot.start(intake, signal),
    endpoints: () => (HEAD_PROBES.has(entry.provider) ? [endpoint('POST'), endpoint('HEAD')] : [endpoint('POST')]),
    health: (): AdapterHealth[] => [
      {
        name: entry.name,
        ok: true,
        state: 'listening',
        detail: {
          provider: entry.provider,
          path,
          accepted: counters.accepted,
          duplicates: counters.duplicates,
          dead: counters.dead,
          unavailable: counters.unavailable,
          refused: { ...counters.refused },
        },
      },
    ],
  };
}

/**
 * A fetch that answers the SES entry's pinned certificates (`certificates:` URL → PEM file, read
 * and checked now, at start) from memory and fetches any other URL over HTTPS.
 */
export function pinnedFetch(entry: WebhookEntry, fallback: (url: string) => Promise<Buffer> = httpsGet): (url: string) => Promise<Buffer> {
  const pinned = new Map<string, Buffer>();
  for (const [url, path] of Object.entries(entry.provider === 'ses' ? (entry.certificates ?? {}) : {})) {
    let pem: Buffer;
    try {
      pem = readFileSync(path);
      new X509Certificate(pem);
    } catch (err) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        `webhook ${entry.name}: certificates["${url}"]: ${path} is not a readable PEM certificate (${(err as Error).message})`,
      );
    }
    pinned.set(new URL(url).href, pem);
  }
  if (pinned.size === 0) return fallback;
  return async (url) => pinned.get(url) ?? fallback(url);
}

/** The registry's factory: one entry of `adapters.webhooks[]`. */
export function create(entry: WebhookEntry, ctx: AdapterContext): Adapter {
  return createWebhookAdapter(entry, { logger: ctx.logger, fetch: pinnedFetch(entry) });
}

/** The kind's implementation (adapters/webhooks/kind.ts). */
export const implementation: KindImplementation<WebhookEntry> = { create };
