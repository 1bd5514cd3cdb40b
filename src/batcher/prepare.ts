/**
 * Settling each item before any request: schema check, property rules, ledger comparison,
 * serialization. What is refused or unchanged here never reaches the network.
 */
import { GatewayError, type Warning } from '../errors.js';
import { RawEmailDocument } from '../model/index.js';
import { documentHashes, estimatedUnits, ledgerVerdict, type Ledger, type LedgerVerdict } from './ledger.js';
import { applyPropertyRules } from './properties.js';
import type { DeliveryItem, ItemOutcome, Target } from './types.js';

export interface Prepared {
  /** Index of the item in the delivery's input. */
  item: number;
  document: RawEmailDocument;
  /** Generated property names this document needs in override_user_properties (sync). */
  overrides: string[];
  warnings: Warning[];
  /** Serialized bytes of the document (UTF-8). */
  bytes: number;
  /** Ledger hashes, when the document has a comment id and the target is a source. */
  hashes: { textHash: string; propsHash: string } | undefined;
  commentId: string | undefined;
  /** Comparison with the ledger (sync with a ledger and a comment id). */
  verdict: LedgerVerdict | undefined;
  /** AI units by the ledger rule (predict: 1 per document). */
  units: 0 | 1;
}

export interface PrepareOptions {
  /** Check each document against the API schema first (default true): a bad one costs no request. */
  validate?: boolean;
}

function schemaProblem(doc: RawEmailDocument): string | undefined {
  const parsed = RawEmailDocument.safeParse(doc);
  if (parsed.success) return undefined;
  return parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ');
}

/** Fills `outcomes` for refused and unchanged items; returns the documents to send, in input order. */
export async function prepare(
  items: DeliveryItem[],
  target: Target,
  ledger: Ledger | undefined,
  outcomes: Array<ItemOutcome | undefined>,
  options: PrepareOptions = {},
): Promise<Prepared[]> {
  const candidates: Prepared[] = [];
  items.forEach((item, index) => {
    const problem = options.validate === false ? undefined : schemaProblem(item.document);
    if (problem !== undefined) {
      outcomes[index] = { key: item.key, status: 'rejected', code: 'MAILGATE_ERR_DOCUMENT_INVALID', message: problem };
      return;
    }
    const settled = applyPropertyRules(item.document, target);
    if (!settled.ok) {
      outcomes[index] = { key: item.key, status: 'rejected', code: settled.error.code, message: settled.error.message, warnings: settled.warnings };
      return;
    }
    const { document } = settled;
    const commentId = target.kind === 'sync' ? document.comment_id : undefined;
    candidates.push({
      item: index,
      document,
      overrides: settled.overrides,
      warnings: settled.warnings,
      bytes: Buffer.byteLength(JSON.stringify(document)),
      hashes: commentId === undefined ? undefined : documentHashes(document),
      commentId,
      verdict: undefined,
      units: 1,
    });
  });
  if (target.kind !== 'sync' || ledger === undefined) return candidates;

  const ids = [...new Set(candidates.flatMap((p) => (p.commentId === undefined ? [] : [p.commentId])))];
  let known;
  try {
    known = ids.length === 0 ? new Map() : await ledger.lookup(target.source, ids);
  } catch (cause) {
    throw cause instanceof GatewayError ? cause : new GatewayError('MAILGATE_ERR_STORE_UNAVAILABLE', 'ledger lookup failed', { cause });
  }
  return candidates.filter((p) => {
    if (p.commentId === undefined || p.hashes === undefined) return true;
    const verdict = ledgerVerdict(p.hashes, known.get(p.commentId));
    if (verdict === 'unchanged') {
      outcomes[p.item] = { key: items[p.item]!.key, status: 'unchanged' };
      return false;
    }
    p.verdict = verdict;
    p.units = estimatedUnits(verdict);
    return true;
  });
}
