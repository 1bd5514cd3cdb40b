/**
 * Amazon SNS HTTP/S messages: parsing, and the message signature (SignatureVersion 1 =
 * RSA-SHA1, 2 = RSA-SHA256) over the canonical string, checked against the certificate at
 * SigningCertURL (https, host on the configured pattern, fetched once and cached by URL).
 */
import { createSign, verify, X509Certificate, type KeyObject } from 'node:crypto';
import type { ErrorCode } from '../../../src/errors.js';
import type { PushRequest } from '../../../src/pipeline/types.js';
import { WebhookRefusal, type RefusalKind, type VerifyContext } from '../provider.js';
import type { SesConfig } from '../config.js';

export type SnsType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';
const TYPES: readonly string[] = ['Notification', 'SubscriptionConfirmation', 'UnsubscribeConfirmation'];

export interface SnsMessage {
  Type: SnsType;
  MessageId: string;
  TopicArn: string;
  Message: string;
  Timestamp: string;
  SignatureVersion: string;
  Signature: string;
  SigningCertURL: string;
  Subject?: string;
  SubscribeURL?: string;
  Token?: string;
  UnsubscribeURL?: string;
}

/**
 * The keys signed, in order; each present one adds `Key\nvalue\n`. This superset gives the
 * documented list for every type (Notification: no SubscribeURL/Token; the confirmations: no
 * Subject), also for UnsubscribeConfirmation, which carries a Token too.
 */
const SIGNED_KEYS = ['Message', 'MessageId', 'Subject', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'] as const;
const ALGORITHM: Record<string, string> = { '1': 'RSA-SHA1', '2': 'RSA-SHA256' };
/** How far an SNS Timestamp may lie in the future (clock skew), in milliseconds. */
const MAX_FUTURE_MS = 300_000;
const CERT_TTL_MS = 24 * 3600 * 1000;
const MAX_CERTS = 32;

/** A refusal about the signing certificate: the kind sets the status, the code names the certificate. */
export class CertificateRefusal extends WebhookRefusal {
  constructor(kind: RefusalKind, message: string) {
    super(kind, message);
  }
  override get code(): ErrorCode {
    return 'MAILGATE_ERR_WEBHOOK_CERTIFICATE';
  }
}

export function stringToSign(m: Partial<Record<(typeof SIGNED_KEYS)[number], string>>): string {
  let s = '';
  for (const key of SIGNED_KEYS) {
    const value = m[key];
    if (value !== undefined) s += `${key}\n${value}\n`;
  }
  return s;
}

function header(req: PushRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The SNS message of a request, its shape checked; header and body must agree on type and id. */
export function parseSns(req: PushRequest): SnsMessage {
  let body: unknown;
  try {
    body = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw new WebhookRefusal('malformed', 'the body is not JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new WebhookRefusal('malformed', 'the body is not a JSON object');
  const m = body as Record<string, unknown>;
  // Lambda-style spellings of the same fields.
  m['SigningCertURL'] ??= m['SigningCertUrl'];
  for (const key of ['Type', 'MessageId', 'TopicArn', 'Message', 'Timestamp']) {
    if (typeof m[key] !== 'string') throw new WebhookRefusal('malformed', `the SNS message has no ${key}`);
  }
  for (const key of ['Subject', 'SubscribeURL', 'Token', 'Signature', 'SignatureVersion', 'SigningCertURL']) {
    if (m[key] !== undefined && typeof m[key] !== 'string') throw new WebhookRefusal('malformed', `the SNS field ${key} is not a string`);
  }
  if (!TYPES.includes(m['Type'] as string)) throw new WebhookRefusal('unsupported', `SNS message type ${String(m['Type'])} is not handled`);
  if (m['Signature'] === undefined || m['SignatureVersion'] === undefined || m['SigningCertURL'] === undefined) {
    throw new WebhookRefusal('unsigned', 'the SNS message carries no Signature, SignatureVersion or SigningCertURL');
  }
  const typeHeader = header(req, 'x-amz-sns-message-type');
  const idHeader = header(req, 'x-amz-sns-message-id');
  if ((typeHeader !== undefined && typeHeader !== m['Type']) || (idHeader !== undefined && idHeader !== m['MessageId'])) {
    throw new WebhookRefusal('forged', 'the x-amz-sns-message-type/-id headers disagree with the body');
  }
  return m as unknown as SnsMessage;
}

/** An https URL whose host matches the configured SNS host pattern, else undefined. */
export function snsUrl(value: string, config: SesConfig): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' || url.username !== '' || url.password !== '' || url.port !== '') return undefined;
  return new RegExp(config.cert_host_pattern).test(url.hostname) ? url : undefined;
}

const certificates = new Map<string, { key: KeyObject; at: number }>();
/** URLs whose fetch failed lately (kept NEGATIVE_TTL_MS): a request naming one is refused without a fetch. */
const failures = new Map<string, { message: string; at: number }>();
/** Fetches under way by URL: concurrent requests naming one URL share one fetch. */
const fetching = new Map<string, Promise<Buffer>>();
const NEGATIVE_TTL_MS = 60_000;
/** Certificate fetches at once across every SES endpoint; beyond, 503 (SNS retries) rather than a queue. */
export const MAX_CERT_FETCHES = 4;

/** Forgets every cached certificate and failure (tests that sign with several keys under one URL). */
export function clearCertificateCache(): void {
  certificates.clear();
  failures.clear();
  fetching.clear();
}

/** The certificate bytes of `url`: one fetch per URL at a time, at most MAX_CERT_FETCHES URLs at once, failures remembered. */
async function fetchCertificate(url: string, ctx: VerifyContext): Promise<Buffer> {
  const failed = failures.get(url);
  if (failed && ctx.now() - failed.at < NEGATIVE_TTL_MS) throw new Error(`${failed.message} (remembered; not fetched again yet)`);
  let p = fetching.get(url);
  if (p === undefined) {
    if (fetching.size >= MAX_CERT_FETCHES) throw new Error(`${MAX_CERT_FETCHES} certificate fetches are under way; retry later`);
    p = ctx.fetch(url);
    fetching.set(url, p);
    void p.then(
      () => fetching.delete(url),
      (err: unknown) => {
        fetching.delete(url);
        failures.set(url, { message: (err as Error).message, at: ctx.now() });
        while (failures.size > MAX_CERTS) failures.delete(failures.keys().next().value!);
      },
    );
  }
  return p;
}

async function signingKey(certUrl: string, config: SesConfig, ctx: VerifyContext): Promise<KeyObject> {
  const url = snsUrl(certUrl, config);
  if (!url || !url.pathname.endsWith('.pem')) {
    throw new CertificateRefusal(
      'forged',
      `SigningCertURL ${certUrl} is not an https .pem URL on a host matching ${config.cert_host_pattern}`,
    );
  }
  const cached = certificates.get(url.href);
  if (cached && ctx.now() - cached.at < CERT_TTL_MS) return cached.key;
  let pem: Buffer;
  try {
    pem = await fetchCertificate(url.href, ctx);
  } catch (err) {
    throw new CertificateRefusal('unavailable', `cannot fetch the SNS signing certificate ${url.href}: ${(err as Error).message}`);
  }
  let key: KeyObject;
  try {
    key = new X509Certificate(pem).publicKey;
  } catch {
    failures.set(url.href, { message: 'not an X.509 certificate', at: ctx.now() });
    throw new CertificateRefusal('unavailable', `${url.href} did not serve an X.509 certificate`);
  }
  certificates.delete(url.href);
  certificates.set(url.href, { key, at: ctx.now() });
  while (certificates.size > MAX_CERTS) certificates.delete(certificates.keys().next().value!);
  return key;
}

/** False also when the key cannot check this algorithm at all (a certificate with a non-RSA key). */
function signatureMatches(algorithm: string, text: string, key: KeyObject, signature: Buffer): boolean {
  try {
    return verify(algorithm, Buffer.from(text, 'utf8'), key, signature);
  } catch {
    return false;
  }
}

/**
 * Throws WebhookRefusal unless the message is from a configured topic, signed by SNS with an
 * accepted version, and not older than the window. The topic is checked first: no certificate
 * is fetched for a stranger's topic.
 */
export async function verifySns(m: SnsMessage, config: SesConfig, ctx: VerifyContext): Promise<void> {
  if (!config.topic_arns.includes(m.TopicArn)) throw new WebhookRefusal('unsupported', `topic ${m.TopicArn} is not one of topic_arns`);
  const algorithm = ALGORITHM[m.SignatureVersion];
  if (!algorithm || !config.signature_versions.includes(Number(m.SignatureVersion) as 1 | 2)) {
    throw new WebhookRefusal(
      'forged',
      `SignatureVersion ${m.SignatureVersion} is not accepted (signature_versions: ${config.signature_versions.join(', ')})`,
    );
  }
  const key = await signingKey(m.SigningCertURL, config, ctx);
  const signature = Buffer.from(m.Signature, 'base64');
  if (!signatureMatches(algorithm, stringToSign(m), key, signature)) {
    throw new WebhookRefusal('forged', 'the SNS signature does not match the message');
  }
  const at = Date.parse(m.Timestamp);
  if (Number.isNaN(at)) throw new WebhookRefusal('malformed', `SNS Timestamp ${m.Timestamp} is not a date`);
  const now = ctx.now();
  if (now - at > config.max_age_s * 1000 || at - now > MAX_FUTURE_MS) {
    throw new WebhookRefusal('replayed', `SNS Timestamp ${m.Timestamp} is outside the window (max_age_s ${config.max_age_s})`);
  }
}

/** Signs SNS message fields as SNS does (for simulations and tests): returns the base64 Signature. */
export function signSnsMessage(fields: Parameters<typeof stringToSign>[0], privateKeyPem: string, version: 1 | 2 = 2): string {
  return createSign(ALGORITHM[String(version)]!).update(stringToSign(fields), 'utf8').sign(privateKeyPem, 'base64');
}
