/**
 * Shape checks of successful responses: a 2xx whose body does not carry what the endpoint
 * promises is a bad response (not retried: the service processed the request), never a
 * silently wrong count or a misaligned prediction. Fields the notes or the spec leave
 * optional are read leniently and normalised.
 */
import type { PredictedLabel, PredictRawEmailsResponse, SyncRawEmailsResponse } from '../model/index.js';
import { ApiError } from './errors.js';

function bad(status: number, what: string): ApiError {
  return new ApiError('MAILGATE_ERR_API_BAD_RESPONSE', `API answered ${status} with ${what}`, { status });
}

function count(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
}

/**
 * new / updated / unchanged are required. The split of `updated` into properties-only and
 * text-changed is missing from older services (notes §2.2); when absent, every update is
 * counted as text-changed, so that billing figures err on the high side.
 */
export function checkSyncResponse(status: number, body: Record<string, unknown>, documents: number): SyncRawEmailsResponse {
  const created = count(body, 'new');
  const updated = count(body, 'updated');
  const unchanged = count(body, 'unchanged');
  if (created === undefined || updated === undefined || unchanged === undefined) {
    throw bad(status, 'a sync-raw-emails body lacking new/updated/unchanged counts');
  }
  const propsOnly = count(body, 'updated_properties_only');
  const textChanged = count(body, 'updated_text_changed');
  const split = propsOnly !== undefined && textChanged !== undefined;
  if (created + updated + unchanged > documents) {
    throw bad(status, `counts for ${created + updated + unchanged} documents in answer to ${documents}`);
  }
  return {
    ...(body as unknown as SyncRawEmailsResponse),
    new: created,
    updated,
    unchanged,
    updated_properties_only: split ? propsOnly : 0,
    updated_text_changed: split ? textChanged : updated,
  };
}

/** A label name as a path: `["Parent", "Child"]`; a string (notes §3.2) is split at " > ". */
function labelPath(name: unknown): string[] | undefined {
  if (typeof name === 'string' && name !== '') return name.split(' > ');
  if (Array.isArray(name) && name.length > 0 && name.every((part) => typeof part === 'string')) return name as string[];
  return undefined;
}

function label(value: unknown): PredictedLabel | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const l = value as Record<string, unknown>;
  const name = labelPath(l.name);
  if (name === undefined || typeof l.probability !== 'number') return undefined;
  return { ...(l as object), name, probability: l.probability } as PredictedLabel;
}

function model(value: unknown): PredictRawEmailsResponse['model'] {
  if (value === null || typeof value !== 'object') return null;
  const m = value as Record<string, unknown>;
  return typeof m.version === 'number' && typeof m.time === 'string' ? { version: m.version, time: m.time } : null;
}

/**
 * One list of predictions per document, in request order (notes §3.2). Each label needs a
 * name (a string or a list of strings, returned as a list) and a probability. `model` may be
 * null or absent (then null).
 */
export function checkPredictResponse(status: number, body: Record<string, unknown>, documents: number): PredictRawEmailsResponse {
  const predictions = body.predictions;
  if (!Array.isArray(predictions) || predictions.length !== documents || !predictions.every(Array.isArray)) {
    throw bad(status, `predictions that are not one list per document (${documents} sent)`);
  }
  const labels = (predictions as unknown[][]).map((list) => list.map(label));
  if (labels.some((list) => list.some((l) => l === undefined))) throw bad(status, 'a predicted label without a name or a probability');
  return { ...(body as unknown as PredictRawEmailsResponse), predictions: labels as PredictedLabel[][], model: model(body.model) };
}
