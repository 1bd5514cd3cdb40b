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

export function encodePreview(result: PreviewResult): EncodedPreview {
  const c = result.comment;
  // The document's text and its hash share the JSON of its header block and body.
  const { json, docHash } = documentJsonAndHash(result.document);
  const encoded: EncodedPreview = {
    commentId: c.id,
    document: json,
    warnings: result.warnings,
    hashes: { textHash: textHashOf(c.messages), docHash },
    facts: messageFacts(result.document),
  };
  if (c.thread_id) {
    const m = c.messages[0];
    encoded.thread = { threadId: c.thread_id, timestamp: c.timestamp, participants: messageAddresses(m) };
    if (m?.from) encoded.thread.from = m.from;
  }
  return encoded;
}
