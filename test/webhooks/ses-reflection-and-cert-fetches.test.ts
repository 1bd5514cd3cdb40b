/**
 * Regressions of the SES endpoint: it reflected unauthenticated, unbounded `Type`/`TopicArn`
 * text into warn logs and answers (1 MB in, 1 MB logged), and fetched any SNS-host certificate
 * an unauthenticated request named, without a negative cache or a bound on fetches at once.
 */
import { startOn } from '../support/push-start.js';
import { describe, expect, it } from 'vitest';
import { createWebhookAdapter } from '../../adapters/webhooks/index.js';
import { clearCertificateCache, MAX_CERT_FETCHES } from '../../adapters/webhooks/ses/sns.js';
import type { PushResponse } from '../../src/pipeline/types.js';
import { capturingLogger, NOW, recordingSink, toRequest } from './support.js';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:mailgate-inbound';

function snsRequest(fields: Record<string, string>) {
  const body = Buffer.from(
    JSON.stringify({
      Type: 'Notification',
      MessageId: 'm-1',
      TopicArn: TOPIC,
      Message: '{}',
      Timestamp: new Date(NOW).toISOString(),
      SignatureVersion: '2',
      Signature: Buffer.from('not a signature').toString('base64'),
      SigningCertURL: 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-1.pem',
      ...fields,
    }),
  );
  return toRequest({ method: 'POST', headers: { 'content-type': 'text/plain; charset=UTF-8' }, body });
}

function endpoint(fetch: (url: string) => Promise<Buffer>) {
  clearCertificateCache();
  const { logger, lines } = capturingLogger();
  const adapter = createWebhookAdapter(
    { name: 'ses-in', provider: 'ses', route: 'r', topic_arns: [TOPIC] },
    { logger, now: () => NOW, fetch },
  );
  const post = adapter.endpoints!().find((e) => e.method === 'POST')!;
  startOn(adapter, recordingSink());
  return { send: (req: ReturnType<typeof snsRequest>): Promise<PushResponse> => post.handle(req, {}), lines };
}

describe('SES reflected text', () => {
  it('cuts request text quoted in a refusal (answer and log) to a few hundred characters', async () => {
    const { send, lines } = endpoint(() => Promise.reject(new Error('no fetch')));
    const huge = 'X'.repeat(1024 * 1024);
    for (const fields of [{ Type: huge }, { TopicArn: huge }] as Array<Record<string, string>>) {
      const res = await send(snsRequest(fields));
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(res.body).length).toBeLessThan(1000);
    }
    expect(lines().length).toBeLessThan(4000);
  });
});

describe('SES certificate fetches', () => {
  it('remembers a failed fetch: the same URL is not fetched again at once', async () => {
    let fetches = 0;
    const { send } = endpoint(async () => {
      fetches++;
      throw new Error('unreachable');
    });
    expect((await send(snsRequest({}))).status).toBe(503);
    expect((await send(snsRequest({}))).status).toBe(503);
    expect(fetches).toBe(1);
  });

  it('fetches at most MAX_CERT_FETCHES certificates at once, one per URL', async () => {
    let fetches = 0;
    const { send } = endpoint(() => {
      fetches++;
      return new Promise<Buffer>(() => undefined);
    });
    const url = (i: number) => `https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-${i}.pem`;
    const pending = [1, 1, 2, 3, 4, 5, 6, 7, 8].map((i) => send(snsRequest({ SigningCertURL: url(i) })));
    const settled = await Promise.race([Promise.all(pending.slice(MAX_CERT_FETCHES + 1)), new Promise((r) => setTimeout(r, 2000))]);
    expect(fetches).toBe(MAX_CERT_FETCHES);
    expect((settled as PushResponse[]).every((r) => r.status === 503)).toBe(true);
  });
});
