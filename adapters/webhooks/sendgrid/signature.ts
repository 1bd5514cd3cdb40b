/**
 * SendGrid's signed-webhook policy: ECDSA P-256 / SHA-256 over `timestamp ‖ raw body`, the
 * signature base64 DER in X-Twilio-Email-Event-Webhook-Signature, the Unix-seconds timestamp in
 * X-Twilio-Email-Event-Webhook-Timestamp.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { GatewayError } from '../../../src/errors.js';
import type { PushRequest } from '../../../src/pipeline/types.js';
import { header, refuse } from '../util.js';

export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature';
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp';

const keys = new Map<string, KeyObject | null>();

/** The configured key, parsed once; null when it is not a usable EC public key. */
function publicKey(base64: string): KeyObject | null {
  let key = keys.get(base64);
  if (key === undefined) {
    try {
      key = createPublicKey({ key: Buffer.from(base64.replace(/\s+/g, ''), 'base64'), format: 'der', type: 'spki' });
      if (key.asymmetricKeyType !== 'ec') key = null;
    } catch {
      key = null;
    }
    keys.set(base64, key);
  }
  return key;
}

export function verifySignature(req: PushRequest, publicKeyBase64: string, maxAgeS: number | undefined, nowMs: number): void {
  const signature = header(req, SIGNATURE_HEADER);
  const timestamp = header(req, TIMESTAMP_HEADER);
  if (!signature || !timestamp) refuse('unsigned', 'no SendGrid webhook signature or timestamp header');
  const key = publicKey(publicKeyBase64);
  // Our misconfiguration, not a forgery: a 4xx would make SendGrid drop real mail.
  if (!key) refuse('unavailable', 'the configured SendGrid public_key is not a base64 DER EC public key');
  const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), req.body]);
  let ok: boolean;
  try {
    ok = verify('sha256', signed, { key, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    ok = false;
  }
  if (!ok) refuse('forged', 'the SendGrid webhook signature does not verify');
  if (maxAgeS !== undefined) {
    const ts = /^\d{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
    if (!(Math.abs(nowMs / 1000 - ts) <= maxAgeS)) refuse('replayed', `the signed timestamp is more than ${maxAgeS} s away from now`);
  }
}

/** The signature headers SendGrid would send for `body` (for simulations and tests holding the private key). */
export function signatureHeaders(body: Buffer, privateKey: KeyObject, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000));
  const sig = sign('sha256', Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), { key: privateKey, dsaEncoding: 'der' });
  return { 'X-Twilio-Email-Event-Webhook-Signature': sig.toString('base64'), 'X-Twilio-Email-Event-Webhook-Timestamp': timestamp };
}

/** A PEM private key given to `mailgate webhook simulate` (the signed-webhook policy's signing key). */
export function pemPrivateKey(pem: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `the SendGrid signing key is not a PEM private key: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
