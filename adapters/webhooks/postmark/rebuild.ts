/**
 * A Postmark payload without RawEmail rebuilt into MIME: the header fields Postmark lists in
 * `Headers` (without the Return-Path it prepends: that is the envelope sender, not a header of
 * the message) plus the ones it gives as fields (From, To, Cc, Subject, Date, Reply-To), the
 * bodies as UTF-8 (JSON strings are Unicode) and the base64 attachments. Lossy by nature.
 */
import { encodeHeaderValue, rebuildMime, type AttachmentPart } from '../mime.js';
import { decodeBase64, isRecord, jsonStringBytes, str } from '../util.js';

type Payload = Record<string, unknown>;

/** `Headers` as [name, value] pairs, the leading Return-Path dropped. */
export function headerPairs(p: Payload): Array<[string, string]> {
  const list = Array.isArray(p['Headers']) ? p['Headers'] : [];
  const pairs = list
    .filter(isRecord)
    .map((h): [string, string] | undefined => {
      const name = str(h['Name']);
      const value = str(h['Value']);
      return name && value !== undefined ? [name, value] : undefined;
    })
    .filter((h): h is [string, string] => h !== undefined);
  return pairs[0]?.[0].toLowerCase() === 'return-path' ? pairs.slice(1) : pairs;
}

function fromField(p: Payload): string | undefined {
  const full = isRecord(p['FromFull']) ? p['FromFull'] : {};
  const email = str(full['Email']) ?? str(p['From']);
  const name = str(full['Name']) ?? str(p['FromName']);
  if (!email) return undefined;
  return name ? `${encodeHeaderValue(JSON.stringify(name))} <${email}>` : email;
}

const clean = (v: string) => v.replace(/[\r\n]+/g, ' ');

function attachments(p: Payload): AttachmentPart[] {
  const list = Array.isArray(p['Attachments']) ? p['Attachments'] : [];
  return list.filter(isRecord).map((a, i) => {
    // The dashboard's "Check" payload says Data where real deliveries say Content.
    const content = str(a['Content']) ?? str(a['Data']) ?? '';
    const name = str(a['Name']);
    const cid = str(a['ContentID']);
    return {
      data: decodeBase64(content, `attachment ${i + 1}`),
      contentType: str(a['ContentType']) ?? 'application/octet-stream',
      ...(name ? { filename: name } : {}),
      ...(cid ? { contentId: cid } : {}),
    };
  });
}

export function rebuildPostmark(p: Payload): Buffer {
  const given: Array<[string, string | undefined]> = [
    ['From', fromField(p)],
    ['To', str(p['To'])],
    ['Cc', str(p['Cc'])],
    ['Reply-To', str(p['ReplyTo'])],
    ['Subject', str(p['Subject'])],
    ['Date', str(p['Date'])],
  ];
  const written = new Set(given.filter(([, v]) => v).map(([n]) => n.toLowerCase()));
  const fields = [
    ...given.filter(([, v]) => v).map(([n, v]) => `${n}: ${encodeHeaderValue(clean(v!))}`),
    ...headerPairs(p)
      .filter(([n]) => !written.has(n.toLowerCase()))
      .map(([n, v]) => `${clean(n)}: ${encodeHeaderValue(clean(v))}`),
  ];
  const text = str(p['TextBody']);
  const html = str(p['HtmlBody']);
  return rebuildMime({
    headers: fields,
    ...(text ? { text: { body: jsonStringBytes(text), charset: 'utf-8' } } : {}),
    ...(html ? { html: { body: jsonStringBytes(html), charset: 'utf-8' } } : {}),
    attachments: attachments(p),
  });
}
