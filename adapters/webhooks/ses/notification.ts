/**
 * The SES receipt notification carried in an SNS Message: the raw MIME (inline `content` for
 * the SNS action, an S3 object for the S3 action) and the envelope with SES's verdicts.
 */
import type { Envelope } from '../../../src/pipeline/types.js';
import { WebhookRefusal, type NormalizedMessage, type VerifyContext } from '../provider.js';
import type { SesConfig } from '../config.js';
import type { SnsMessage } from './sns.js';

type Json = Record<string, unknown>;

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

const obj = (v: unknown): Json | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const strings = (v: unknown): string[] | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
const verdict = (receipt: Json, key: string): string | undefined => str(obj(receipt[key])?.['status']);

function inlineContent(ses: Json, action: Json): Buffer {
  const content = str(ses['content']);
  if (content === undefined) throw new WebhookRefusal('malformed', 'the SES notification of an SNS action has no content');
  if (str(action['encoding']) === 'BASE64') {
    if (!BASE64_RE.test(content)) throw new WebhookRefusal('malformed', 'the SES content is not base64');
    return Buffer.from(content, 'base64');
  }
  // UTF8 encoding: SES warns it may not keep every byte; configure the action with Base64.
  return Buffer.from(content, 'utf8');
}

/** The S3 object URL (virtual-hosted style), each key segment percent-encoded. */
export function s3Url(bucket: string, region: string, key: string): string {
  return `https://${bucket}.s3.${region}.amazonaws.com/${key.split('/').map(encodeURIComponent).join('/')}`;
}

async function s3Content(action: Json, config: SesConfig, sns: SnsMessage, ctx: VerifyContext): Promise<Buffer> {
  const bucket = str(action['bucketName']);
  const key = str(action['objectKey']);
  if (!config.s3) throw new WebhookRefusal('unsupported', 'SES stored this message in S3 and the endpoint has no s3 configuration');
  if (bucket === undefined || key === undefined) throw new WebhookRefusal('malformed', 'the S3 action names no bucketName or objectKey');
  if (!config.s3.buckets.includes(bucket)) throw new WebhookRefusal('unsupported', `bucket ${bucket} is not one of s3.buckets`);
  const region = config.s3.region ?? (str(action['topicArn']) ?? sns.TopicArn).split(':')[3]!;
  try {
    return await ctx.fetch(s3Url(bucket, region, key));
  } catch (err) {
    // SNS retries 5xx: the object may become readable (policy fixed, S3 back).
    throw new WebhookRefusal('unavailable', `cannot read s3://${bucket}/${key}: ${(err as Error).message}`);
  }
}

function envelopeOf(ses: Json, sns: SnsMessage): Envelope {
  const mail = obj(ses['mail']) ?? {};
  const receipt = obj(ses['receipt']) ?? {};
  const envelope: Envelope = { provider: 'ses' };
  const from = str(mail['source']);
  if (from !== undefined) envelope.from = from;
  const to = strings(receipt['recipients']);
  if (to) envelope.to = to;
  const spam = verdict(receipt, 'spamVerdict');
  if (spam !== undefined) envelope.spamVerdict = spam;
  for (const [field, key] of [
    ['spf', 'spfVerdict'],
    ['dkim', 'dkimVerdict'],
    ['dmarc', 'dmarcVerdict'],
  ] as const) {
    const v = verdict(receipt, key);
    if (v !== undefined) envelope[field] = v;
  }
  const extra: Record<string, string> = { snsMessageId: sns.MessageId, topicArn: sns.TopicArn };
  const virus = verdict(receipt, 'virusVerdict');
  if (virus !== undefined) extra['virusVerdict'] = virus;
  const destination = strings(mail['destination']);
  if (destination) extra['destination'] = destination.join(', ');
  envelope.extra = extra;
  return envelope;
}

/** The message of an SES notification, or none for SES's plain-text topic check. */
export async function sesMessages(sns: SnsMessage, config: SesConfig, ctx: VerifyContext): Promise<NormalizedMessage[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(sns.Message);
  } catch {
    // "Successfully validated SNS topic for Amazon SES event publishing." and the like: nothing to store.
    return [];
  }
  const ses = obj(parsed);
  if (!ses) throw new WebhookRefusal('malformed', 'the SNS Message is not an SES notification object');
  if (ses['notificationType'] !== 'Received') {
    throw new WebhookRefusal(
      'unsupported',
      `SES notification ${String(ses['notificationType'])} is not a received mail (sending events on the inbound topic?)`,
    );
  }
  const action = obj(obj(ses['receipt'])?.['action']);
  const type = str(action?.['type']);
  let raw: Buffer;
  if (type === 'SNS') raw = inlineContent(ses, action!);
  else if (type === 'S3') raw = await s3Content(action!, config, sns, ctx);
  else throw new WebhookRefusal('unsupported', `SES receipt action ${String(type)} carries no message`);
  if (raw.length === 0) throw new WebhookRefusal('malformed', 'the SES message is empty');
  const message: NormalizedMessage = { raw, envelope: envelopeOf(ses, sns) };
  const id = str(obj(ses['mail'])?.['messageId']);
  if (id !== undefined) message.eventId = id;
  return [message];
}
