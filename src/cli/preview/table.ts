/** The `table` format: one row per message with what people check, fitted to the terminal. */
import type { Comment, ThreadProperties } from '../../model/index.js';
import { escapeLineAndBidi } from '../../line-safe.js';
import type { SpooledLine } from './spool.js';

const GAP = '  ';
const DEFAULT_COLUMNS = 120;
const MIN_COLUMNS = 60;
const BODY_START_CHARS = 40;

interface Widths {
  total: number;
  num: number;
  from: number;
  subject: number;
  thread: number;
  body: number;
  warnings: number;
}

/** Column widths for a terminal `columns` wide (flexible columns share what the fixed ones leave). */
export function columnWidths(columns: number | undefined): Widths {
  const total = Math.max(MIN_COLUMNS, columns ?? DEFAULT_COLUMNS);
  const num = 5;
  const thread = 7;
  const warnings = Math.min(28, Math.floor(total * 0.18));
  const flexible = total - num - thread - warnings - GAP.length * 5;
  const body = Math.min(BODY_START_CHARS, Math.floor(flexible * 0.36));
  const from = Math.floor((flexible - body) * 0.45);
  return { total, num, from, subject: flexible - body - from, thread, body, warnings };
}

/**
 * One line of text: controls and runs of whitespace become one space, bidi controls visible
 * escapes (an override would reverse the rest of the row), cut with an ellipsis.
 */
export function cell(text: string | undefined, width: number): string {
  const flat = escapeLineAndBidi(text ?? '')
    .replace(/[\s\p{Cc}]+/gu, ' ')
    .trim();
  const chars = [...flat];
  const cut = chars.length > width ? `${chars.slice(0, Math.max(0, width - 1)).join('')}…` : flat;
  return cut + ' '.repeat(Math.max(0, width - [...cut].length));
}

function row(w: Widths, cols: [string, string, string, string, string, string]): string {
  const [n, from, subject, thread, body, warnings] = cols;
  return [
    cell(n, w.num),
    cell(from, w.from),
    cell(subject, w.subject),
    cell(thread, w.thread),
    cell(body, w.body),
    cell(warnings, w.warnings),
  ]
    .join(GAP)
    .trimEnd();
}

export function headerLine(w: Widths): string {
  return row(w, ['#', 'FROM', 'SUBJECT', 'THREAD', 'BODY', 'WARNINGS']);
}

interface MessageLine {
  comment: Comment;
  thread_properties?: ThreadProperties;
  warnings: Array<{ code: string }>;
}

interface ErrorLine {
  origin: { path: string; index: number };
  error: { code: string; message: string };
}

export function tableLine(w: Widths, n: number, line: SpooledLine): string {
  if (line.kind === 'error') {
    const e = JSON.parse(line.json) as ErrorLine;
    const where = `${e.origin.path}${e.origin.index > 0 ? `#${e.origin.index}` : ''}`;
    const text = e.error.message.includes(e.origin.path) ? e.error.message : `${where}: ${e.error.message}`;
    const code = e.error.code.replace(/^MAILGATE_ERR_/, '');
    return `${cell(String(n), w.num)}${GAP}${cell(`ERROR ${code} ${text}`, w.total - w.num - GAP.length)}`.trimEnd();
  }
  const m = JSON.parse(line.json) as MessageLine;
  const msg = m.comment.messages[0];
  const tp = m.thread_properties;
  const thread = tp ? `${tp.thread_position + 1}/${tp.num_messages}` : '';
  const codes = m.warnings.map((x) => x.code.replace(/^MAILGATE_WARN_/, ''));
  const warnings = codes.length === 0 ? '' : `${codes.length} ${codes.join(',')}`;
  return row(w, [String(n), msg?.from, msg?.subject?.text, thread, msg?.body.text.slice(0, 400), warnings] as [
    string,
    string,
    string,
    string,
    string,
    string,
  ]);
}
