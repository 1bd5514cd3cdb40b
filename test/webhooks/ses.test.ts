import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  clearCertificateCache,
  sesConfigSchema,
  sesProvider,
  signedSnsMessage,
  snsRequest,
  type SesConfig,
  type SnsSignedFields,
} from '../../adapters/webhooks/ses/index.js';
import { MemorySink } from '../upload/support/memory-sink.js';
import { request, runProvider, testContext } from './support/run-provider.js';

const NOW = Date.UTC(2026, 10, 24, 12, 0, 0);
const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:inbound';
const CERT_URL = 'https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-test.pem';
const SUBSCRIBE_URL = `https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&TopicArn=${TOPIC}&Token=abc`;
const MIME = Buffer.from('From: a@example.com\r\nTo: in@example.org\r\nSubject: caf\xe9\r\n\r\nbinary \xff\xfe body\r\n', 'latin1');

let keyPem = '';
let certPem = '';
let otherKeyPem = '';
let ecCertPem = '';

/** A throwaway RSA key and self-signed certificate, made by the openssl CLI (installed with the system). */
function makeCertificate(dir: string, name: string, keySpec = ['rsa:2048']): { key: string; cert: string } {
  const key = join(dir, `${name}.key`);
  const cert = join(dir, `${name}.pem`);
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', ...keySpec, '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${name}`],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(key, 'utf8'), cert: readFileSync(cert, 'utf8') };
}

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-sns-'));
  ({ key: keyPem, cert: certPem } = makeCertificate(dir, 'sns'));
  otherKeyPem = makeCertificate(dir, 'attacker').key;
  ecCertPem = makeCertificate(dir, 'ec', ['ec', '-pkeyopt', 'ec_paramgen_curve:P-256']).cert;
});

beforeEach(() => clearCertificateCache());

const config: SesConfig = sesConfigSchema.parse({ name: 'ses-in', provider: 'ses', route: 'r', topic_arns: [TOPIC] });

function sesNotification(action: Record<string, unknown>, content?: string, type = 'Received'): string {
  return JSON.stringify({
    notificationType: type,
    mail: {
      timestamp: '2026-11-24T11:59:58.000Z',
      source: 'bounce@example.com',
      messageId: 'ses-msg-0001',
      destination: ['in@example.org', 'cc@example.org'],
    },
    receipt: {
      recipients: ['in@example.org'],
      spamVerdict: { status: 'PASS' },
      virusVerdict: { status: 'PASS' },
      spfVerdict: { status: 'PASS' },
      dkimVerdict: { status: 'GRAY' },
      dmarcVerdict: { status: 'FAIL' },
      action,
    },
    ...(content !== undefined && { content }),
  });
}

function notification(over: Partial<SnsSignedFields> = {}, version: 1 | 2 = 2, key = keyPem, certUrl = CERT_URL): Record<string, string> {
  const fields: SnsSignedFields = {
    Type: 'Notification',
    MessageId: 'sns-0001',
    TopicArn: TOPIC,
    Subject: 'Amazon SES Email Receipt Notification',
    Message: sesNotification({ type: 'SNS', topicArn: TOPIC, encoding: 'BASE64' }, MIME.toString('base64')),
    Timestamp: '2026-11-24T11:59:59.000Z',
    ...over,
  };
  return signedSnsMessage(fields, key, certUrl, version);
}

function confirmation(
  type: 'SubscriptionConfirmation' | 'UnsubscribeConfirmation',
  over: Partial<SnsSignedFields> = {},
): Record<string, string> {
  const fields: SnsSignedFields = {
    Type: type,
    MessageId: 'sns-sub-1',
    TopicArn: TOPIC,
    Message: `You have chosen to subscribe to the topic ${TOPIC}.`,
    SubscribeURL: SUBSCRIBE_URL,
    Token: 'abc',
    Timestamp: '2026-11-24T11:59:59.000Z',
    ...over,
  };
  return signedSnsMessage(fields, keyPem, CERT_URL, 1);
}

async function post(
  message: Record<string, string> | string,
  cfg = config,
  files: Record<string, Buffer | string> = { [CERT_URL]: certPem },
) {
  const sink = new MemorySink();
  const ctx = testContext(NOW, files);
  const req = typeof message === 'string' ? request(message) : { ...request(''), ...snsRequest(message) };
  const outcome = await runProvider(sesProvider, req, cfg, ctx, sink);
  return { ...outcome, sink, fetched: ctx.fetched };
}

describe('SES notifications', () => {
  it.each([1, 2] as const)('verifies SignatureVersion %i and stores the exact MIME with the envelope and verdicts', async (version) => {
    const { response, sink, fetched } = await post(notification({}, version));
    expect(response.status).toBe(200);
    expect(sink.stored).toHaveLength(1);
    expect(sink.stored[0]!.raw.equals(MIME)).toBe(true);
    expect(sink.stored[0]!.origin.details['eventId']).toBe('ses-msg-0001');
    expect(sink.stored[0]!.origin.envelope).toEqual({
      provider: 'ses',
      from: 'bounce@example.com',
      to: ['in@example.org'],
      spamVerdict: 'PASS',
      spf: 'PASS',
      dkim: 'GRAY',
      dmarc: 'FAIL',
      extra: { snsMessageId: 'sns-0001', topicArn: TOPIC, virusVerdict: 'PASS', destination: 'in@example.org, cc@example.org' },
    });
    expect(fetched).toEqual([CERT_URL]);
  });

  it('fetches a certificate once for several messages', async () => {
    const sink = new MemorySink();
    const ctx = testContext(NOW, { [CERT_URL]: certPem });
    for (const id of ['a', 'b']) {
      const req = { ...request(''), ...snsRequest(notification({ MessageId: id })) };
      expect((await runProvider(sesProvider, req, config, ctx, sink)).response.status).toBe(200);
    }
    expect(ctx.fetched).toEqual([CERT_URL]);
  });

  it('takes UTF8-encoded content as UTF-8 bytes', async () => {
    const text = 'From: a@example.com\r\nSubject: é\r\n\r\nhi\r\n';
    const msg = notification({ Message: sesNotification({ type: 'SNS', topicArn: TOPIC, encoding: 'UTF8' }, text) });
    const { sink } = await post(msg);
    expect(sink.stored[0]!.raw.equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('refuses a message changed after signing, or signed by another key, as forged (403)', async () => {
    const changed = { ...notification(), Subject: 'changed' };
    const other = notification({}, 2, otherKeyPem);
    for (const m of [changed, other]) {
      const { response, sink } = await post(m);
      expect(response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
      expect(sink.submits).toBe(0);
    }
    clearCertificateCache();
    const ec = await post(notification(), config, { [CERT_URL]: ecCertPem });
    expect(ec.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
  });

  it('refuses an unsigned message (401) and one whose headers disagree with the body (403)', async () => {
    const unsigned: Record<string, string> = { ...notification() };
    delete unsigned['Signature'];
    const a = await post(unsigned);
    expect(a.response).toMatchObject({ status: 401, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSIGNED' } });
    const req = { ...request(''), ...snsRequest(notification()) };
    req.headers = { ...req.headers, 'x-amz-sns-message-id': 'other' };
    const sink = new MemorySink();
    const b = await runProvider(sesProvider, req, config, testContext(NOW, { [CERT_URL]: certPem }), sink);
    expect(b.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    expect(a.sink.submits + sink.submits).toBe(0);
  });

  it('refuses a message older than max_age_s (or from the future) as replayed', async () => {
    for (const Timestamp of ['2026-11-24T10:54:59.000Z', '2026-11-24T12:05:01.000Z']) {
      const { response, sink } = await post(notification({ Timestamp }));
      expect(response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_REPLAYED' } });
      expect(sink.submits).toBe(0);
    }
    expect((await post(notification({ Timestamp: '2026-11-24T10:55:01.000Z' }))).response.status).toBe(200);
  });

  it('refuses a topic not in topic_arns without fetching anything', async () => {
    const { response, sink, fetched } = await post(notification({ TopicArn: 'arn:aws:sns:eu-west-1:999999999999:theirs' }));
    expect(response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED' } });
    expect(fetched).toEqual([]);
    expect(sink.submits).toBe(0);
  });

  it('refuses a certificate URL off the SNS hosts (403) and answers 503 when the certificate cannot be fetched', async () => {
    for (const url of [
      'http://sns.eu-west-1.amazonaws.com/x.pem',
      'https://sns.eu-west-1.amazonaws.com.evil.example/x.pem',
      'https://evil.example/x.pem',
      'https://sns.eu-west-1.amazonaws.com/x.txt',
    ]) {
      const { response, fetched, sink } = await post(notification({}, 2, keyPem, url), config, { [url]: certPem });
      expect(response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_CERTIFICATE' } });
      expect(fetched).toEqual([]);
      expect(sink.submits).toBe(0);
    }
    const down = await post(notification(), config, {});
    expect(down.response).toMatchObject({ status: 503, body: { code: 'MAILGATE_ERR_WEBHOOK_CERTIFICATE' } });
    expect(down.sink.submits).toBe(0);
  });

  it('refuses SignatureVersion 1 when only 2 is configured', async () => {
    const v2only = sesConfigSchema.parse({ ...config, signature_versions: [2] });
    const { response } = await post(notification({}, 1), v2only);
    expect(response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
  });

  it('refuses a body that is not JSON, a truncated one and an oversized one', async () => {
    const whole = JSON.stringify(notification());
    const notJson = await post('hello');
    expect(notJson.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED' } });
    const cut = await post(whole.slice(0, whole.length - 20));
    expect(cut.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED' } });
    const small = sesConfigSchema.parse({ ...config, body_limit: 100 });
    const big = await post(notification(), small);
    expect(big.response).toMatchObject({ status: 413, body: { code: 'MAILGATE_ERR_WEBHOOK_TOO_LARGE' } });
    expect(notJson.sink.submits + cut.sink.submits + big.sink.submits).toBe(0);
  });

  it('stores nothing for SES topic validation text and refuses sending events', async () => {
    const check = await post(notification({ Message: 'Successfully validated SNS topic for Amazon SES event publishing.' }));
    expect(check.response.status).toBe(200);
    expect(check.sink.stored).toHaveLength(0);
    const bounce = await post(notification({ Message: sesNotification({ type: 'SNS' }, 'x', 'Bounce') }));
    expect(bounce.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED' } });
  });
});

describe('SES content in S3', () => {
  const s3Message = () =>
    notification({ Message: sesNotification({ type: 'S3', topicArn: TOPIC, bucketName: 'mail-in', objectKey: 'inbound/ses-msg-0001' }) });
  const objectUrl = 'https://mail-in.s3.eu-west-1.amazonaws.com/inbound/ses-msg-0001';

  it('is refused as unsupported without s3 configuration', async () => {
    const { response, sink } = await post(s3Message());
    expect(response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED' } });
    expect(sink.submits).toBe(0);
  });

  it('is fetched from a configured bucket, and answered 503 when the object cannot be read', async () => {
    const withS3 = sesConfigSchema.parse({ ...config, s3: { buckets: ['mail-in'] } });
    const ok = await post(s3Message(), withS3, { [CERT_URL]: certPem, [objectUrl]: MIME });
    expect(ok.response.status).toBe(200);
    expect(ok.sink.stored[0]!.raw.equals(MIME)).toBe(true);
    expect(ok.fetched).toEqual([CERT_URL, objectUrl]);
    const down = await post(s3Message(), withS3);
    expect(down.response).toMatchObject({ status: 503, body: { code: 'MAILGATE_ERR_INTAKE_UNAVAILABLE' } });
    const otherBucket = sesConfigSchema.parse({ ...config, s3: { buckets: ['elsewhere'] } });
    const refused = await post(s3Message(), otherBucket, { [CERT_URL]: certPem, [objectUrl]: MIME });
    expect(refused.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED' } });
    expect(down.sink.submits + refused.sink.submits).toBe(0);
  });
});

describe('SNS subscription handshake', () => {
  it('confirms a subscription to a configured topic by fetching SubscribeURL, storing nothing', async () => {
    const { response, sink, fetched } = await post(confirmation('SubscriptionConfirmation'), config, {
      [CERT_URL]: certPem,
      [SUBSCRIBE_URL]: '<ok/>',
    });
    expect(response.status).toBe(200);
    expect(fetched).toEqual([CERT_URL, SUBSCRIBE_URL]);
    expect(sink.submits).toBe(0);
  });

  it('refuses another topic, a forged confirmation and a SubscribeURL off the SNS hosts, without confirming', async () => {
    const other = await post(confirmation('SubscriptionConfirmation', { TopicArn: 'arn:aws:sns:eu-west-1:999999999999:theirs' }));
    expect(other.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED' } });
    expect(other.fetched).toEqual([]);
    const forged = await post({
      ...confirmation('SubscriptionConfirmation'),
      SubscribeURL: 'https://sns.eu-west-1.amazonaws.com/?Action=ConfirmSubscription&x=1',
    });
    expect(forged.response).toMatchObject({ status: 403, body: { code: 'MAILGATE_ERR_WEBHOOK_FORGED' } });
    expect(forged.fetched).toEqual([CERT_URL]);
    const away = await post(confirmation('SubscriptionConfirmation', { SubscribeURL: 'https://attacker.example/confirm' }));
    expect(away.response).toMatchObject({ status: 400, body: { code: 'MAILGATE_ERR_WEBHOOK_MALFORMED' } });
    expect(away.fetched).toEqual([]); // the certificate is cached by now, and the foreign URL is never fetched
  });

  it('answers 503 when the confirmation fetch fails, so SNS sends it again', async () => {
    const { response } = await post(confirmation('SubscriptionConfirmation'));
    expect(response).toMatchObject({ status: 503 });
  });

  it('acknowledges an UnsubscribeConfirmation (signed over its Token too) without fetching SubscribeURL', async () => {
    const { response, fetched } = await post(confirmation('UnsubscribeConfirmation'));
    expect(response.status).toBe(200);
    expect(fetched).toEqual([CERT_URL]);
  });
});

describe('SES simulate', () => {
  it('builds a signed notification the verifier accepts, when simulation keys are configured', async () => {
    const sim = sesConfigSchema.parse({ ...config, simulation: { private_key_pem: keyPem, signing_cert_url: CERT_URL } });
    const req = sesProvider.simulate(MIME, sim, {
      url: 'http://localhost/webhooks/ses-in',
      now: NOW,
      envelope: { from: 'f@example.com', to: ['t@example.org'] },
    });
    const sink = new MemorySink();
    const { response } = await runProvider(sesProvider, { ...request(''), ...req }, sim, testContext(NOW, { [CERT_URL]: certPem }), sink);
    expect(response.status).toBe(200);
    expect(sink.stored[0]!.raw.equals(MIME)).toBe(true);
    expect(sink.stored[0]!.origin.envelope).toMatchObject({ from: 'f@example.com', to: ['t@example.org'] });
    expect(() => sesProvider.simulate(MIME, config, { url: 'http://x', now: NOW })).toThrow(/simulation/);
  });
});
