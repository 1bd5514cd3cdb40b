/**
 * The facts of a message the console lists and searches by: sender address and display name,
 * subject, Message-ID and timestamp, taken from the document's headers. Intake computes them in
 * the parse workers (src/pipeline/encoded.ts) and the store only writes them, so nothing is
 * parsed inside a write transaction.
 */
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../limits.js';
import { parseAddressList } from '../mime/address.js';
import { decodeWords } from '../mime/encoded-words.js';
import { getHeader, parseDate } from '../mime/headers.js';
import { firstMessageId } from '../mime/message-ids.js';
import type { RawEmailDocument } from '../model/index.js';
import type { HeaderFacts } from './types.js';
import { documentHeaders } from './comment.js';

/** Longest stored fact (characters): longer values are cut; a prefix search needs no more. */
export const MAX_FACT_CHARS = 256;

/** Null where the headers give none. */
export interface MessageFacts {
  sender: string | null;
  senderName: string | null;
  subject: string | null;
  messageId: string | null;
  /** ms since the epoch. */
  timestamp: number | null;
}

/** The facts of a document without headers (a dead letter that never parsed). */
export const NO_FACTS: MessageFacts = Object.freeze({ sender: null, senderName: null, subject: null, messageId: null, timestamp: null });

const cut = (s: string | undefined): string | null => {
  const t = s?.trim();
  return t === undefined || t === '' ? null : t.slice(0, MAX_FACT_CHARS);
};

/** The facts from what the headers say; buildComment reads the same (BuildCommentResult.headerFacts). */
export function factsOf({ from, subject, messageId, date }: HeaderFacts): MessageFacts {
  const time = date?.getTime();
  return {
    sender: cut(from?.address),
    senderName: cut(from?.name),
    subject: cut(subject),
    messageId: cut(messageId),
    timestamp: time !== undefined && time >= MIN_TIMESTAMP_MS && time <= MAX_TIMESTAMP_MS ? time : null,
  };
}

/** The facts of a document; never throws (a document without headers gives nulls). */
export function messageFacts(document: RawEmailDocument): MessageFacts {
  try {
    const headers = documentHeaders(document);
    const msgId = getHeader(headers, 'message-id');
    return factsOf({
      from: parseAddressList(getHeader(headers, 'from') ?? '')[0],
      subject: decodeWords(getHeader(headers, 'subject') ?? ''),
      messageId: firstMessageId(msgId) ?? msgId?.replace(/[<>]/g, ''),
      date: parseDate(getHeader(headers, 'date')),
    });
  } catch {
    return NO_FACTS;
  }
}
