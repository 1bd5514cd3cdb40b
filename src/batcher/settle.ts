/**
 * Turning request results into item outcomes, counts, AI units and ledger entries.
 *
 * AI units of a successful sync request (docs/delivery.md "Ledger and billing"): the larger
 * of what the answer shows (`new + updated_text_changed`) and what the ledger expected for
 * its documents (1 per document the ledger had never seen delivered, or whose text changed,
 * each comment id counted once per delivery). An earlier attempt that was applied but whose
 * answer was lost (dropped connection, 5xx after the write, a crash) makes the service answer
 * `unchanged` for documents it did bill; the ledger side of the rule counts them.
 */
import { ApiError } from '../api/errors.js';
import { GatewayError, type ErrorCode, type Warning } from '../errors.js';
import type { PredictRawEmailsResponse, SyncRawEmailsResponse } from '../model/index.js';
import type { Ledger, LedgerEntry } from '../ledger/index.js';
import type { Prepared } from './prepare.js';
import type { PartResult } from './split.js';
import type { DeliveryItem, DeliveryReport, ItemOutcome, SyncCounts, Target } from './types.js';

export type Answer = SyncRawEmailsResponse | PredictRawEmailsResponse;

interface Described {
  code: ErrorCode;
  message: string;
  status?: number;
  retryAfterMs?: number;
}

export function describe(error: unknown): Described {
  if (error instanceof ApiError) {
    const said = error.apiMessage ?? error.message;
    const message =
      error.exhausted !== undefined && error.apiMessage !== undefined ? `${said} (gave up after ${error.attempts ?? 1} attempts)` : said;
    // A refused token or target: the API's words, then which resource and what to check.
    const d: Described = { code: error.code, message: error.hint === undefined ? message : `${message}; ${error.hint}` };
    if (error.status !== undefined) d.status = error.status;
    if (error.retryAfterMs !== undefined) d.retryAfterMs = error.retryAfterMs;
    return d;
  }
  if (error instanceof GatewayError) return { code: error.code, message: error.message };
  return { code: 'MAILGATE_ERR_API_NETWORK', message: error instanceof Error ? error.message : String(error) };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

export function warningsOf(p: Prepared): { warnings?: Warning[] } {
  return p.warnings.length > 0 ? { warnings: p.warnings } : {};
}

function addCounts(sum: SyncCounts, add: SyncCounts): void {
  sum.new += add.new;
  sum.updated += add.updated;
  sum.updated_properties_only += add.updated_properties_only;
  sum.updated_text_changed += add.updated_text_changed;
  sum.unchanged += add.unchanged;
}

export class Settler {
  /** Comment ids whose expected unit this delivery has already counted. */
  private readonly counted = new Set<string>();

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
      } else if (part.kind === 'unsplit') {
        // Never shown to be bad: a later delivery isolates it with a fresh split budget.
        this.outcomes[p.item] = {
          key,
          status: 'retry',
          code: 'MAILGATE_ERR_BATCH_NOT_ISOLATED',
          message: `not isolated within the split budget; a batch holding it was answered: ${d.message}`,
        };
      } else {
        this.outcomes[p.item] = {
          key,
          status: 'rejected',
          code: 'MAILGATE_ERR_BATCH_REJECTED',
          message: d.message,
          ...optional('httpStatus', d.status),
          ...warningsOf(p),
        };
      }
    }
    if (part.kind === 'rejected') await this.record(docs, 'rejected');
  }

  private async delivered(docs: Prepared[], answer: Answer): Promise<void> {
    if ('predictions' in answer) {
      this.report.aiUnits += docs.length;
      for (const p of docs) this.report.estimatedAiUnits += p.units;
      docs.forEach((p, j) => {
        this.outcomes[p.item] = {
          key: this.items[p.item]!.key,
          status: 'delivered',
          predictions: answer.predictions[j] ?? [],
          model: answer.model ?? null,
          ...warningsOf(p),
        };
      });
    } else {
      const counts: SyncCounts = {
        new: answer.new,
        updated: answer.updated,
        updated_properties_only: answer.updated_properties_only,
        updated_text_changed: answer.updated_text_changed,
        unchanged: answer.unchanged,
      };
      addCounts(this.report.counts, counts);
      // Confirmed: what the answer says was billed. Estimated: also the units of documents the
      // ledger never saw delivered that the answer calls unchanged — an earlier attempt (a lost
      // answer, a process killed before recording) created them, billed then, maybe by another run.
      const confirmed = counts.new + counts.updated_text_changed;
      this.report.aiUnits += confirmed;
      this.report.estimatedAiUnits += Math.max(confirmed, this.expectedUnits(docs));
      for (const p of docs) {
        this.outcomes[p.item] = {
          key: this.items[p.item]!.key,
          status: 'delivered',
          ...(docs.length === 1 ? { counts } : {}),
          ...warningsOf(p),
        };
      }
    }
    await this.record(docs, 'delivered');
  }

  /** Units the ledger expected for these delivered documents, each comment id once per delivery. */
  private expectedUnits(docs: Prepared[]): number {
    let units = 0;
    for (const p of docs) {
      if (p.verdict === undefined || p.commentId === undefined || p.units === 0 || this.counted.has(p.commentId)) continue;
      this.counted.add(p.commentId);
      units += 1;
    }
    return units;
  }

  /** Ledger entries; a rejection never replaces what a delivered comment looked like. */
  private async record(docs: Prepared[], outcome: LedgerEntry['outcome']): Promise<void> {
    if (this.target.kind !== 'sync' || this.ledger === undefined) return;
    const updatedAt = new Date().toISOString();
    const entries = docs.flatMap((p) =>
      p.commentId === undefined || p.hashes === undefined || (outcome === 'rejected' && p.verdict !== undefined && p.verdict !== 'new')
        ? []
        : [{ commentId: p.commentId, ...p.hashes, outcome, updatedAt }],
    );
    if (entries.length === 0) return;
    try {
      await this.ledger.record(this.target.source, entries);
    } catch (cause) {
      this.report.ledgerError ??=
        cause instanceof GatewayError ? cause : new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', 'ledger record failed', { cause });
    }
  }
}
