/**
 * Every limit mailgate enforces, in one place, each with its reason.
 * "spec" = ../shared/spec/text-analytics-api.md; "notes" = target-api-notes.md.
 * Configurable values are validated where they are configured; 0 means 0, never "default".
 */
import { GatewayError, type ErrorCode } from './errors.js';

/** spec Limits: Content text, translated_from, and the raw email `plain` body. */
export const MAX_TEXT_CHARS = 65_536;
/** notes §10 (connector schema): the raw header string. */
export const MAX_RAW_HEADER_CHARS = 65_536;
/** notes §10: the raw email `html` body (32 MiB of characters). */
export const MAX_HTML_CHARS = 33_554_432;
/** notes §10: attachments listed per email. */
export const MAX_ATTACHMENTS = 128;
/** notes §4.3: attachment `name` and `content_type`. */
export const MAX_ATTACHMENT_FIELD_CHARS = 256;
/** spec Comment.id / thread_id: `[0-9a-f]{1,1024}`. */
export const MAX_COMMENT_ID_CHARS = 1024;
/** spec user_properties: the whole key name after the `type:` prefix, at most 32 characters. */
export const MAX_PROPERTY_NAME_CHARS = 32;
/** notes §2.1: `override_user_properties` entries. */
export const MAX_OVERRIDE_PROPERTIES = 128;
/** notes §5.3: from / each recipient, 1 to 512 characters; at most 2048 recipients per field. */
export const MAX_ADDRESS_CHARS = 512;
export const MAX_RECIPIENTS = 2048;

/** spec Limits: documents per sync-raw-emails request. */
export const MAX_SYNC_DOCUMENTS = 16_384;
/** notes §2.1: the generated client documents 4096; the default stays within what both accept. */
export const DEFAULT_SYNC_DOCUMENTS = 4096;
/** spec Limits: documents per predict-raw-emails request. */
export const MAX_PREDICT_DOCUMENTS = 4096;
/** Request body bytes per batch by default (no documented service maximum; proxies commonly cap near 32-64 MiB). */
export const DEFAULT_MAX_REQUEST_BYTES = 24 * 1024 * 1024;

/** spec Limits: timestamp range, inclusive. */
export const MIN_TIMESTAMP = '1950-01-01T00:00:00Z';
export const MAX_TIMESTAMP = '2049-12-31T23:59:59Z';
export const MIN_TIMESTAMP_MS = Date.parse(MIN_TIMESTAMP);
export const MAX_TIMESTAMP_MS = Date.parse(MAX_TIMESTAMP);

/** spec Predictions: default threshold when unset. */
export const DEFAULT_THRESHOLD = 0.25;
/** notes §10: per-label thresholds in `labels`. */
export const MAX_PREDICT_LABELS = 4096;

/** Parsing budgets (configurable): size of one raw message, and wall time to parse it. */
export const DEFAULT_MAX_MESSAGE_BYTES = 50 * 1024 * 1024;
export const DEFAULT_PARSE_TIMEOUT_MS = 5_000;
/** Parser bounds (docs/parsing.md): nested multiparts, and MIME parts per message; beyond them the rest is ignored with a warning. */
export const MAX_MIME_DEPTH = 32;
export const MAX_MIME_PARTS = 1_000;

/** notes §1: the official client's per-request timeout; large requests are slow. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 240_000;

/**
 * Outbox claim lease of a process that does not set one (`--lease-ms`): the items a killed process
 * had claimed are claimed again after this long. A process bound, not a configuration setting.
 */
export const CLAIM_LEASE_MS = 60_000;

/**
 * The one rule for a claim lease, whoever sets it (`serve --lease-ms`, `import --lease-ms`, the
 * runtime's `leaseMs`): an integer from 1 s to 1 h. Claims are renewed every third of the lease on
 * the event loop, so a lease shorter than a second could lapse during an ordinary pause of that loop
 * (a collection, a large batch being built) and another process could claim and send the same
 * items again; a lease longer than an hour keeps the claims of a process that never registered (an
 * older mailgate) waiting for longer than anyone would wait for mail.
 */
export const CLAIM_LEASE_BOUNDS = { min: 1_000, max: 3_600_000 } as const;

/** The transform tag the official CLI uses by default (notes §6). */
export const DEFAULT_TRANSFORM_TAG = 'generic.0.CONVKER5';

/**
 * A limit given to a library API (the schema validates the configuration's own), checked once
 * here as postal-mime's `parseLimitOption`: `value`, or `fallback` when it is not set, must be an
 * integer (with `real: true`, a finite number) within [min, max] (default 1 .. MAX_SAFE_INTEGER;
 * with min 0, 0 means 0, never "the default"). Anything else is a coded error naming the option.
 */
export function parseLimit(name: string, value: number | undefined, fallback: number, bounds: LimitBounds = {}): number {
  const min = bounds.min ?? 1;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const v = value ?? fallback;
  const real = bounds.real === true;
  if (!(real ? Number.isFinite(v) : Number.isInteger(v)) || v < min || v > max) {
    const code = bounds.code ?? 'MAILGATE_ERR_CONFIG_INVALID';
    const range = max !== Number.MAX_SAFE_INTEGER ? `${min}..${max}` : min === Number.MIN_VALUE ? '> 0' : `>= ${min}`;
    throw new GatewayError(
      code,
      `${name} must be ${real ? 'a number' : 'an integer'} ${real ? range : `${min}..${max}`}, got ${String(v)}`,
    );
  }
  return v;
}

export interface LimitBounds {
  /** Default 1. */
  min?: number;
  /** Default Number.MAX_SAFE_INTEGER. */
  max?: number;
  /** Any finite number rather than an integer. Default false. */
  real?: boolean;
  /** Default MAILGATE_ERR_CONFIG_INVALID. */
  code?: ErrorCode;
}

/** Shortest prediction webhook secret accepted: 128 bits written as hex. */
export const MIN_WEBHOOK_SECRET_CHARS = 32;
