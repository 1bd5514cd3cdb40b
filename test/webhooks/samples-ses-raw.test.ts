/** The committed ses/raw samples (samples/webhooks) verify at their clock and carry the sample message byte for byte. */
import { readFileSync } from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { rawConfigSchema, rawProvider } from '../../adapters/webhooks/raw/index.js';
import { clearCertificateCache, sesConfigSchema, sesProvider } from '../../adapters/webhooks/ses/index.js';
import { MemorySink } from '../upload/support/memory-sink.js';
import { request, runProvider, testContext } from './support/run-provider.js';

const dir = 'samples/webhooks';
const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const MIME = readFileSync(`${dir}/raw-message.eml`);
const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-mailgate-sample.pem';
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:mailgate-inbound';
const SUBSCRIBE_PREFIX = 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription';
const OBJECT_URL = 'https://mailgate-inbound-mail.s3.eu-west-1.amazonaws.com/inbound/o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1';

function headersOf(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) out[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

function snsSample(name: string) {
  const body = readFileSync(`${dir}/${name}`);
  const m = JSON.parse(body.toString('utf8')) as Record<string, string>;
  return {
    ...request(body, {
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': m['Type']!,
      'x-amz-sns-message-id': m['MessageId']!,
    }),
    m,
  };
}

beforeEach(() => clearCertificateCache());

describe('samples/webhooks', () => {
  it('raw-request.headers signs raw-message.eml', async () => {
    const config = rawConfigSchema.parse({ name: 'cf', provider: 'raw', route: 'r', hmac_secret: 'whsec-sample-0123456789abcdef' });
    const sink = new MemorySink();
    const { response } = await runProvider(
      rawProvider,
      request(MIME, headersOf(`${dir}/raw-request.headers`)),
      config,
      testContext(NOW),
      sink,
    );
    expect(response.status).toBe(200);
    expect(sink.stored[0]!.raw.equals(MIME)).toBe(true);
    expect(sink.stored[0]!.origin).toMatchObject({
      details: { eventId: 'cf-7d1e5c2a' },
      envelope: { from: 'alice@example.com', to: ['support@example.org'] },
    });
  });

  it.each(['ses-notification-v1.json', 'ses-notification-v2.json', 'ses-notification-s3.json', 'ses-subscription-confirmation.json'])(
    '%s verifies',
    async (name) => {
      const config = sesConfigSchema.parse({
        name: 'ses-in',
        provider: 'ses',
        route: 'r',
        topic_arns: [TOPIC],
        s3: { buckets: ['mailgate-inbound-mail'] },
      });
      const { m, ...req } = snsSample(name);
      const files = { [CERT_URL]: readFileSync(`${dir}/ses-test-cert.pem`), [OBJECT_URL]: MIME, [m['SubscribeURL'] ?? 'none']: 'ok' };
      const ctx = testContext(NOW, files);
      const sink = new MemorySink();
      const { response } = await runProvider(sesProvider, req, config, ctx, sink);
      expect(response.status).toBe(200);
      if (m['Type'] === 'Notification') {
        expect(sink.stored[0]!.raw.equals(MIME)).toBe(true);
        expect(sink.stored[0]!.origin.details['eventId']).toBe('o3vrnil0e2ic28trm7dfhrc2v0clambda4nbp0g1');
      } else {
        expect(ctx.fetched.at(-1)!.startsWith(SUBSCRIBE_PREFIX)).toBe(true);
        expect(sink.submits).toBe(0);
      }
    },
  );
});
