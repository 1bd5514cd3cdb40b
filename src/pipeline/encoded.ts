/**
 * What intake needs of a parsed message, with the document already JSON text. The parse
 * workers produce it, so the main thread neither receives whole object graphs nor
 * serializes them again for the store: it only moves strings. The comment preview is not
 * carried: it is built from the document alone (src/preview/comment.ts), so whoever shows a
 * stored item's comment builds it again from the stored document, exactly as the service
 * will; only its thread facts travel, for the thread index, its ledger hashes, and the facts the
 * console lists and searches by (sender, subject, Message-ID, timestamp).
 */
import { documentJsonAndHash, textHashOf, type DocumentHashes } from '../ledger/index.js';
import type { Warning } from '../errors.js';
import { messageFacts, type MessageFacts } from '../preview/facts.js';
import { messageAddresses } from '../preview/threads.js';
import type { PreviewResult } from '../preview/types.js';

/** The comment's place in its thread, for the store's thread index. */
export interface ThreadFacts {
  threadId: string;
  /** ISO-8601. */
  timestamp: string;
  from?: string;
  participants: string[];
}

export interface EncodedPreview {
  commentId: string;
  /** JSON text of the API document. */
  document: string;
  warnings: Warning[];
  thread?: ThreadFacts;
  /** The ledger hashes, computed here so that delivery does not build the comment again. */
  hashes: DocumentHashes;
  /** What the console lists and searches by, computed here so that the store parses nothing. */
  facts: MessageFacts;
}

/** `facts`: the message's facts, when previewWithFacts has them already (else read from the document). */
export function encodePreview(result: PreviewResult, facts?: MessageFacts): EncodedPreview {
  const c = result.comment;
  // The document's text and its hash share the JSON of its header block and body.
  const { json, docHash } = documentJsonAndHash(result.document);
  const encoded: EncodedPreview = {
    commentId: c.id,
    document: json,
    warnings: result.warnings,
    hashes: { textHash: textHashOf(c.messages), docHash },
    facts: facts ?? messageFacts(result.document),
  };
  if (c.thread_id) {
    const m = c.messages[0];
    encoded.thread = { threadId: c.thread_id, timestamp: c.timestamp, participants: messageAddresses(m) };
    if (m?.from) encoded.thread.from = m.from;
  }
  return encoded;
}

/**
 * An EncodedPreview as it crosses from a parse worker to the main thread: its values in one flat
 * array, in a fixed order. A structured clone writes the name of every property of every object
 * and the receiving thread reads each back, about 25 names a message; the array carries the
 * values alone (`packEncoded` in the worker, `unpackEncoded` on arrival).
 */
export type EncodedWire = [
  commentId: string,
  document: string,
  warnings: Warning[] | null,
  textHash: string,
  docHash: string,
  sender: string | null,
  senderName: string | null,
  subject: string | null,
  messageId: string | null,
  timestamp: number | null,
  threadId: string | null,
  threadTimestamp: string | null,
  threadFrom: string | null,
  participants: string[] | null,
];

export function packEncoded(e: EncodedPreview): EncodedWire {
  const { facts, thread } = e;
  return [
    e.commentId,
    e.document,
    e.warnings.length === 0 ? null : e.warnings,
    e.hashes.textHash,
    e.hashes.docHash,
    facts.sender,
    facts.senderName,
    facts.subject,
    facts.messageId,
    facts.timestamp,
    thread === undefined ? null : thread.threadId,
    thread === undefined ? null : thread.timestamp,
    thread?.from ?? null,
    thread === undefined ? null : thread.participants,
  ];
}

export function unpackEncoded(w: EncodedWire): EncodedPreview {
  const encoded: EncodedPreview = {
    commentId: w[0],
    document: w[1],
    warnings: w[2] ?? [],
    hashes: { textHash: w[3], docHash: w[4] },
    facts: { sender: w[5], senderName: w[6], subject: w[7], messageId: w[8], timestamp: w[9] },
  };
  if (w[10] !== null) {
    encoded.thread = { threadId: w[10], timestamp: w[11]!, participants: w[13]! };
    if (w[12] !== null) encoded.thread.from = w[12];
  }
  return encoded;
}
