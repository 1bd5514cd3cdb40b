/**
 * The `ses` provider: Amazon SES receipt rules → SNS topic → HTTP/S subscription. Every
 * message is checked for its topic and its SNS signature; a SubscriptionConfirmation for a
 * configured topic is confirmed by fetching its SubscribeURL; a Notification carries the
 * SES notification with the raw MIME inline or in S3.
 */
import { createHash, randomUUID } from 'node:crypto';
import { GatewayError } from '../../../src/errors.js';
import type { PushRequest } from '../../../src/pipeline/types.js';
import { type ProviderModule, refusalStatuses, type SimulatedRequest, type VerifyContext, WebhookRefusal } from '../provider.js';
import { providerEntrySchema, type SesConfig } from '../config.js';
import { sesMessages } from './notification.js';
import { parseSns, signSnsMessage, snsUrl, verifySns, type SnsMessage } from './sns.js';

export type { SesConfig } from '../config.js';
/** The schema of an SES endpoint entry, common fields included. */
export const sesConfigSchema = providerEntrySchema('ses');
export { clearCertificateCache, signSnsMessage, stringToSign } from './sns.js';

/** The handler parses each request up to three times (handshake, verify, normalize): once is enough. */
const parsed = new WeakMap<PushRequest, SnsMessage>();

function sns(req: PushRequest): SnsMessage {
  let m = parsed.get(req);
  if (!m) {
    m = parseSns(req);
    parsed.set(req, m);
  }
  return m;
}

async function confirm(m: SnsMessage, config: SesConfig, ctx: VerifyContext): Promise<void> {
  const url = m.SubscribeURL === undefined ? undefined : snsUrl(m.SubscribeURL, config);
  if (!url) throw new WebhookRefusal('malformed', `SubscribeURL is not an https URL on a host matching ${config.cert_host_pattern}`);
  try {
    await ctx.fetch(url.href);
  } catch (err) {
    throw new WebhookRefusal('unavailable', `confirming the subscription to ${m.TopicArn} failed: ${(err as Error).message}`);
  }
}

export interface SnsSignedFields {
  Type: SnsMessage['Type'];
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
}

/** A complete SNS message: the fields, signed with `privateKeyPem` under `certUrl` (simulations and tests). */
export function signedSnsMessage(
  fields: SnsSignedFields,
  privateKeyPem: string,
  certUrl: string,
  version: 1 | 2 = 2,
): Record<string, string> {
  const Signature = signSnsMessage(fields, privateKeyPem, version);
  return { ...fields, SignatureVersion: String(version), Signature, SigningCertURL: certUrl } as Record<string, string>;
}

/** The request SNS sends for `message`. */
export function snsRequest(message: Record<string, string>): SimulatedRequest {
  return {
    method: 'POST',
    headers: {
      'content-type': 'text/plain; charset=UTF-8',
      'x-amz-sns-message-type': message['Type']!,
      'x-amz-sns-message-id': message['MessageId']!,
      'x-amz-sns-topic-arn': message['TopicArn']!,
    },
    body: Buffer.from(JSON.stringify(message), 'utf8'),
  };
}

export const sesProvider: ProviderModule<SesConfig> = {
  name: 'ses',
  async handshake(req, config, ctx) {
    const m = sns(req);
    if (m.Type === 'Notification') return undefined;
    await verifySns(m, config, ctx);
    if (m.Type === 'SubscriptionConfirmation') await confirm(m, config, ctx);
    // UnsubscribeConfirmation: acknowledged, nothing to do (re-subscribing is an operator's act).
    return { status: 200, body: { type: m.Type, topicArn: m.TopicArn } };
  },
  async verify(req, config, ctx) {
    await verifySns(sns(req), config, ctx);
  },
  async normalize(req, config, ctx) {
    if (req.body.length > config.body_limit) throw new WebhookRefusal('too_large', `the body exceeds ${config.body_limit} bytes`);
    const m = sns(req);
    if (m.Type !== 'Notification') throw new WebhookRefusal('unsupported', `SNS ${m.Type} carries no mail`);
    return sesMessages(m, config, ctx);
  },
  /** SNS retries only 5xx: every refusal that can never succeed is a 4xx. */
  refusalStatus: refusalStatuses({ unsupported: 400 }),
  fromSecrets: () => {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      'simulating ses needs an entry with a simulation block: use --config FILE --name ENTRY',
    );
  },
  simulate(raw, config, options) {
    const sim = config.simulation;
    if (!sim) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        `webhook ${config.name}: simulating SES needs simulation.private_key_pem and simulation.signing_cert_url`,
      );
    }
    const topicArn = config.topic_arns[0]!;
    const timestamp = new Date(options.now).toISOString();
    const to = options.envelope?.to ?? ['recipient@example.com'];
    const pass = { status: 'PASS' };
    const notification = {
      notificationType: 'Received',
      mail: {
        timestamp,
        source: options.envelope?.from ?? 'sender@example.com',
        messageId: createHash('sha256').update(raw).digest('hex').slice(0, 40),
        destination: to,
        headersTruncated: false,
      },
      receipt: {
        timestamp,
        recipients: to,
        spamVerdict: pass,
        virusVerdict: pass,
        spfVerdict: pass,
        dkimVerdict: pass,
        dmarcVerdict: pass,
        action: { type: 'SNS', topicArn, encoding: 'BASE64' },
      },
      content: raw.toString('base64'),
    };
    const fields: SnsSignedFields = {
      Type: 'Notification',
      MessageId: randomUUID(),
      TopicArn: topicArn,
      Subject: 'Amazon SES Email Receipt Notification',
      Message: JSON.stringify(notification),
      Timestamp: timestamp,
    };
    return snsRequest(signedSnsMessage(fields, sim.private_key_pem, sim.signing_cert_url, 2));
  },
};

/** The name the webhook provider map imports. */
export const provider = sesProvider;
