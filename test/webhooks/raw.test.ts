import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { rawConfigSchema, rawProvider, type RawConfig } from '../../adapters/webhooks/raw/index.js';
import { MemorySink } from '../upload/support/memory-sink.js';
import { request, runProvider, testContext } from './support/run-provider.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const SECRET = 'whsec-0123456789abcdef';
const MESSAGE = Buffer.from('From: a@example.com\r\nTo: b@example.com\r\nSubject: caf\xe9\r\n\r\nbody \xff bytes\r\n', 'latin1');

const hmacConfig: RawConfig = rawConfigSchema.parse({ name: 'cf', provider: 'raw', route: 'r', hmac_secret: SECRET });
const bearerConfig: RawConfig = rawConfigSchema.parse({
  name: 'cf',
  provider: 'raw',
  route: 'r',
  bearer_keys: ['old-key-0123456789', 'new-key-0123456789'],
});

function sign(body: Buffer, t: number, secret = SECRET): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** v2, written out as docs/webhooks.md tells a sender: `<t>.<from>\n<to>\n<event id>\n<body>`. */
function signV2(body: Buffer, t: number, h: { from?: string; to?: string; id?: string }, secret = SECRET): string {
  return createHmac('sha256', secret)
    .update(`${t}.${h.from ?? ''}\n${h.to ?? ''}\n${h.id ?? ''}\n`)
    .update(body)
    .digest('hex');
}

const ENVELOPE = { from: 'bounce@example.com', to: 'b@example.com, c@example.com,', id: 'evt-1' };
const envelopeHeaders = (h: { from?: string; to?: string; id?: string }): Record<string, string> => ({
  ...(h.from !== undefined && { 'x-mailgate-envelope-from': h.from }),
  ...(h.to !== undefined && { 'x-mailgate-envelope-to': h.to }),
  ...(h.id !== undefined && { 'x-mailgate-event-id': h.id }),
});

async function run(body: Buffer | string, headers: Record<string, string>, config = hmacConfig) {
  const sink = new MemorySink();
  const outcome = await runProvider(rawProvider, request(body, headers), config, testContext(NOW), sink);
  return { ...outcome, sink };
}

describe('raw provider configuration', () => {
  it('needs exactly one of hmac_secret and bearer_keys, and secrets of 16 characters or more', () => {
    expect(rawConfigSchema.safeParse({ name: 'a', provider: 'raw', route: 'r' }).success).toBe(false);
    expect(
      rawConfigSchema.safeParse({ name: 'a', provider: 'raw', route: 'r', hmac_secret: SECRET, bearer_keys: ['k'.repeat(16)] }).success,
    ).toBe(false);
    expect(rawConfigSchema.safeParse({ name: 'a', provider: 'raw', route: 'r', hmac_secret: 'short' }).success).toBe(false);
    expect(rawConfigSchema.safeParse({ name: 'a', provider: 'raw', route: 'r', bearer_keys: [] }).success).toBe(false);
    expect(rawConfigSchema.safeParse({ name: 'a', provider: 'raw', route: 'r', hmac_secret: SECRET, extra: 1 }).success).toBe(false);
    expect(hmacConfig.max_age_s).toBe(300);
    expect(hmacConfig.body_limit).toBe(26 * 1024 * 1024);
  });
});

describe('raw provider, HMAC', () => {
  it('stores the exact body bytes with the envelope and event id from the headers (v2 signs them)', async () => {
    const t = NOW / 1000;
    const { response, sink } = await run(MESSAGE, {
      'content-type': 'message/rfc822',
      'x-mailgate-signature': `t=${t},v2=${signV2(MESSAGE, t, ENVELOPE)}`,
      ...envelopeHeaders(ENVELOPE),
    });
    expect(response.status).toBe(200);
    expect(sink.stored).toHaveLength(1);
    expect(sink.stored[0]!.raw.equals(MESSAGE)).toBe(true);
    expect(sink.stored[0]!.origin.details['eventId']).toBe('evt-1');
    expect(sink.stored[0]!.origin.envelope).toEqual({
      provider: 'raw',
      from: 'bounce@example.com',
      to: ['b@example.com', 'c@example.com'],
      remoteAddress: '192.0.2.7',
    });
  });

  it('accepts any of several v1 signatures (key rotation) and a timestamp at the edge of the window', async () => {
    const t = NOW / 1000 - 300;
    const header = `t=${t},v1=${sign(MESSAGE, t, 'another-secret-0000000')},v1=${sign(MESSAGE, t)}`;
    const { response, sink } = await run(MESSAGE, { 'x-mailgate-signature': header });
    expect(response.status).toBe(200);
    expect(sink.stored).toHaveLength(1);
  });

  it('refuses envelope and event-id headers a signature does not cover (a replayed body with a new envelope or a stolen event id)', async () => {
    const t = NOW / 1000;
    // v1 signs the body alone: the headers beside it are refused, each named.
    const v1 = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}`, ...envelopeHeaders(ENVELOPE) });
    expect(v1.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    expect(JSON.stringify(v1.response.body)).toContain('x-mailgate-envelope-from, x-mailgate-envelope-to, x-mailgate-event-id');
    const stolenId = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}`, 'x-mailgate-event-id': 'evt-next' });
    expect(stolenId.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    // v2 over other header values: each changed header breaks it.
    for (const changed of [{ from: 'attacker@example.net' }, { to: 'attacker@example.net' }, { id: 'evt-next' }]) {
      const headers = envelopeHeaders({ ...ENVELOPE, ...changed });
      const r = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v2=${signV2(MESSAGE, t, ENVELOPE)}`, ...headers });
      expect(r.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    }
    // A header v2 did not see (sent empty when signed) is refused as well.
    const added = await run(MESSAGE, {
      'x-mailgate-signature': `t=${t},v2=${signV2(MESSAGE, t, { from: ENVELOPE.from })}`,
      ...envelopeHeaders({ from: ENVELOPE.from, id: 'evt-9' }),
    });
    expect(added.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    for (const r of [v1, stolenId, added]) expect(r.sink.submits).toBe(0);
  });

  it('accepts v1 for a request that carries no envelope or event-id header', async () => {
    const t = NOW / 1000;
    const { response, sink } = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}` });
    expect(response.status).toBe(200);
    expect(sink.stored[0]!.origin.envelope).toEqual({ provider: 'raw', remoteAddress: '192.0.2.7' });
  });

  it('refuses an unsigned request with 401 and stores nothing', async () => {
    const { response, sink } = await run(MESSAGE, {});
    expect(response).toMatchObject({ status: 401, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSIGNED' } });
    expect(sink.submits).toBe(0);
  });

  it('refuses a forged signature, a changed body and a garbled header with 403', async () => {
    const t = NOW / 1000;
    const forged = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t, 'wrong-secret-000000000')}` });
    expect(forged.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    const tampered = Buffer.concat([MESSAGE, Buffer.from('x')]);
    const changed = await run(tampered, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}` });
    expect(changed.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    const garbled = await run(MESSAGE, { 'x-mailgate-signature': `v1=${sign(MESSAGE, t)}` });
    expect(garbled.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    for (const r of [forged, changed, garbled]) expect(r.sink.submits).toBe(0);
  });

  it('refuses a genuine signature outside the time window as replayed', async () => {
    for (const t of [NOW / 1000 - 301, NOW / 1000 + 301]) {
      const { response, sink } = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}` });
      expect(response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_REPLAYED' } });
      expect(sink.submits).toBe(0);
    }
  });

  it('refuses an empty body as malformed and an oversized one as too large', async () => {
    const t = NOW / 1000;
    const empty = await run('', { 'x-mailgate-signature': `t=${t},v1=${sign(Buffer.alloc(0), t)}` });
    expect(empty.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED' } });
    const small = rawConfigSchema.parse({ ...hmacConfig, body_limit: 10 });
    const big = await run(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}` }, small);
    expect(big.response).toMatchObject({ status: 413, body: { code: 'MAILGATE_ERR_WEBHOOK_TOO_LARGE' } });
    expect(empty.sink.submits + big.sink.submits).toBe(0);
  });

  it('answers 503 when the store cannot take the message, so the sender retries', async () => {
    const t = NOW / 1000;
    const sink = new MemorySink();
    sink.unavailable = true;
    const req = request(MESSAGE, { 'x-mailgate-signature': `t=${t},v1=${sign(MESSAGE, t)}` });
    const { response } = await runProvider(rawProvider, req, hmacConfig, testContext(NOW), sink);
    expect(response).toMatchObject({ status: 503, body: { code: 'MAILGATE_ERR_INTAKE_UNAVAILABLE' } });
  });
});

describe('raw provider, bearer keys', () => {
  it('accepts every configured key and refuses a missing or wrong one', async () => {
    for (const key of bearerConfig.bearer_keys!) {
      const ok = await run(MESSAGE, { authorization: `Bearer ${key}` }, bearerConfig);
      expect(ok.response.status).toBe(200);
      expect(ok.sink.stored[0]!.raw.equals(MESSAGE)).toBe(true);
    }
    const missing = await run(MESSAGE, {}, bearerConfig);
    expect(missing.response).toMatchObject({ status: 401, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSIGNED' } });
    const wrong = await run(MESSAGE, { authorization: 'Bearer old-key-0123456788' }, bearerConfig);
    expect(wrong.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    expect(missing.sink.submits + wrong.sink.submits).toBe(0);
  });
});

describe('raw simulate', () => {
  it('builds requests the verifier accepts, for both kinds of authentication', async () => {
    for (const config of [hmacConfig, bearerConfig]) {
      const sim = rawProvider.simulate(MESSAGE, config, {
        url: 'http://localhost/webhooks/cf',
        now: NOW,
        envelope: { from: 'f@example.com', to: ['t@example.com'] },
      });
      const { response, sink } = await run(sim.body, sim.headers, config);
      expect(response.status).toBe(200);
      expect(sink.stored[0]!.raw.equals(MESSAGE)).toBe(true);
      expect(sink.stored[0]!.origin.envelope).toMatchObject({ from: 'f@example.com', to: ['t@example.com'] });
    }
  });
});
