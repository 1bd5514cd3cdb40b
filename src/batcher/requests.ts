/**
 * Request bodies for a target, and the envelope size used by packing.
 */
import { GatewayError } from '../errors.js';
import {
  LabelThreshold,
  Threshold,
  type PredictRawEmailsRequest,
  type RawEmailDocument,
  type SyncRawEmailsRequest,
} from '../model/index.js';
import { MAX_OVERRIDE_PROPERTIES, MAX_PREDICT_LABELS } from '../limits.js';
import type { EncodedRequest } from '../api/encoded.js';
import { checkRouteProperties } from './properties.js';
import type { Prepared } from './prepare.js';
import type { Target } from './types.js';

/** Throws a coded configuration error when the target cannot produce a valid request. */
export function checkTarget(target: Target): void {
  if (typeof target.transformTag !== 'string' || target.transformTag === '') {
    throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', 'transformTag must be a non-empty string');
  }
  checkRouteProperties(target);
  if (target.kind === 'predict') {
    if (target.threshold !== undefined && !Threshold.safeParse(target.threshold).success) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        `threshold must be a number 0..1 or "auto" (got ${JSON.stringify(target.threshold)})`,
      );
    }
    const labels = target.labels ?? [];
    if (labels.length > MAX_PREDICT_LABELS || !labels.every((l) => LabelThreshold.safeParse(l).success)) {
      throw new GatewayError(
        'MAILGATE_ERR_CONFIG_INVALID',
        `labels must be at most ${MAX_PREDICT_LABELS} {name: [1..64 parts of 1..64 chars], threshold?: 0..1}`,
      );
    }
  }
}

/** The route's override list plus the names these documents need, without repeats. */
function overridesFor(target: Target, parts: readonly Prepared[]): string[] {
  if (target.kind !== 'sync') return [];
  const names = new Set(target.overrideUserProperties ?? []);
  for (const p of parts) for (const name of p.overrides) names.add(name);
  if (names.size > MAX_OVERRIDE_PROPERTIES) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `override_user_properties would hold ${names.size} names; at most ${MAX_OVERRIDE_PROPERTIES}`,
    );
  }
  return [...names];
}

export function buildSyncRequest(target: Target, documents: RawEmailDocument[], overrides: string[]): SyncRawEmailsRequest {
  const req: SyncRawEmailsRequest = { documents, transform_tag: target.transformTag, include_comments: false };
  if (overrides.length > 0) req.override_user_properties = overrides;
  return req;
}

export function buildPredictRequest(target: Target, documents: RawEmailDocument[]): PredictRawEmailsRequest {
  const req: PredictRawEmailsRequest = { documents, transform_tag: target.transformTag };
  if (target.kind === 'predict' && target.threshold !== undefined) req.threshold = target.threshold;
  if (target.kind === 'predict' && target.labels !== undefined && target.labels.length > 0) req.labels = target.labels;
  return req;
}

/**
 * The request for these prepared documents, serialized: the envelope with the documents'
 * own JSON text spliced in as `documents` (no document is parsed or serialized again).
 * Byte for byte what JSON.stringify of the request object would give. One join builds it as
 * one flat string: a template around a joined string would be a rope that the HTTP client
 * flattens into a second copy of the whole body.
 */
export function encodeRequest(target: Target, parts: readonly Prepared[], envelopeOnly = false): EncodedRequest {
  const envelope = target.kind === 'sync' ? buildSyncRequest(target, [], overridesFor(target, parts)) : buildPredictRequest(target, []);
  const { documents: _, ...rest } = envelope;
  const tail = JSON.stringify(rest).slice(1);
  const sent = envelopeOnly ? [] : parts;
  const close = tail === '}' ? ']}' : `],${tail}`;
  if (sent.length === 0) return { json: `{"documents":[${close}`, documents: 0 };
  const pieces = sent.map((p) => p.json);
  pieces[0] = `{"documents":[${pieces[0]}`;
  pieces[pieces.length - 1] += close;
  return { json: pieces.join(','), documents: sent.length };
}

/**
 * Bytes of the request with no documents, using the largest override list any batch of this
 * delivery can carry, so that packing is never optimistic.
 */
export function envelopeBytes(target: Target, all: readonly Prepared[]): number {
  const req = target.kind === 'sync' ? buildSyncRequest(target, [], overridesFor(target, all)) : buildPredictRequest(target, []);
  return Buffer.byteLength(JSON.stringify(req));
}
