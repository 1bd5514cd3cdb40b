/**
 * The client against the emulator over real HTTP, under each fault it can inject: every call
 * ends in success or in a coded error, and the emulator's billing shows nothing twice.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiClient, type AttemptInfo } from '../../src/api/client.js';
import type { FaultRule } from '../../src/emulator/types.js';
import { startEmulator } from '../support/emulator.js';
import { admin, makeDoc, requestsTo, TAG } from '../batcher/helpers.js';

let emu: Awaited<ReturnType<typeof startEmulator>>;
let control: ReturnType<typeof admin>;

beforeAll(async () => {
  emu = await startEmulator();
  control = admin(emu.url);
});
afterAll(async () => {
  await emu.stop();
});
beforeEach(async () => {
  await control.reset();
});

const fast = { baseDelayMs: 2, maxDelayMs: 10, maxRetryAfterMs: 20, maxAttempts: 4 };
const docs = (run: string) => [makeDoc(1, { run }), makeDoc(2, { run }), makeDoc(3, { run })];

async function clientWithSource(options: { timeoutMs?: number; retry?: Record<string, number> } = {}) {
  const attempts: AttemptInfo[] = [];
  const client = createApiClient({
    baseUrl: emu.url,
    token: emu.token,
    retry: { ...fast, ...options.retry },
    timeoutMs: options.timeoutMs ?? 20_000,
    onAttempt: (a) => attempts.push(a),
  });
  await client.ensureSource('acme/inbox');
  attempts.length = 0;
  return { client, attempts };
}

describe('sync-raw-emails under faults', () => {
  const cases: Array<[string, FaultRule, string]> = [
    ['429 with Retry-After', { endpoint: 'sync-raw-emails', status: 429, retry_after: 1, times: 2 }, 'MAILGATE_ERR_API_RATE_LIMITED'],
    ['500', { endpoint: 'sync-raw-emails', status: 500, times: 2 }, 'MAILGATE_ERR_API_SERVER'],
    ['503', { endpoint: 'sync-raw-emails', status: 503, times: 3 }, 'MAILGATE_ERR_API_SERVER'],
    ['409', { endpoint: 'sync-raw-emails', status: 409, times: 1 }, 'MAILGATE_ERR_API_CONFLICT'],
    ['HTML error page', { endpoint: 'sync-raw-emails', status: 502, html: true, times: 2 }, 'MAILGATE_ERR_API_SERVER'],
    ['dropped connection', { endpoint: 'sync-raw-emails', drop: true, times: 2 }, 'MAILGATE_ERR_API_NETWORK'],
    ['dropped after the write', { endpoint: 'sync-raw-emails', drop_after_apply: true, times: 1 }, 'MAILGATE_ERR_API_NETWORK'],
    ['504 after the write', { endpoint: 'sync-raw-emails', status: 504, apply: true, times: 1 }, 'MAILGATE_ERR_API_SERVER'],
    ['slow beyond the deadline', { endpoint: 'sync-raw-emails', delay_ms: 2500, times: 1 }, 'MAILGATE_ERR_API_TIMEOUT'],
    ['answer cut mid-body after the write', { endpoint: 'sync-raw-emails', truncate: true, times: 2 }, 'MAILGATE_ERR_API_NETWORK'],
    [
      'answer stalled mid-body after the write',
      { endpoint: 'sync-raw-emails', truncate: true, stall_ms: 30_000, times: 1 },
      'MAILGATE_ERR_API_TIMEOUT',
    ],
  ];

  it.each(cases)('%s: retried to success, billed once', async (_name, rule, code) => {
    // A deadline long enough for a loaded machine, short enough for the slow case to pass it.
    const { client, attempts } = await clientWithSource({ timeoutMs: 1000 });
    await control.faults([rule]);
    const result = await client.syncRawEmails('acme/inbox', { documents: docs('a'), transform_tag: TAG });
    expect(result.new + result.unchanged).toBe(3);
    const failed = attempts.filter((a) => a.error !== undefined);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((a) => a.error!.code === code && a.retryInMs !== undefined)).toBe(true);
    const stats = await control.stats();
    expect(stats.ai_units).toBe(3);
    expect(stats.comments).toBe(3);
  });

  it('HTML page body lands in the error as a snippet', async () => {
    const { client } = await clientWithSource({ retry: { maxAttempts: 1 } });
    await control.faults([{ endpoint: 'sync-raw-emails', status: 503, html: true, times: 1 }]);
    const err = await client.syncRawEmails('acme/inbox', { documents: docs('b'), transform_tag: TAG }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MAILGATE_ERR_API_SERVER', status: 503, attempts: 1, cause: { code: 'MAILGATE_ERR_API_SERVER' } });
    expect((err as { bodySnippet?: string }).bodySnippet).toMatch(/</);
  });

  it("Retry-After is honoured: the wait before the retry is the server's, not the jitter", async () => {
    const { client, attempts } = await clientWithSource({ retry: { maxRetryAfterMs: 5_000 } });
    await control.faults([{ endpoint: 'sync-raw-emails', status: 429, retry_after: 1, times: 1 }]);
    await client.syncRawEmails('acme/inbox', { documents: docs('c'), transform_tag: TAG });
    expect(attempts.find((a) => a.status === 429)?.retryInMs).toBe(1000);
  });

  it.each([
    ['503', { endpoint: 'sync-raw-emails', status: 503 }, 'MAILGATE_ERR_API_SERVER'],
    ['429', { endpoint: 'sync-raw-emails', status: 429, retry_after: 1 }, 'MAILGATE_ERR_API_RATE_LIMITED'],
    ['dropped connections', { endpoint: 'sync-raw-emails', drop: true }, 'MAILGATE_ERR_API_NETWORK'],
  ] as Array<[string, FaultRule, string]>)(
    'a fault that outlasts the retries (%s) keeps its own code, nothing stored or billed',
    async (_name, rule, code) => {
      const { client, attempts } = await clientWithSource({ retry: { maxAttempts: 3 } });
      await control.faults([rule]);
      const err = await client.syncRawEmails('acme/inbox', { documents: docs('d'), transform_tag: TAG }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code,
        attempts: 3,
        exhausted: 'attempts',
        message: expect.stringContaining('gave up after 3 attempts') as string,
      });
      expect(attempts).toHaveLength(3);
      expect(await control.stats()).toMatchObject({ ai_units: 0, comments: 0 });
    },
  );

  it.each([
    ['422 (transform tag)', { documents: docs('e'), transform_tag: 'nope.0.X' }, 'MAILGATE_ERR_API_UNPROCESSABLE', 422],
    ['400 (schema)', { documents: [{ ...makeDoc(9), comment_id: 'NOT-HEX' }], transform_tag: TAG }, 'MAILGATE_ERR_API_BAD_REQUEST', 400],
  ])('%s is not retried and carries the API message', async (_name, req, code, status) => {
    const { client, attempts } = await clientWithSource();
    const err = await client.syncRawEmails('acme/inbox', req).catch((e: unknown) => e);
    expect(err).toMatchObject({ code, status });
    expect((err as { apiMessage?: string }).apiMessage).toEqual(expect.any(String));
    expect(attempts.filter((a) => a.endpoint === 'sync-raw-emails')).toHaveLength(1);
  });

  it('ensureSource from several callers at once: one creates, the others read it back', async () => {
    const client = createApiClient({ baseUrl: emu.url, token: emu.token, retry: fast });
    await control.faults([{ endpoint: 'sources', delay_ms: 200 }]); // every read answers 404 before any create is applied
    const sources = await Promise.all(Array.from({ length: 6 }, () => client.ensureSource('acme/race')));
    expect(new Set(sources.map((s) => s.id)).size).toBe(1);
    const { sources: counted } = (await control.stats()).requests;
    expect(counted?.['409']).toBe(5); // five lost the race, and read the source back instead of retrying the create
    expect(counted?.['200']).toBe(6); // one create, and one read for each of the others
  });

  it('401 for a wrong token, 404 for an unknown source: each names the resource and what to check', async () => {
    const bad = createApiClient({ baseUrl: emu.url, token: 'wrong', retry: fast });
    const refused = bad.getSource('acme/inbox');
    await expect(refused).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_UNAUTHORIZED', status: 401 });
    await expect(refused).rejects.toThrow(/; the API refused the token for source acme\/inbox: check api\.token \(MAILGATE_API_TOKEN\)/);
    const { client } = await clientWithSource();
    const missing = client.syncRawEmails('acme/missing', { documents: docs('f'), transform_tag: TAG });
    await expect(missing).rejects.toMatchObject({ code: 'MAILGATE_ERR_API_NOT_FOUND', status: 404 });
    // Once "404 Not Found" alone: now which source, and the two ways out.
    await expect(missing).rejects.toThrow(
      /^API answered 404: .*; source acme\/missing was not found: create it in project acme, or check the route's source/,
    );
    expect(requestsTo(await control.stats(), 'sync-raw-emails')).toBe(1);
    const predict = client.predictRawEmails('acme/nodata', 'live', { documents: docs('g'), threshold: 0.5 } as never);
    await expect(predict).rejects.toThrow(/dataset acme\/nodata \(model version live\) was not found: check the route's dataset/);
  });
});
