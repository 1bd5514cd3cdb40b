/**
 * The contract of one webhook provider (one folder each under adapters/webhooks/): a verifier
 * over the exact request bytes, a normalizer from the provider's payload to raw MIME plus
 * envelope, the status codes the provider understands, and a simulator that builds a request
 * exactly as the provider would (for `mailgate webhook simulate` and the tests).
 */
import { CORE_ERRORS, httpStatusOf, type ErrorCode } from '../../src/errors.js';
import type { SimulatedRequest, SimulationSecrets } from '../../src/pipeline/kind.js';
import type { Envelope, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import type { ProviderName } from './config.js';
import { WEBHOOK_ERRORS } from './errors.js';

export type { ProviderName } from './config.js';
export type { SimulatedRequest } from '../../src/pipeline/kind.js';

/** One message found in a webhook request. `raw` holds the exact MIME bytes (never re-encoded when the provider sent them). */
export interface NormalizedMessage {
  raw: Buffer;
  envelope: Envelope;
  /** The provider's event or message id, when it gives one: deduplicated per route beside the SHA-256 of `raw`. */
  eventId?: string;
}

/** Why a request is refused. `status` is chosen per provider (see ProviderModule.refusalStatus). */
export type RefusalKind = 'unsigned' | 'forged' | 'replayed' | 'malformed' | 'too_large' | 'unsupported' | 'unavailable';

export const REFUSAL_CODES: Record<RefusalKind, ErrorCode> = {
  unsigned: 'MAILGATE_ERR_WEBHOOK_UNSIGNED',
  forged: 'MAILGATE_ERR_WEBHOOK_FORGED',
  replayed: 'MAILGATE_ERR_WEBHOOK_REPLAYED',
  malformed: 'MAILGATE_ERR_WEBHOOK_MALFORMED',
  too_large: 'MAILGATE_ERR_WEBHOOK_TOO_LARGE',
  unsupported: 'MAILGATE_ERR_WEBHOOK_UNSUPPORTED',
  unavailable: 'MAILGATE_ERR_INTAKE_UNAVAILABLE',
};

const ANSWERS = { ...CORE_ERRORS, ...WEBHOOK_ERRORS };

/**
 * A provider's refusal statuses: the status each code declares (webhooks/errors.ts; 503 for
 * `unavailable`), except where the provider's retry contract needs its own (`own`).
 */
export function refusalStatuses(own: Partial<Record<RefusalKind, number>> = {}): (kind: RefusalKind) => number {
  return (kind) => own[kind] ?? httpStatusOf(REFUSAL_CODES[kind], ANSWERS);
}

/** Longest refusal message: a message may quote request text (an SNS Type or TopicArn), which is the sender's and unbounded. */
export const MAX_REFUSAL_CHARS = 300;

/** Thrown by verify/normalize: the request is refused with the provider's status for `kind`, nothing stored. */
export class WebhookRefusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
  ) {
    // Cut here, once, so neither the answer nor the log reflects more of an unauthenticated request.
    super(message.length > MAX_REFUSAL_CHARS ? `${message.slice(0, MAX_REFUSAL_CHARS)}… (cut)` : message);
    this.name = 'WebhookRefusal';
  }
  get code(): ErrorCode {
    return REFUSAL_CODES[this.kind];
  }
}

/** What verifiers may need beside the request: time (injectable), a replay cache, outbound fetches. */
export interface VerifyContext {
  /** Unix milliseconds. */
  now(): number;
  /** Records `token` as seen for `ttlMs`; returns false if it was seen before (a replay). */
  remember(token: string, ttlMs: number): boolean;
  /** HTTPS GET for SNS certificates (and S3 content when configured); injectable in tests. */
  fetch(url: string): Promise<Buffer>;
}

/** Asks for a flag's value: the value, or an error naming the flag. */
export type NeedFlag = <T>(value: T | undefined, flag: string) => T;

export interface ProviderModule<C> {
  readonly name: ProviderName;
  /**
   * A request to answer without storing anything (SNS subscription confirmation, Mandrill's HEAD
   * probe): the response, or undefined for an ordinary delivery.
   */
  handshake?(req: PushRequest, config: C, ctx: VerifyContext): Promise<PushResponse | undefined>;
  /**
   * Checks a credential carried in the headers alone (basic auth, a token or bearer key header)
   * before the body is read; throws WebhookRefusal('unsigned' | 'forged'). Providers whose proof
   * covers the body leave it out. `verify` still runs on the whole request.
   */
  authorize?(req: Omit<PushRequest, 'body'>, config: C): void;
  /** Throws WebhookRefusal unless the request is genuine (checked over the exact bytes). */
  verify(req: PushRequest, config: C, ctx: VerifyContext): Promise<void>;
  /** The messages of a verified request; throws WebhookRefusal('malformed' | 'unsupported' | 'too_large'). */
  normalize(req: PushRequest, config: C, ctx: VerifyContext): Promise<NormalizedMessage[]>;
  /**
   * The HTTP status for a refusal, in the provider's terms: its "stop retrying" code only for
   * requests that can never succeed; a status it retries for `unavailable` (always 5xx).
   */
  refusalStatus(kind: RefusalKind): number;
  /** The success answer once every message is durable (most: 200 with a short JSON body). */
  accepted?(): PushResponse;
  /** Builds a signed request for `raw` as the provider would send it to `url` (SendGrid: also signed with `privateKeyPem`). */
  simulate(raw: Buffer, config: C, options: { url: string; now: number; envelope?: Envelope; privateKeyPem?: string }): SimulatedRequest;
  /**
   * `mailgate webhook simulate` without a configuration: the provider's own fields of an entry
   * from the secrets given as flags (`need` names a missing flag).
   */
  fromSecrets(secrets: SimulationSecrets, need: NeedFlag, url: string): Record<string, unknown>;
}
