import { describe, expect, it } from 'vitest';
import { providerEntrySchema, webhookEntrySchema, webhooksSchema } from '../../adapters/webhooks/config.js';
import { createWebhookAdapter, PROVIDERS } from '../../adapters/webhooks/index.js';
import { ReplayCache } from '../../adapters/webhooks/replay.js';
import { postmark } from '../../adapters/webhooks/postmark/index.js';
import { createLogger } from '../../src/logger.js';
import { NOW, endpointFor, errorCode, recordingSink, sample, toRequest } from './support.js';

const postmarkEntrySchema = providerEntrySchema('postmark');

/** The configuration example of the webhook documentation, with the variables filled in. */
const EXAMPLE = [
  { name: 'sendgrid-in', provider: 'sendgrid', route: 'support', basic_auth: { user: 'mailgate', pass: 'p1' } },
  { name: 'mailgun-in', provider: 'mailgun', route: 'support', signing_key: 'k1' },
  { name: 'postmark-in', provider: 'postmark', route: 'support', basic_auth: { user: 'pm', pass: 'p2' } },
  { name: 'ses-in', provider: 'ses', route: 'support', topic_arns: ['arn:aws:sns:eu-west-1:123456789012:inbound'] },
  { name: 'mandrill-in', provider: 'mandrill', route: 'support', webhook_key: 'k2', url: 'https://mail.example.com/webhooks/mandrill-in' },
  { name: 'sparkpost-in', provider: 'sparkpost', route: 'support', auth_token: 't1' },
  { name: 'worker-in', provider: 'raw', route: 'support', hmac_secret: 'worker-secret-0123456789' },
];

describe('webhook configuration', () => {
  it('accepts the documented example with its defaults', () => {
    const list = webhooksSchema.parse(EXAMPLE);
    expect(list.map((e) => e.provider)).toEqual(['sendgrid', 'mailgun', 'postmark', 'ses', 'mandrill', 'sparkpost', 'raw']);
    expect(list[0]!.body_limit).toBe(40 * 1024 * 1024);
    expect(list[1]).toMatchObject({ max_age_s: 300 });
  });

  it('refuses a field of another provider, an unknown provider, a missing secret and duplicate names or paths', () => {
    const bad = [
      { name: 'a', provider: 'mailgun', route: 'r', signing_key: 'k', basic_auth: { user: 'u', pass: 'p' } },
      { name: 'a', provider: 'mailjet', route: 'r' },
      { name: 'a', provider: 'mailgun', route: 'r' },
      { name: 'a', provider: 'sendgrid', route: 'r' },
      { name: 'a', provider: 'raw', route: 'r' },
      { name: 'a', provider: 'ses', route: 'r', topic_arns: [] },
      { name: 'a', provider: 'mandrill', route: 'r', webhook_key: 'k', url: 'not a url' },
      { name: 'a', provider: 'postmark', route: 'r', basic_auth: { user: 'u', pass: 'p' }, body_limit: 0 },
      { name: 'a', provider: 'sparkpost', route: 'r', auth_token: 't', path: 'no-slash' },
    ];
    for (const entry of bad) expect(webhookEntrySchema.safeParse(entry).success, JSON.stringify(entry)).toBe(false);
    expect(webhooksSchema.safeParse([EXAMPLE[1], EXAMPLE[1]]).success).toBe(false);
    expect(
      webhooksSchema.safeParse([
        { ...EXAMPLE[1], path: '/in' },
        { ...EXAMPLE[5], path: '/in' },
      ]).success,
    ).toBe(false);
  });

  it('describes every field (the configuration reference is generated from the descriptions)', () => {
    for (const option of webhookEntrySchema.def.options) {
      for (const [key, field] of Object.entries(option.shape)) expect((field as { description?: string }).description, key).toBeTruthy();
    }
  });

  it('has a module for every provider name', () => {
    expect(Object.keys(PROVIDERS).sort()).toEqual(['mailgun', 'mandrill', 'postmark', 'raw', 'sendgrid', 'ses', 'sparkpost']);
    for (const [name, module] of Object.entries(PROVIDERS)) expect(module.name).toBe(name);
  });
});

describe('webhook adapter', () => {
  const entry = {
    name: 'postmark-in',
    provider: 'postmark',
    route: 'support',
    basic_auth: { user: 'pm', pass: 'p' },
    path: '/in/pm',
  } as const;

  it('is a push adapter whose start() resolves when the signal aborts', async () => {
    const adapter = createWebhookAdapter(entry, { logger: createLogger(false) });
    expect([adapter.kind, adapter.name, adapter.mode]).toEqual(['webhooks', 'postmark-in', 'push']);
    expect(adapter.endpoints!().map((e) => [e.method, e.path])).toEqual([['POST', '/in/pm']]);
    const ac = new AbortController();
    let done = false;
    const started = adapter.start(recordingSink(), ac.signal).then(() => (done = true));
    await new Promise((r) => setImmediate(r));
    expect(done).toBe(false);
    ac.abort();
    await started;
    expect(done).toBe(true);
    expect(adapter.health!()).toEqual([expect.objectContaining({ name: 'postmark-in', ok: true, state: 'listening' })]);
  });

  it('refuses an invalid entry when built', () => {
    expect(() => createWebhookAdapter({ ...entry, basic_auth: undefined } as never, { logger: createLogger(false) })).toThrow();
  });

  it('answers 503 (the provider retries) when the sink fails with an unexpected error', async () => {
    const { send, sink } = endpointFor(entry);
    sink.accept = () => Promise.reject(new Error('disk on fire'));
    const sim = postmark.simulate(sample('plain-utf8.eml'), postmarkEntrySchema.parse(entry), { url: 'x', now: NOW });
    const res = await send(toRequest(sim));
    expect([res.status, errorCode(res), res.headers?.['Retry-After']]).toEqual([503, 'MAILGATE_ERR_INTAKE_UNAVAILABLE', '30']);
  });

  it('answers 405 to a method other than POST on a provider without a probe', async () => {
    const { post } = endpointFor(entry);
    const res = await post.handle(toRequest({ method: 'GET', headers: {}, body: Buffer.alloc(0) }), {});
    expect(res.status).toBe(405);
  });
});

describe('ReplayCache', () => {
  it('refuses a token seen before until it expires', () => {
    let now = 0;
    const cache = new ReplayCache(() => now, 10);
    expect(cache.remember('a', 100)).toBe(true);
    expect(cache.remember('a', 100)).toBe(false);
    now = 100;
    expect(cache.remember('a', 100)).toBe(true);
    cache.forget('a');
    expect(cache.remember('a', 100)).toBe(true);
  });

  it('stays within its size, pruning expired tokens first, then the oldest', () => {
    let now = 0;
    const cache = new ReplayCache(() => now, 3);
    cache.remember('old', 10);
    cache.remember('b', 1000);
    cache.remember('c', 1000);
    now = 20;
    cache.remember('d', 1000);
    expect(cache.size).toBe(3);
    expect(cache.remember('b', 1000)).toBe(false);
    cache.remember('e', 1000);
    expect(cache.size).toBe(3);
    expect(cache.remember('e', 1000)).toBe(false);
    expect(() => new ReplayCache(() => 0, 0)).toThrowError(expect.objectContaining({ code: 'MAILGATE_ERR_CONFIG_INVALID' }) as Error);
  });
});
