/**
 * Request validation for sync-raw-emails and predict-raw-emails, in the order the emulator
 * applies it: shape and limits (400), transform tag (422), property conflicts (422).
 * Each answer names the first offending document as `documents[i]`.
 */
import { z } from 'zod';
import { MAX_OVERRIDE_PROPERTIES, MAX_PREDICT_LABELS } from '../limits.js';
import { GENERATED_PROPERTIES, LabelThreshold, RawEmailDocument, Threshold, isValidPropertyName, propertyName } from '../model/index.js';
import { badRequest, unprocessable } from './http.js';
import { isAllowedTransformTag, type ResolvedOptions } from './options.js';

const StrictDocument = RawEmailDocument.strict();

function describe(error: z.ZodError, prefix: string): string {
  const issue = error.issues[0];
  if (!issue) return `${prefix}: invalid`;
  const where = [prefix, ...issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))].join('.').replace(/\.\[/g, '[');
  return `${where}: ${issue.message}`;
}

function baseSchema(maxDocuments: number, allowEmpty: boolean) {
  return z.object({
    documents: z
      .array(z.unknown())
      .min(allowEmpty ? 0 : 1, 'at least one document is required')
      .max(maxDocuments, `at most ${maxDocuments} documents per request`),
    transform_tag: z.string().optional(),
    include_comments: z.boolean().optional(),
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `headers` holds exactly one of raw/parsed (raw plus an empty `parsed` is accepted, as the
 * generated client sends it) and `body` exactly one of plain/html (or, with
 * `bodies: 'at-least-one'`, plain and html together, plain being used). Returns the document
 * with the empty `parsed` (or the unused `html`) removed.
 */
function checkOneOf(doc: unknown, at: string, bodies: ResolvedOptions['bodies']): unknown {
  if (!isObject(doc) || !isObject(doc.raw_email)) return doc;
  const email = doc.raw_email;
  if (isObject(email.headers)) {
    const h = email.headers;
    if ('raw' in h && isObject(h.parsed) && Object.keys(h.parsed).length === 0) {
      const { parsed: _ignored, ...rest } = h;
      return checkOneOf({ ...doc, raw_email: { ...email, headers: rest } }, at, bodies);
    }
    if ('raw' in h === 'parsed' in h) throw badRequest(`${at}.raw_email.headers: exactly one of raw and parsed is required`);
  }
  if (isObject(email.body) && 'plain' in email.body && 'html' in email.body && bodies === 'at-least-one') {
    const { html: _unused, ...plain } = email.body;
    return { ...doc, raw_email: { ...email, body: plain } };
  }
  if (isObject(email.body) && 'plain' in email.body === 'html' in email.body) {
    const rule = bodies === 'at-least-one' ? 'at least one' : 'exactly one';
    throw badRequest(`${at}.raw_email.body: ${rule} of plain and html is required`);
  }
  return doc;
}

function parseDocuments(raw: unknown[], bodies: ResolvedOptions['bodies']): RawEmailDocument[] {
  return raw.map((doc, i) => {
    const at = `documents[${i}]`;
    const result = StrictDocument.safeParse(checkOneOf(doc, at, bodies));
    if (!result.success) throw badRequest(describe(result.error, at));
    return result.data;
  });
}

function checkTransformTag(options: ResolvedOptions, tag: string | undefined): string {
  if (tag === undefined) {
    if (options.requireTransformTag) throw unprocessable('A transform tag is required.');
    return options.transformTags[0]!;
  }
  if (!isAllowedTransformTag(options, tag)) throw unprocessable(`The value '${tag}' is not a valid transform tag.`);
  return tag;
}

/** 422 when a client property has a generated property's name and is not overridable. */
function checkConflicts(documents: RawEmailDocument[], override: ReadonlySet<string>, route: string): void {
  documents.forEach((doc, i) => {
    for (const key of Object.keys(doc.user_properties ?? {})) {
      const name = propertyName(key);
      if (name !== undefined && name in GENERATED_PROPERTIES && !override.has(name)) {
        const hint = route === 'sync' ? ' and is not listed in override_user_properties' : '';
        throw unprocessable(`documents[${i}]: user property '${key}' conflicts with a generated property${hint}.`);
      }
    }
  });
}

export interface SyncRequest {
  documents: RawEmailDocument[];
  transform_tag: string;
  include_comments: boolean;
  override_user_properties: string[];
}

export function parseSyncRequest(body: unknown, options: ResolvedOptions): SyncRequest {
  const schema = baseSchema(options.maxSyncDocuments, options.allowEmptyDocuments)
    .extend({
      override_user_properties: z
        .array(z.string().refine(isValidPropertyName, 'must be a user property name without the type prefix'))
        .max(MAX_OVERRIDE_PROPERTIES)
        .optional(),
    })
    .strict();
  const top = schema.safeParse(body);
  if (!top.success) throw badRequest(describe(top.error, 'body'));
  const documents = parseDocuments(top.data.documents, options.bodies);
  const transform_tag = checkTransformTag(options, top.data.transform_tag);
  const override_user_properties = top.data.override_user_properties ?? [];
  checkConflicts(documents, new Set(override_user_properties), 'sync');
  return { documents, transform_tag, include_comments: top.data.include_comments ?? false, override_user_properties };
}

export interface PredictRequest {
  documents: RawEmailDocument[];
  transform_tag: string;
  include_comments: boolean;
  threshold: number | 'auto' | undefined;
  labels: LabelThreshold[] | undefined;
}

export function parsePredictRequest(body: unknown, options: ResolvedOptions): PredictRequest {
  const schema = baseSchema(options.maxPredictDocuments, options.allowEmptyDocuments)
    .extend({ threshold: Threshold.optional(), labels: z.array(LabelThreshold).max(MAX_PREDICT_LABELS).optional() })
    .strict();
  const top = schema.safeParse(body);
  if (!top.success) throw badRequest(describe(top.error, 'body'));
  const documents = parseDocuments(top.data.documents, options.bodies);
  const transform_tag = checkTransformTag(options, top.data.transform_tag);
  checkConflicts(documents, new Set(), 'predict');
  return {
    documents,
    transform_tag,
    include_comments: top.data.include_comments ?? false,
    threshold: top.data.threshold,
    labels: top.data.labels,
  };
}
