/**
 * Delivering items to one target: prepare (schema, property rules, ledger), pack, send with
 * split-on-rejection, and one outcome per item. Never throws for a request failure: those
 * become `rejected` (the document's own fault) or `retry` (the caller reschedules).
 */
import { ApiError } from '../api/errors.js';
import type { ApiClient } from '../api/client.js';
import { GatewayError, type ErrorCode, type Warning } from '../errors.js';
import type { PredictRawEmailsRequest, PredictRawEmailsResponse, SyncRawEmailsRequest, SyncRawEmailsResponse } from '../model/index.js';
import type { Ledger, LedgerEntry } from './ledger.js';
import { pack, resolveBatchLimits } from './pack.js';
import { prepare, type Prepared, type PrepareOptions } from './prepare.js';
import { checkTarget, encodeRequest, envelopeBytes } from './requests.js';
import { newSplitState, sendSplitting, type PartResult, type SendResult, type SplitState } from './split.js';
import { emptyCounts, type DeliveryItem, type DeliveryReport, type ItemOutcome, type SyncCounts, type Target } from './types.js';

export interface DeliverOptions extends PrepareOptions {
  /** Pack, estimate and report; send nothing, record nothing. */
  dryRun?: boolean;
  signal?: AbortSignal;
  /** Batches in flight at once (default 1). */
  concurrency?: number;
  /** Split requests allowed per packed batch before the rest is left unisolated (default 256). */
  maxSplitRequests?: number;
  noCharge?: boolean;
}

export const DEFAULT_MAX_SPLIT_REQUESTS = 256;

type Answer = SyncRawEmailsResponse | PredictRawEmailsResponse;

/** 400, 413 and 422 are about the request's content: splitting can isolate the cause. */
export function isSplittable(error: unknown): boolean {
  return error instanceof GatewayError && (error.status === 400 || error.status === 413 || error.status === 422);
}

function describe(error: unknown): { code: ErrorCode; message: string; status?: number; retryAfterMs?: number } {
  if (error instanceof ApiError) {
    const d: { code: ErrorCode; message: string; status?: number; retryAfterMs?: number } = { code: error.code, message: error.apiMessage ?? error.message };
    if (error.status !== undefined) d.status = error.status;
    if (error.retryAfterMs !== undefined) d.retryAfterMs = error.retryAfterMs;
    return d;
  }
  if (error instanceof GatewayError) return { code: error.code, message: error.message };
  return { code: 'MAILGATE_ERR_API_NETWORK', message: error instanceof Error ? error.message : String(error) };
}

function checkOptions(options: DeliverOptions): { concurrency: number; maxSplitRequests: number } {
  const concurrency = options.concurrency ?? 1;
  const maxSplitRequests = options.maxSplitRequests ?? DEFAULT_MAX_SPLIT_REQUESTS;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `concurrency must be an integer >= 1 (got ${String(concurrency)})`);
  if (!Number.isInteger(maxSplitRequests) || maxSplitRequests < 0) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `maxSplitRequests must be an integer >= 0 (got ${String(maxSplitRequests)})`);
  return { concurrency, maxSplitRequests };
}

/** One HTTP call for the prepared documents; request failures are returned, not thrown. */
function sender(target: Target, client: ApiClient, prepared: Prepared[], options: DeliverOptions) {
  return async (indices: number[]): Promise<SendResult<Answer>> => {
    const req = encodeRequest(target, indices.map((i) => prepared[i]!));
    const opts = { signal: options.signal, noCharge: options.noCharge };
    try {
      const value = target.kind === 'sync'
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
  options: DeliverOptions = {},
): Promise<DeliveryReport> {
  checkTarget(target);
  const { concurrency, maxSplitRequests } = checkOptions(options);
  const limits = resolveBatchLimits(target.kind, target);
  const outcomes: Array<ItemOutcome | undefined> = new Array(items.length);
  const prepared = await prepare(items, target, ledger, outcomes, options);
  const packing = pack(prepared.map((p) => p.bytes), { ...limits, envelopeBytes: envelopeBytes(target, prepared) });
  const report: DeliveryReport = {
    outcomes: [], counts: emptyCounts(), aiUnits: 0, estimatedAiUnits: 0, requests: 0, splitRequests: 0, dryRun: options.dryRun === true,
  };
  for (const i of packing.tooLarge) {
    const p = prepared[i]!;
    outcomes[p.item] = {
      key: items[p.item]!.key, status: 'rejected', code: 'MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE',
      message: `document of ${p.bytes} bytes exceeds the request limit of ${limits.maxRequestBytes} bytes`,
    };
  }
  if (options.dryRun === true) {
    for (const batch of packing.batches) for (const i of batch) {
      const p = prepared[i]!;
      report.estimatedAiUnits += p.units;
      outcomes[p.item] = { key: items[p.item]!.key, status: 'delivered', estimatedAiUnits: p.units, ...warningsOf(p) };
    }
    report.requests = packing.batches.length;
    report.outcomes = outcomes.map((o, i) => o ?? { key: items[i]!.key, status: 'delivered' });
    return report;
  }

  const state = newSplitState();
  const send = sender(target, client, prepared, options);
  const settle = new Settler(items, target, prepared, ledger, outcomes, report);
  const queue = [...packing.batches];
  const worker = async (): Promise<void> => {
    for (let batch = queue.shift(); batch !== undefined; batch = queue.shift()) {
      const parts = await sendSplitting(batch, send, { isSplittable, maxSplitRequests }, state);
      for (const part of parts) await settle.part(part);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(1, queue.length)) }, worker));
  finish(report, state);
  report.outcomes = outcomes.map((o, i) => o ?? { key: items[i]!.key, status: 'retry', code: 'MAILGATE_ERR_API_ABORTED', message: 'not attempted' });
  return report;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

function warningsOf(p: Prepared): { warnings?: Warning[] } {
  return p.warnings.length > 0 ? { warnings: p.warnings } : {};
}

function addCounts(sum: SyncCounts, add: SyncCounts): void {
  sum.new += add.new;
  sum.updated += add.updated;
  sum.updated_properties_only += add.updated_properties_only;
  sum.updated_text_changed += add.updated_text_changed;
  sum.unchanged += add.unchanged;
}

function finish(report: DeliveryReport, state: SplitState): void {
  report.requests = state.requests;
  report.splitRequests = state.splitRequests;
}

/** Turns request results into outcomes, counts and ledger entries. */
class Settler {
  constructor(
    private readonly items: DeliveryItem[],
    private readonly target: Target,
    private readonly prepared: Prepared[],
    private readonly ledger: Ledger | undefined,
    private readonly outcomes: Array<ItemOutcome | undefined>,
    private readonly report: DeliveryReport,
  ) {}

  async part(part: PartResult<Answer>): Promise<void> {
    const docs = part.indices.map((i) => this.prepared[i]!);
    if (part.kind === 'ok') return this.delivered(docs, part.value);
    const d = describe(part.error);
    for (const p of docs) {
      const key = this.items[p.item]!.key;
      if (part.kind === 'failed') {
        this.outcomes[p.item] = { key, status: 'retry', code: d.code, message: d.message, ...optional('retryAfterMs', d.retryAfterMs) };
        continue;
      }
      const isolated = part.kind === 'rejected';
      this.outcomes[p.item] = {
        key,
        status: 'rejected',
        code: isolated ? 'MAILGATE_ERR_BATCH_REJECTED' : 'MAILGATE_ERR_BATCH_NOT_ISOLATED',
        message: isolated ? d.message : `not isolated within the split budget; a batch holding it was answered: ${d.message}`,
        ...optional('httpStatus', d.status),
        ...warningsOf(p),
      };
    }
    if (part.kind === 'rejected') await this.record(docs, 'rejected');
  }

  private async delivered(docs: Prepared[], answer: Answer): Promise<void> {
    if ('predictions' in answer) {
      this.report.aiUnits += docs.length;
      docs.forEach((p, j) => {
        this.outcomes[p.item] = { key: this.items[p.item]!.key, status: 'delivered', predictions: answer.predictions[j] ?? [], model: answer.model ?? null, ...warningsOf(p) };
      });
    } else {
      const counts: SyncCounts = {
        new: answer.new, updated: answer.updated, updated_properties_only: answer.updated_properties_only,
        updated_text_changed: answer.updated_text_changed, unchanged: answer.unchanged,
      };
      addCounts(this.report.counts, counts);
      this.report.aiUnits += counts.new + counts.updated_text_changed;
      for (const p of docs) {
        this.outcomes[p.item] = { key: this.items[p.item]!.key, status: 'delivered', ...(docs.length === 1 ? { counts } : {}), ...warningsOf(p) };
      }
    }
    for (const p of docs) this.report.estimatedAiUnits += p.units;
    await this.record(docs, 'delivered');
  }

  /** Ledger entries; a rejection never replaces what a delivered comment looked like. */
  private async record(docs: Prepared[], outcome: LedgerEntry['outcome']): Promise<void> {
    if (this.target.kind !== 'sync' || this.ledger === undefined) return;
    const updatedAt = new Date().toISOString();
    const entries = docs.flatMap((p) =>
      p.commentId === undefined || p.hashes === undefined || (outcome === 'rejected' && p.verdict !== undefined && p.verdict !== 'new') ? [] : [{ commentId: p.commentId, ...p.hashes, outcome, updatedAt }]);
    if (entries.length === 0) return;
    try {
      await this.ledger.record(this.target.source, entries);
    } catch (cause) {
      this.report.ledgerError ??= cause instanceof GatewayError ? cause : new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', 'ledger record failed', { cause });
    }
  }
}
