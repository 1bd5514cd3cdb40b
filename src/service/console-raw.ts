/**
 * The raw message of an item as the console's item view shows it: headers and the MIME tree
 * from the kept bytes (never their content), the attachment list the parse worker computed.
 */
import { decodeWords } from '../mime/encoded-words.js';
import { splitHeader } from '../mime/header-split.js';
import { expand, makePart, type MimePart, type ParseContext } from '../mime/structure.js';
import type { RawEmailDocument } from '../model/index.js';
import { documentHeaders } from '../preview/index.js';
import type { MimePartView, RawSummary } from '../server/console-types.js';
import type { Store, StoredItem } from '../store/types.js';

/** Raw messages larger than this are summarized from the stored document only (a page, not a parser run). */
export const MAX_SUMMARY_RAW_BYTES = 32 * 1024 * 1024;

function partView(p: MimePart, path: string): MimePartView {
  const v: MimePartView = { content_type: p.type, part: path };
  if (p.params.charset !== undefined) v.charset = p.params.charset;
  if (p.encoding !== 'identity') v.transfer_encoding = p.encoding;
  if (p.disposition !== undefined) v.disposition = p.disposition;
  if (p.name !== undefined) v.filename = decodeWords(p.name);
  if (p.children === undefined) v.size = p.omittedSize ?? p.end - p.start;
  else v.children = p.children.map((c, i) => partView(c, path === '' ? String(i + 1) : `${path}.${i + 1}`));
  return v;
}

/**
 * Headers and the MIME tree from the raw bytes, never their content: the header blocks and
 * boundaries are found (linear in the bytes, at most MAX_MIME_PARTS parts), nothing is decoded.
 * The attachment list is the one the parse worker computed into the stored document: a view
 * never parses a message on the service's thread (a body of 10 MB of HTML entities took seconds).
 */
function fromRaw(raw: Buffer, doc: RawEmailDocument): Pick<RawSummary, 'headers' | 'parts' | 'attachments'> {
  const head = splitHeader(raw, 0, raw.length);
  const ctx: ParseContext = { buf: raw, parts: 1, warnings: [], limitWarned: false };
  const root = makePart(head.fields, head.bodyStart, raw.length, 'text/plain');
  expand(ctx, root, 0);
  return {
    headers: head.fields.map((f) => ({ name: f.name, value: f.value })),
    parts: partView(root, ''),
    attachments: fromDocument(doc).attachments,
  };
}

function fromDocument(doc: RawEmailDocument): Pick<RawSummary, 'headers' | 'parts' | 'attachments'> {
  return {
    headers: documentHeaders(doc).map((f) => ({ name: f.name, value: f.value })),
    parts: null,
    attachments: (doc.raw_email.attachments ?? []).map((a) => ({ name: a.name ?? null, content_type: a.content_type, size: a.size })),
  };
}

export async function rawSummary(store: Store, item: StoredItem): Promise<RawSummary> {
  const kept = await store.itemRaw(item.id);
  const raw = kept?.raw;
  if (raw === undefined) {
    const reason = item.status === 'delivered' ? 'dropped_after_delivery' : 'never_stored';
    return { kept: false, reason, ...fromDocument(item.document) };
  }
  if (raw.byteLength > MAX_SUMMARY_RAW_BYTES) return { kept: true, bytes: raw.byteLength, ...fromDocument(item.document) };
  try {
    return { kept: true, bytes: raw.byteLength, ...fromRaw(raw, item.document) };
  } catch {
    // Bytes that never parsed (a dead letter): show what the document holds.
    return { kept: true, bytes: raw.byteLength, ...fromDocument(item.document) };
  }
}
