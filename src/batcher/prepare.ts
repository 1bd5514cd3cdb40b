/**
 * Settling each item before any request: schema check, property rules, ledger comparison,
 * serialization. What is refused or unchanged here never reaches the network.
 *
 * An item that arrives with its document's JSON text and hashes (the outbox: intake built,
 * checked and hashed it) and whose text holds no key named like a generated property is
 * settled without parsing its document: the rules cannot change it, its text is what is sent.
 */
import { GatewayError, type Warning } from '../errors.js';
import { GENERATED_PROPERTIES, RawEmailDocument } from '../model/index.js';
import { documentHashes, estimatedUnits, ledgerVerdict, type DocumentHashes, type Ledger, type LedgerVerdict } from '../ledger/index.js';
import { applyPropertyRules } from './properties.js';
import type { DeliveryItem, ItemOutcome, Target } from './types.js';

export interface Prepared {
  /** Index of the item in the delivery's input. */
  item: number;
  /** The document's JSON text, exactly as it is sent. */
  json: string;
  /** Generated property names this document needs in override_user_properties (sync). */
  overrides: string[];
  warnings: Warning[];
  /** Serialized bytes of the document (UTF-8). */
  bytes: number;
  /** Ledger hashes, when the document has a comment id and the target is a source. */
  hashes: DocumentHashes | undefined;
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
  return parsed.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`)
    .join('; ');
}

/**
 * A JSON object key naming a generated property (`"string:Sender":`). JSON.stringify writes
 * such a key only for a real key (a quote inside a string value is escaped), so text without
 * a match has no colliding property; a match (possibly a header name) only costs a parse.
 */
const GENERATED_KEY = new RegExp(`"(?:string|number):(?:${Object.keys(GENERATED_PROPERTIES).join('|')})":`);

/** The item settled from its stored text and hashes, or undefined when it needs the full path. */
function fastPath(item: DeliveryItem, index: number, target: Target, options: PrepareOptions): Prepared | undefined {
  if (item.json === undefined || item.hashes === undefined || options.validate !== false || GENERATED_KEY.test(item.json)) return undefined;
  const commentId = target.kind === 'sync' ? (item.commentId ?? item.document.comment_id) : undefined;
  return {
    item: index,
    json: item.json,
    overrides: [],
    warnings: [],
    bytes: Buffer.byteLength(item.json),
    hashes: commentId === undefined ? undefined : item.hashes,
    commentId,
    verdict: undefined,
    units: 1,
  };
}

/** The item checked, settled by the property rules, serialized and hashed; or its refusal. */
function fullPath(
  item: DeliveryItem,
  index: number,
  target: Target,
  options: PrepareOptions,
  outcomes: Array<ItemOutcome | undefined>,
): Prepared | undefined {
  const problem = options.validate === false ? undefined : schemaProblem(item.document);
  if (problem !== undefined) {
    outcomes[index] = { key: item.key, status: 'rejected', code: 'MAILGATE_ERR_DOCUMENT_INVALID', message: problem };
    return undefined;
  }
  const settled = applyPropertyRules(item.document, target);
  if (!settled.ok) {
    outcomes[index] = {
      key: item.key,
      status: 'rejected',
      code: settled.error.code,
      message: settled.error.message,
      warnings: settled.warnings,
    };
    return undefined;
  }
  const { document } = settled;
  const unchanged = document === item.document;
  const json = unchanged && item.json !== undefined ? item.json : JSON.stringify(document);
  const commentId = target.kind === 'sync' ? document.comment_id : undefined;
  const hashes = commentId === undefined ? undefined : unchanged && item.hashes !== undefined ? item.hashes : documentHashes(document);
  return {
    item: index,
    json,
    overrides: settled.overrides,
    warnings: settled.warnings,
    bytes: Buffer.byteLength(json),
    hashes,
    commentId,
    verdict: undefined,
    units: 1,
  };
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
    const p = fastPath(item, index, target, options) ?? fullPath(item, index, target, options, outcomes);
    if (p !== undefined) candidates.push(p);
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
