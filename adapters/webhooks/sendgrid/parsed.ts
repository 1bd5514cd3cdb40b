/**
 * SendGrid's parsed mode (no `email` field): the message rebuilt from `headers`, `text`, `html`
 * (each in the charset `charsets` names for it) and the files `attachment1..N` described by
 * `attachment-info`. Lossy by nature (the original body structure is gone); raw mode is preferred.
 */
import type { ParsedForm } from '../form.js';
import { headerFields, rebuildMime, type AttachmentPart } from '../mime.js';
import { isRecord, refuse, str } from '../util.js';

function jsonField(form: ParsedForm, name: string): Record<string, unknown> {
  const text = form.text(name);
  if (text === undefined) return {};
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

function attachments(form: ParsedForm): AttachmentPart[] {
  const info = jsonField(form, 'attachment-info');
  return form.files
    .filter(([name]) => /^attachment\d+$/.test(name))
    .map(([name, file]) => {
      const meta = isRecord(info[name]) ? info[name] : {};
      const filename = str(meta['filename']) ?? str(meta['name']) ?? file.filename;
      const contentId = str(meta['content-id']);
      return {
        data: file.data,
        contentType: str(meta['type']) ?? file.mimeType,
        ...(filename === undefined ? {} : { filename }),
        ...(contentId === undefined || contentId === '' ? {} : { contentId }),
      };
    });
}

export function rebuildParsed(form: ParsedForm): Buffer {
  const headers = form.last('headers');
  if (headers === undefined) refuse('malformed', 'neither an "email" field (raw mode) nor a "headers" field (parsed mode)');
  const charsets = jsonField(form, 'charsets');
  const part = (name: 'text' | 'html') => {
    const body = form.last(name);
    return body === undefined ? undefined : { body, charset: str(charsets[name]) ?? 'utf-8' };
  };
  const text = part('text');
  const html = part('html');
  return rebuildMime({
    headers: headerFields(headers.toString('latin1')),
    ...(text ? { text } : {}),
    ...(html ? { html } : {}),
    attachments: attachments(form),
  });
}
