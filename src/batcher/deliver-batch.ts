/**
 * Delivering items to one target: prepare (schema, property rules, ledger), pack, send with
 * split-on-rejection, and one outcome per item. Never throws for a request failure: those
 * become `rejected` (the document's own fault) or `retry` (the caller reschedules).
 */
import { parseLimit } from '../limits.js';
import { ApiError } from '../api/errors.js';
import type { ApiClient, AttemptInfo } from '../api/client.js';
import { GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/index.js';
import { pack, resolveBatchLimits } from './pack.js';
import { prepare, type Prepared, type PrepareOptions } from './prepare.js';
import { checkTarget, encodeRequest, envelopeBytes } from './requests.js';
import { Settler, warningsOf, type Answer } from './settle.js';
import { newSplitState, sendSplitting, type SendResult, type SplitOptions } from './split.js';
import { emptyCounts, type DeliveryItem, type DeliveryReport, type ItemOutcome, type Target } from './types.js';

export interface DeliverBatchOptions extends PrepareOptions {
  /** Pack, estimate and report; send nothing, record nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Batches in flight at once (default 1). */
  concurrency?: number;
  /** Split requests allowed per packed batch before the rest is left unisolated (default 256). */
  maxSplitRequests?: number;
  noCharge?: boolean;
}

export const MAX_SPLIT_REQUESTS = 256;

/** 400, 413 and 422 are about the request's content: splitting can isolate the cause. */
export function isSplittable(error: unknown): boolean {
  return error instanceof GatewayError && (error.status === 400 || error.status === 413 || error.status === 422);
}

/** Status and API message (or the start of a non-JSON body): equal signatures are the same refusal. */
export function failureSignature(error: unknown): string {
  if (error instanceof ApiError) return `${error.status ?? ''}|${error.apiMessage ?? error.bodySnippet ?? ''}`;
  if (error instanceof GatewayError) return `${error.status ?? ''}|${error.code}`;
  return String(error);
}

/** The error a request-level refusal leaves every document of the delivery with. */
export function requestRejected(error: unknown): ApiError {
  const status = error instanceof GatewayError ? error.status : undefined;
  const said = error instanceof ApiError ? (error.apiMessage ?? error.bodySnippet ?? error.message) : String(error);
  return new ApiError(
    'MAILGATE_ERR_API_REQUEST_REJECTED',
    `the API refuses this target's requests whatever documents they hold${status === undefined ? '' : ` (${status})`}: ${said}`,
    { ...(status === undefined ? {} : { status }), cause: error },
  );
}

const SPLIT: Omit<SplitOptions, 'maxSplitRequests'> = { isSplittable, signature: failureSignature, requestRejected };

function checkOptions(options: DeliverBatchOptions): { concurrency: number; maxSplitRequests: number } {
  return {
    concurrency: parseLimit('concurrency', options.concurrency, 1),
    maxSplitRequests: parseLimit('maxSplitRequests', options.maxSplitRequests, MAX_SPLIT_REQUESTS, { min: 0 }),
  };
}

/**
 * Failed attempts the service may have processed before the answer was lost: no answer at
 * all, a deadline, a 5xx (a proxy's 504 after the write), or a 2xx that could not be read.
 */
function mayHaveBeenProcessed(info: AttemptInfo): boolean {
  const code = info.error?.code;
  if (code === 'MAILGATE_ERR_API_TIMEOUT') return info.status !== 408;
  return code === 'MAILGATE_ERR_API_NETWORK' || code === 'MAILGATE_ERR_API_SERVER' || code === 'MAILGATE_ERR_API_BAD_RESPONSE';
}

/** One HTTP call for the prepared documents; request failures are returned, not thrown. */
function sender(target: Target, client: ApiClient, prepared: Prepared[], options: DeliverBatchOptions, report: DeliveryReport) {
  return async (indices: number[], envelopeOnly = false): Promise<SendResult<Answer>> => {
    // The envelope-only probe keeps the batch's override list, with no documents.
    const req = encodeRequest(
      target,
      indices.map((i) => prepared[i]!),
      envelopeOnly,
    );
    const documents = req.documents;
    const onAttempt = (info: AttemptInfo): void => {
      // predict bills per document per processed request; sync's lost writes come back `unchanged` and are counted by the ledger rule.
      if (target.kind === 'predict' && mayHaveBeenProcessed(info)) report.unconfirmedAiUnits += documents;
    };
    const opts = { signal: options.signal, noCharge: options.noCharge, onAttempt };
    try {
      const value =
        target.kind === 'sync'
          ? await client.syncRawEmails(target.source, req, opts)
          : await client.predictRawEmails(target.dataset, target.version, req, opts);
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  };
}

export async function deliverBatch(
  items: DeliveryItem[],
  target: Target,
  client: ApiClient,
  ledger?: Ledger,
  options: DeliverBatchOptions = {},
): Promise<DeliveryReport> {
  checkTarget(target);
  const { concurrency, maxSplitRequests } = checkOptions(options);
  const limits = resolveBatchLimits(target.kind, target);
  const outcomes: Array<ItemOutcome | undefined> = new Array(items.length);
  const prepared = await prepare(items, target, ledger, outcomes, options);
  const packing = pack(
    prepared.map((p) => p.bytes),
    { ...limits, envelopeBytes: envelopeBytes(target, prepared) },
  );
  const report: DeliveryReport = {
    outcomes: [],
    counts: emptyCounts(),
    aiUnits: 0,
    unconfirmedAiUnits: 0,
    estimatedAiUnits: 0,
    requests: 0,
    splitRequests: 0,
    dryRun: options.dryRun === true,
  };
  for (const i of packing.tooLarge) {
    const p = prepared[i]!;
    outcomes[p.item] = {
      key: items[p.item]!.key,
      status: 'rejected',
      code: 'MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE',
      message: `document of ${p.bytes} bytes exceeds the request limit of ${limits.maxRequestBytes} bytes`,
    };
  }
  if (options.dryRun === true) {
    for (const batch of packing.batches)
      for (const i of batch) {
        const p = prepared[i]!;
        report.estimatedAiUnits += p.units;
        outcomes[p.item] = { key: items[p.item]!.key, status: 'delivered', estimatedAiUnits: p.units, ...warningsOf(p) };
      }
    report.requests = packing.batches.length;
    report.outcomes = outcomes.map((o, i) => o ?? { key: items[i]!.key, status: 'delivered' });
    return report;
  }

  const state = newSplitState();
  const send = sender(target, client, prepared, options, report);
  const settle = new Settler(items, target, prepared, ledger, outcomes, report);
  const queue = [...packing.batches];
  const worker = async (): Promise<void> => {
    for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
      const parts = await sendSplitting(batch, send, { ...SPLIT, maxSplitRequests }, state);
      for (const part of parts) await settle.part(part);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
  report.requests = state.requests;
  report.splitRequests = state.splitRequests;
  report.outcomes = outcomes.map(
    (o, i) => o ?? { key: items[i]!.key, status: 'retry', code: 'MAILGATE_ERR_API_ABORTED', message: 'not attempted' },
  );
  return report;
}
