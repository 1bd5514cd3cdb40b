/**
 * Emulator options, validated once: limits are explicit, 0 means 0, nothing falls back silently.
 */
import { GatewayError } from '../errors.js';
import { DEFAULT_TRANSFORM_TAG, MAX_PREDICT_DOCUMENTS, MAX_SYNC_DOCUMENTS, parseLimit } from '../limits.js';
import type { Logger } from '../logger.js';
import type { EmulatorOptions } from './types.js';

/** Default request body limit: realistic 4096-document batches are tens of MiB. */
export const DEFAULT_BODY_LIMIT = 512 * 1024 * 1024;
/** Model versions every dataset has by default, and what `live` / `staging` point at. */
export const DEFAULT_MODEL_VERSIONS = 2;
export const DEFAULT_LIVE_VERSION = 1;
export const DEFAULT_STAGING_VERSION = 2;
/** The shape of a transform tag (`<family>.<n>.<CODE>`, e.g. `generic.0.CONVKER5`), accepted by the `*` entry. */
export const TRANSFORM_TAG_SHAPE = /^[a-z0-9_-]+\.\d+\.[A-Z0-9]{8}$/;

export interface ResolvedOptions {
  tokens: ReadonlySet<string>;
  dataDir: string | undefined;
  transformTags: readonly string[];
  logger: boolean | Logger;
  maxSyncDocuments: number;
  maxPredictDocuments: number;
  requireTransformTag: boolean;
  allowNoCharge: boolean;
  autoCreateSources: boolean;
  modelVersions: number;
  liveVersion: number;
  stagingVersion: number;
  bodyLimit: number;
  allowEmptyDocuments: boolean;
  bodies: 'exactly-one' | 'at-least-one';
  commentsShape: 'comment' | 'with-thread-properties';
  labelNames: 'parts' | 'string';
  now: () => Date;
}

function invalid(message: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_EMULATOR_OPTIONS_INVALID', message);
}

function oneOf<T extends string>(name: string, value: T | undefined, choices: readonly T[]): T {
  const v = value ?? choices[0]!;
  if (!choices.includes(v)) throw invalid(`${name} must be one of ${choices.join(', ')}, got ${String(value)}`);
  return v;
}

function intIn(name: string, value: number | undefined, fallback: number, min: number, max: number): number {
  return parseLimit(name, value, fallback, { min, max, code: 'MAILGATE_ERR_EMULATOR_OPTIONS_INVALID' });
}

export function resolveOptions(o: EmulatorOptions): ResolvedOptions {
  const tokens = (Array.isArray(o.token) ? o.token : [o.token]).filter((t) => typeof t === 'string');
  if (tokens.length === 0 || tokens.some((t) => t.length === 0)) throw invalid('token must be a non-empty string (or a list of them)');
  const transformTags = o.transformTags ?? [DEFAULT_TRANSFORM_TAG];
  if (transformTags.length === 0 || transformTags.some((t) => typeof t !== 'string' || t.length === 0)) {
    throw invalid('transformTags must list at least one non-empty tag');
  }
  const modelVersions = intIn('modelVersions', o.modelVersions, DEFAULT_MODEL_VERSIONS, 1, 1_000_000);
  return {
    tokens: new Set(tokens),
    dataDir: o.dataDir,
    transformTags,
    logger: typeof o.logger === 'object' ? o.logger : o.logger === true,
    maxSyncDocuments: intIn('maxSyncDocuments', o.maxSyncDocuments, MAX_SYNC_DOCUMENTS, 1, MAX_SYNC_DOCUMENTS),
    maxPredictDocuments: intIn('maxPredictDocuments', o.maxPredictDocuments, MAX_PREDICT_DOCUMENTS, 1, MAX_PREDICT_DOCUMENTS),
    requireTransformTag: o.requireTransformTag ?? true,
    allowNoCharge: o.allowNoCharge ?? false,
    autoCreateSources: o.autoCreateSources ?? false,
    modelVersions,
    liveVersion: intIn('liveVersion', o.liveVersion, DEFAULT_LIVE_VERSION, 1, modelVersions),
    stagingVersion: intIn('stagingVersion', o.stagingVersion, Math.min(DEFAULT_STAGING_VERSION, modelVersions), 1, modelVersions),
    bodyLimit: intIn('bodyLimit', o.bodyLimit, DEFAULT_BODY_LIMIT, 1024, 2 ** 31 - 1),
    allowEmptyDocuments: o.allowEmptyDocuments ?? true,
    bodies: oneOf('bodies', o.bodies, ['exactly-one', 'at-least-one'] as const),
    commentsShape: oneOf('commentsShape', o.commentsShape, ['comment', 'with-thread-properties'] as const),
    labelNames: oneOf('labelNames', o.labelNames, ['parts', 'string'] as const),
    now: o.now ?? (() => new Date()),
  };
}

/** Whether a transform tag is on the allow-list (`*` admits any well-shaped tag). */
export function isAllowedTransformTag(options: ResolvedOptions, tag: string): boolean {
  return options.transformTags.includes(tag) || (options.transformTags.includes('*') && TRANSFORM_TAG_SHAPE.test(tag));
}
