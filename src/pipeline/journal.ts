/**
 * Exchange journal reports (a route's `unwrap: exchange_journal`), kind-neutral: intake applies
 * it to every message of such a route, whatever adapter read it. A report (`X-MS-Journal-Report`,
 * `X-MS-Exchange-Organization-Journal-Report` inside transport) carries the original message
 * unaltered as a `message/rfc822` part and, in its first text part, the envelope Exchange saw:
 *
 *     Sender: alice@contoso.com
 *     Subject: Budget
 *     Message-Id: <budget-1@contoso.com>
 *     To: bob@contoso.com
 *     Cc: carol@contoso.com
 *     Bcc: dave@contoso.com
 *     To: erin@contoso.com, Expanded: sales@contoso.com
 *     To: frank@contoso.com, Forwarded: bob@contoso.com
 *
 * The report is replaced by the original message; the recipients it lists become the origin's
 * envelope (`to`: every recipient; `journal`: by line type, with the expanded lists and the
 * recipients reached by forwarding apart). A report in TNEF form carries the original inside its
 * `winmail.dat` (unwrapTnef). A message that is not a well-formed report passes through unchanged
 * with MAILGATE_WARN_JOURNAL_MALFORMED.
 */
import { createHash } from 'node:crypto';
import { warning, type Warning } from '../errors.js';
import { getHeader } from '../mime/headers.js';
import { splitHeader } from '../mime/header-split.js';
import { expand, makePart, type MimePart } from '../mime/structure.js';
import { readMessage, str, type TnefAttachment, type TnefMessage } from '../mime/tnef.js';
import { tnefBodyText, tnefToRfc822 } from '../mime/tnef-message.js';
import { decodeContent } from '../mime/transfer.js';
import type { Envelope, JournalEnvelope } from '../model/origin.js';

export type { JournalEnvelope };

export type JournalResult =
  /** A report: the original message and the envelope it lists. */
  | { kind: 'unwrapped'; raw: Buffer; sender?: string; journal: JournalEnvelope }
  /** Not a report at all: nothing to do. */
  | { kind: 'plain' }
  /** Says it is a report but cannot be read as one: passed through with this warning. */
  | { kind: 'malformed'; warning: Warning };

const REPORT_FIELDS = ['x-ms-journal-report', 'x-ms-exchange-organization-journal-report'];
const ADDRESS_RE = /<?([^\s<>,;"]+@[^\s<>,;"]+)>?/;
const LINE_RE = /^(to|cc|bcc|recipient)\s*:\s*(.*)$/i;
/** Reports of one message list at most this many recipients; more is not a report mailgate keeps apart. */
const MAX_RECIPIENTS = 10_000;

export function emptyJournal(): JournalEnvelope {
  return { to: [], cc: [], bcc: [], recipient: [], expanded: [], lists: [], forwarded: [] };
}

const address = (text: string): string | undefined => ADDRESS_RE.exec(text.trim())?.[1]?.toLowerCase();

function push(list: string[], value: string | undefined): void {
  if (value !== undefined && !list.includes(value)) list.push(value);
}

/** The envelope lines of the report body; undefined when it lists no recipient. */
export function parseReportBody(text: string): { sender?: string; journal: JournalEnvelope } | undefined {
  const journal = emptyJournal();
  let sender: string | undefined;
  let count = 0;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    const senderLine = /^sender\s*:\s*(.*)$/i.exec(line);
    if (senderLine) {
      sender ??= address(senderLine[1]!);
      continue;
    }
    const m = LINE_RE.exec(line);
    if (!m) continue;
    const [first, ...extras] = m[2]!.split(',');
    const who = address(first!);
    if (who === undefined) continue;
    if (++count > MAX_RECIPIENTS) return undefined;
    push(journal[m[1]!.toLowerCase() as 'to' | 'cc' | 'bcc' | 'recipient'], who);
    for (const extra of extras) {
      const e = /^\s*(expanded|forwarded)\s*:\s*(.*)$/i.exec(extra);
      if (!e) continue;
      if (e[1]!.toLowerCase() === 'expanded') {
        push(journal.expanded, who);
        push(journal.lists, address(e[2]!));
      } else push(journal.forwarded, who);
    }
  }
  return count === 0 ? undefined : { ...(sender !== undefined && { sender }), journal };
}

function leaves(part: MimePart): MimePart[] {
  return part.children === undefined ? [part] : part.children.flatMap(leaves);
}

const malformed = (why: string): JournalResult => ({
  kind: 'malformed',
  warning: warning('MAILGATE_WARN_JOURNAL_MALFORMED', `not a well-formed Exchange journal report (${why}); kept as it is`),
});

/** Reads a message as an Exchange journal report (see the module comment). */
export function unwrapJournalReport(raw: Buffer): JournalResult {
  const head = splitHeader(raw, 0, raw.length);
  if (!REPORT_FIELDS.some((f) => getHeader(head.fields, f) !== undefined)) return { kind: 'plain' };
  const root = makePart(head.fields, head.bodyStart, raw.length, 'text/plain');
  expand({ buf: raw, parts: 1, warnings: [], limitWarned: false }, root, 0);
  const parts = leaves(root);
  const report = parts.find((p) => p.type === 'text/plain');
  const original = parts.find((p) => p.type === 'message/rfc822');
  const tnef = original === undefined ? parts.find(isTnef) : undefined;
  if (tnef !== undefined) return unwrapTnef(raw, report, tnef);
  if (report === undefined) return malformed('no text part listing the envelope');
  if (original === undefined) return malformed('no attached original message');
  const body = parseReportBody(decodeContent(raw, report.start, report.end, report.encoding).toString('utf8'));
  if (body === undefined) return malformed('the report lists no recipient');
  const inner = Buffer.from(decodeContent(raw, original.start, original.end, original.encoding));
  if (splitHeader(inner, 0, inner.length).fields.length === 0) return malformed('the attached original has no header');
  return { kind: 'unwrapped', raw: inner, ...body };
}

const isTnef = (p: MimePart): boolean =>
  p.type === 'application/ms-tnef' || p.type === 'application/vnd.ms-tnef' || p.name?.toLowerCase() === 'winmail.dat';

/**
 * A report in TNEF form (sent with Outlook rich text, or to a journal recipient whose domain
 * keeps TNEF): the original is an attachment inside `winmail.dat` — an attached e-mail (an
 * embedded message, rebuilt as RFC 5322 by the Outlook rules) or an attached .eml — and the
 * envelope is the text part beside it, else the TNEF's own body.
 */
function unwrapTnef(raw: Buffer, report: MimePart | undefined, part: MimePart): JournalResult {
  const bytes = decodeContent(raw, part.start, part.end, part.encoding);
  let message: TnefMessage;
  try {
    message = readMessage(Buffer.from(bytes));
  } catch (err) {
    return malformed(`its winmail.dat cannot be read: ${(err as Error).message}`);
  }
  const text = report ? decodeContent(raw, report.start, report.end, report.encoding).toString('utf8') : tnefBodyText(message);
  if (text === undefined) return malformed('no text part listing the envelope');
  const body = parseReportBody(text);
  if (body === undefined) return malformed('the report lists no recipient');
  let inner: Buffer | undefined;
  for (const a of message.attachments) {
    if (a.message !== undefined) {
      inner = tnefToRfc822(a.message, createHash('sha256').update(bytes).digest('hex').slice(0, 24)).raw;
    } else if (a.data !== undefined && isAttachedMail(a)) inner = a.data;
    if (inner !== undefined) break;
  }
  if (inner === undefined) return malformed('no attached original message in its winmail.dat');
  if (splitHeader(inner, 0, inner.length).fields.length === 0) return malformed('the attached original has no header');
  return { kind: 'unwrapped', raw: inner, ...body };
}

function isAttachedMail(a: TnefAttachment): boolean {
  const type = (str(a.props, 0x370e) ?? '').trim().toLowerCase();
  const name = (str(a.props, 0x3707) ?? str(a.props, 0x3704) ?? a.title ?? '').toLowerCase();
  return type === 'message/rfc822' || name.endsWith('.eml');
}

const union = (a: readonly string[], b: readonly string[]): string[] => [...a, ...b.filter((x) => !a.includes(x))];

/** The union of two reports' envelopes, earlier entries first: a later report adds, never removes. */
export function mergeJournal(earlier: JournalEnvelope | undefined, later: JournalEnvelope): JournalEnvelope {
  if (earlier === undefined) return later;
  const out = emptyJournal();
  for (const k of Object.keys(out) as Array<keyof JournalEnvelope>) out[k] = union(earlier[k] ?? [], later[k]);
  return out;
}

/**
 * The envelope of an unwrapped report: the report's sender and every recipient it lists replace
 * the transport's (which name the journal mailbox, not the message's recipients); the lines are
 * kept apart in `journal`; the rest of the transport's envelope (provider, TLS, …) stays.
 */
export function journalEnvelope(base: Envelope | undefined, sender: string | undefined, journal: JournalEnvelope): Envelope {
  const { from: _from, to: _to, ...rest } = base ?? {};
  const all = union(union(union(journal.to, journal.cc), journal.bcc), journal.recipient);
  return { ...rest, ...(sender !== undefined && { from: sender }), to: all, journal };
}
