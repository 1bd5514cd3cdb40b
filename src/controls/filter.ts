/**
 * A mailbox's message filter, compiled once from its controls: the folders it leaves out, and a
 * verdict on each message from its header block alone (From/To/Cc, Auto-Submitted, Precedence,
 * List-Id). The verdict is reached before intake: a message filtered out is never parsed, never
 * stored and never billed; the adapter moves its checkpoint past it and reports it counted.
 */
import { headerEnd } from '../mime/mbox-finish.js';
import { getHeader, getHeaders, parseAddressList, parseHeaderBlock } from '../mime/headers.js';
import type { HeaderField } from '../mime/types.js';
import { folderMatches } from './folders.js';
import { anyMatches } from './participants.js';
import type { MailboxControls } from './schema.js';

/** Why a message was left out (the `reason` label of `mailgate_messages_filtered_total`). */
export type FilterReason = 'participants' | 'auto_reply' | 'mailing_list' | 'since' | 'excluded_label';

export type FilterVerdict = { keep: true } | { keep: false; reason: FilterReason };

/** At most this much of a message is read to find its header block (bound before trust). */
export const FILTER_HEADER_BYTES = 256 * 1024;

export interface MessageFilter {
  /** True when nothing would ever be filtered (the adapter may skip the header read). */
  readonly passAll: boolean;
  /** True when the folder is to be read (not matched by `exclude_folders` / `exclude_labels`). */
  folder(path: string, separator?: string): boolean;
  /** The verdict on one message from its raw bytes (only the header block is read). */
  judge(raw: Buffer): FilterVerdict;
  /** The verdict from header fields already at hand. */
  judgeHeaders(fields: readonly HeaderField[]): FilterVerdict;
}

/**
 * Every header field a verdict reads (lowercase): an adapter that can fetch these fields alone
 * (IMAP `BODY.PEEK[HEADER.FIELDS (…)]`) gets the same verdict as from the whole message.
 */
export const FILTER_HEADER_FIELDS: readonly string[] = [
  'from',
  'to',
  'cc',
  'auto-submitted',
  'x-autoreply',
  'x-autorespond',
  'x-auto-response-suppress',
  'in-reply-to',
  'list-id',
  'precedence',
];

/** The header block of a message as fields (at most FILTER_HEADER_BYTES read). */
export function headerFields(raw: Buffer): HeaderField[] {
  const head = raw.subarray(0, Math.min(raw.length, FILTER_HEADER_BYTES));
  const end = headerEnd(head);
  return parseHeaderBlock(head.toString('latin1', 0, end < 0 ? head.length : end));
}

function addresses(fields: readonly HeaderField[], own: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const name of ['from', 'to', 'cc']) {
    for (const value of getHeaders(fields, name)) {
      for (const a of parseAddressList(value)) {
        const addr = a.address?.trim().toLowerCase();
        if (addr !== undefined && addr.includes('@') && !own.has(addr)) out.push(addr);
      }
    }
  }
  return out;
}

/** RFC 3834: anything but `no` is automatic; common autoresponders mark themselves too. */
function isAutoReply(fields: readonly HeaderField[]): boolean {
  const submitted = getHeader(fields, 'auto-submitted')?.trim().toLowerCase();
  if (submitted !== undefined && submitted !== '' && !submitted.startsWith('no')) return true;
  if (getHeader(fields, 'x-autoreply') !== undefined || getHeader(fields, 'x-autorespond') !== undefined) return true;
  const suppress = getHeader(fields, 'x-auto-response-suppress')?.toLowerCase() ?? '';
  return /\b(all|oof|autoreply)\b/.test(suppress) && getHeader(fields, 'in-reply-to') !== undefined;
}

function isMailingList(fields: readonly HeaderField[]): boolean {
  if (getHeader(fields, 'list-id') !== undefined) return true;
  const precedence = getHeader(fields, 'precedence')?.trim().toLowerCase();
  return precedence === 'bulk' || precedence === 'list' || precedence === 'junk';
}

/** `own`: the mailbox's own addresses, never counted as participants. */
export function compileFilter(controls: MailboxControls, own: readonly string[] = []): MessageFilter {
  const ownSet = new Set(own.map((a) => a.trim().toLowerCase()).filter((a) => a.includes('@')));
  const allow = controls.participants?.allow ?? [];
  const deny = controls.participants?.deny ?? [];
  const autoReplies = controls.skip.includes('auto_replies');
  const lists = controls.skip.includes('mailing_lists');
  const exclude = controls.exclude ?? [];
  const passAll = allow.length === 0 && deny.length === 0 && !autoReplies && !lists;
  const judgeHeaders = (fields: readonly HeaderField[]): FilterVerdict => {
    if (autoReplies && isAutoReply(fields)) return { keep: false, reason: 'auto_reply' };
    if (lists && isMailingList(fields)) return { keep: false, reason: 'mailing_list' };
    if (allow.length > 0 || deny.length > 0) {
      const people = addresses(fields, ownSet);
      if (deny.length > 0 && anyMatches(deny, people)) return { keep: false, reason: 'participants' };
      if (allow.length > 0 && !anyMatches(allow, people)) return { keep: false, reason: 'participants' };
    }
    return { keep: true };
  };
  return {
    passAll,
    folder: (path, separator = '/') => exclude.length === 0 || !folderMatches(exclude, path, separator),
    judge: (raw) => (passAll ? { keep: true } : judgeHeaders(headerFields(raw))),
    judgeHeaders,
  };
}
