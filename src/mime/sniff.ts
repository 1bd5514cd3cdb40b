/**
 * What a file holds, from its first bytes (the extension only breaks ties): a kind of mail the
 * reader takes, mail that claims to be mail but is damaged (a dead letter with its bytes), or a
 * reason to skip it (JSON, an image, an archive, binary data, text without a header block).
 *
 * The recognisers run in order and the first answer wins; a new kind of mail container is one
 * more recogniser in RECOGNISERS (put it before the generic ones it would otherwise fall into).
 * The files adapter judges files on disk with it, the preview's drop zone files it was sent.
 */
export type FileKind = 'mbox' | 'msg' | 'eml' | 'pst';

/** The verdict: read it as `kind`, keep it as a dead letter (`damaged`), or skip it with a reason. */
export type Sniffed = { kind: FileKind } | { damaged: string } | { skip: string };

/** What a recogniser looks at: the first SNIFF_BYTES of the file (fewer when it is shorter) and its lower-case extension. */
export interface SniffInput {
  head: Buffer;
  /** The extension with its dot, lower case (`.eml`), or ''. */
  ext: string;
  /** True when the head is the whole file. */
  whole: boolean;
}

export type Recogniser = (input: SniffInput) => Sniffed | undefined;

export const SNIFF_BYTES = 4096;

/** Skip reasons, counted by `import` and `preview` (one word or two: they are summary keys). */
export const SKIP = {
  empty: 'empty file',
  json: 'JSON',
  image: 'image',
  archive: 'archive',
  document: 'document',
  binary: 'binary',
  text: 'text without a mail header block',
} as const;

const MAIL_EXTENSIONS: Record<string, FileKind> = {
  '.eml': 'eml',
  '.msg': 'msg',
  '.mbox': 'mbox',
  '.mbx': 'mbox',
  '.pst': 'pst',
  '.ost': 'pst',
};
/** The Outlook PST/OST signature (MS-PST dwMagic). */
const PST_MAGIC = Buffer.from('!BDN');
const OFFICE_EXTENSIONS = new Set(['.doc', '.xls', '.ppt', '.msi', '.vsd', '.pub', '.dot', '.xlt', '.pot']);

const magic = (...bytes: number[]) => Buffer.from(bytes);
const OLE_MAGIC = magic(0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1);
const IMAGE_MAGICS = [
  magic(0x89, 0x50, 0x4e, 0x47), // PNG
  magic(0xff, 0xd8, 0xff), // JPEG
  Buffer.from('GIF8'),
  magic(0x49, 0x49, 0x2a, 0x00), // TIFF, little-endian
  magic(0x4d, 0x4d, 0x00, 0x2a), // TIFF, big-endian
];
const ARCHIVE_MAGICS = [
  Buffer.from('PK\x03\x04'),
  Buffer.from('PK\x05\x06'),
  magic(0x1f, 0x8b), // gzip
  Buffer.from('BZh'),
  magic(0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00), // xz
  magic(0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c), // 7z
  magic(0x28, 0xb5, 0x2f, 0xfd), // zstd
  Buffer.from('Rar!'),
];
const DOCUMENT_MAGICS = [Buffer.from('%PDF-')];

/** A header field line: a token name (RFC 7230 tchar, as real header names are), optional blanks, a colon. */
const FIELD_RE = /^([A-Za-z0-9][A-Za-z0-9!#$%&'*+.^_`|~-]*)[ \t]*:/;
/**
 * Fields that only mail carries: at least one must be in the header block, so that text which
 * happens to start with `Note: …` is not taken for a message.
 */
const MAIL_FIELDS = new Set([
  'from',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'sender',
  'reply-to',
  'in-reply-to',
  'references',
  'received',
  'return-path',
  'delivered-to',
  'mime-version',
  'content-type',
  'dkim-signature',
  'authentication-results',
  'thread-index',
  'x-original-to',
  'envelope-to',
]);

function startsWith(head: Buffer, m: Buffer, at = 0): boolean {
  return head.length >= at + m.length && head.subarray(at, at + m.length).equals(m);
}

function withoutBom(head: Buffer): string {
  return head.toString('latin1').replace(/^\xEF\xBB\xBF/, '');
}

/**
 * Whether the text opens with a header block of real header fields: the first line is a field,
 * and the run of fields (with folded continuations) it starts holds a field only mail has.
 * The run may end without a blank line (damaged mail: a wrapped line without indent, a field
 * name with 8-bit bytes, no blank line before the body) — that is still mail, read with
 * warnings. Leading blank lines are allowed (exports have them; the parser skips them).
 */
export function hasHeaderBlock(text: string, whole: boolean): boolean {
  const lines = text.replace(/^(?:[ \t]*\r?\n)+/, '').split('\n');
  // The last line of a head cut short may be cut mid-line: judge only complete lines.
  if (!whole && lines.length > 1) lines.pop();
  let mail = false;
  for (const [i, raw] of lines.entries()) {
    const line = raw.replace(/\r$/, '');
    if (i > 0 && /^[ \t]/.test(line)) continue;
    const m = FIELD_RE.exec(line);
    if (m === null) return i > 0 && mail;
    if (MAIL_FIELDS.has(m[1]!.toLowerCase())) mail = true;
  }
  return mail;
}

/** Binary when it holds NUL bytes or mostly control characters. */
function isBinary(head: Buffer): boolean {
  let control = 0;
  for (const b of head) {
    if (b === 0) return true;
    if (b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d && b !== 0x0c && b !== 0x1b) control++;
  }
  return control > head.length / 10;
}

/** The recognisers, in order: the first that answers decides. */
export const RECOGNISERS: Recogniser[] = [
  ({ head, ext }) => {
    if (head.length > 0) return undefined;
    // An empty mbox has no messages; an empty .eml is an empty message (a dead letter).
    const kind = MAIL_EXTENSIONS[ext];
    return kind === undefined ? { skip: SKIP.empty } : { kind };
  },
  ({ head, ext }) => {
    if (!startsWith(head, OLE_MAGIC)) return undefined;
    return OFFICE_EXTENSIONS.has(ext) ? { skip: SKIP.document } : { kind: 'msg' };
  },
  ({ head }) => (startsWith(head, PST_MAGIC) ? { kind: 'pst' } : undefined),
  ({ head }) => (IMAGE_MAGICS.some((m) => startsWith(head, m)) ? { skip: SKIP.image } : undefined),
  ({ head }) => (startsWith(head, Buffer.from('RIFF')) && startsWith(head, Buffer.from('WEBP'), 8) ? { skip: SKIP.image } : undefined),
  ({ head }) =>
    ARCHIVE_MAGICS.some((m) => startsWith(head, m)) || startsWith(head, Buffer.from('ustar'), 257) ? { skip: SKIP.archive } : undefined,
  ({ head }) => (DOCUMENT_MAGICS.some((m) => startsWith(head, m)) ? { skip: SKIP.document } : undefined),
  ({ head }) => (withoutBom(head).startsWith('From ') ? { kind: 'mbox' } : undefined),
  ({ head, whole }) => (hasHeaderBlock(withoutBom(head), whole) ? { kind: 'eml' } : undefined),
  ({ head }) => (/^\s*[[{]/.test(withoutBom(head)) ? { skip: SKIP.json } : undefined),
  ({ head }) => (isBinary(head) ? { skip: SKIP.binary } : undefined),
  // Named as mail but not recognised above: an mbox or .msg reader says what is wrong with it;
  // text named .eml without a header block is mail, damaged.
  ({ ext }) => {
    const kind = MAIL_EXTENSIONS[ext];
    if (kind === undefined) return undefined;
    return kind === 'eml' ? { damaged: `it is named ${ext} but has no mail header block` } : { kind };
  },
];

/** The verdict on a file's first bytes. */
export function sniffBytes(head: Buffer, ext = '', whole = head.length < SNIFF_BYTES): Sniffed {
  const input = { head, ext: ext.toLowerCase(), whole };
  for (const recognise of RECOGNISERS) {
    const verdict = recognise(input);
    if (verdict !== undefined) return verdict;
  }
  return { skip: SKIP.text };
}

/** The refusal of a file named on its own (a path given, a file dropped) that is not mail. */
export function notMailMessage(name: string, reason: string): string {
  return `${name} is not mail (${reason}): neither a message, an mbox, a maildir, an Outlook .msg nor an Outlook PST/OST file`;
}

/** The dead letter of a file named as mail that holds none. */
export function damagedMessage(name: string, why: string): string {
  return `${name} is not readable as mail: ${why}`;
}
