/** Request bodies as providers build them, for the simulators: multipart/form-data and urlencoded forms. */
import { randomBytes } from 'node:crypto';

export interface FormPart {
  name: string;
  value: Buffer | string;
  filename?: string;
  contentType?: string;
}

/** A multipart/form-data body with `boundary` (a random one when the preferred one occurs in a value). */
export function multipartBody(parts: FormPart[], preferred: string): { body: Buffer; boundary: string } {
  const values = parts.map((p) => (typeof p.value === 'string' ? Buffer.from(p.value, 'utf8') : p.value));
  let boundary = preferred;
  while (values.some((v) => v.includes(`--${boundary}`))) boundary = `${preferred}${randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  parts.forEach((p, i) => {
    const file = p.filename === undefined ? '' : `; filename="${p.filename.replace(/["\r\n]/g, '_')}"`;
    const type = p.contentType === undefined ? '' : `\r\nContent-Type: ${p.contentType}`;
    chunks.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"${file}${type}\r\n\r\n`, 'utf8'),
      values[i]!,
      Buffer.from('\r\n'),
    );
  });
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), boundary };
}

/** Percent-encodes bytes as application/x-www-form-urlencoded does (space as +). */
function formEncode(value: Buffer): string {
  let out = '';
  for (const b of value) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9*\-._]/.test(c)) out += c;
    else if (b === 0x20) out += '+';
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** An application/x-www-form-urlencoded body; values as bytes (UTF-8 for strings). */
export function urlencodedBody(pairs: Array<[string, Buffer | string]>): Buffer {
  const enc = (v: Buffer | string) => formEncode(typeof v === 'string' ? Buffer.from(v, 'utf8') : v);
  return Buffer.from(pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&'), 'latin1');
}
