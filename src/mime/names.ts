/** Generated attachment names: `attachment-<n>.<ext>`, the extension from the content type. */

const EXTENSIONS: Record<string, string> = {
  'message/rfc822': 'eml',
  'message/global': 'eml',
  'message/delivery-status': 'txt',
  'message/global-delivery-status': 'txt',
  'message/disposition-notification': 'txt',
  'text/rfc822-headers': 'txt',
  'text/plain': 'txt',
  'text/html': 'html',
  'text/calendar': 'ics',
  'text/csv': 'csv',
  'text/rtf': 'rtf',
  'text/enriched': 'txt',
  'application/pdf': 'pdf',
  'application/zip': 'zip',
  'application/ms-tnef': 'dat',
  'application/vnd.ms-tnef': 'dat',
  'application/pkcs7-signature': 'p7s',
  'application/x-pkcs7-signature': 'p7s',
  'application/pgp-signature': 'asc',
  'application/msword': 'doc',
  'application/vnd.ms-excel': 'xls',
  'application/json': 'json',
  'application/xml': 'xml',
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
  'image/bmp': 'bmp',
  'image/tiff': 'tif',
  'audio/mpeg': 'mp3',
  'audio/wav': 'wav',
  'video/mp4': 'mp4',
};

/** A name for an attachment that has none; `index` is its 1-based position among the attachments. */
export function generatedName(contentType: string, index: number): string {
  const ext = EXTENSIONS[contentType] ?? 'bin';
  return `attachment-${index}.${ext}`;
}

/** An attachment name as sent: path components and control characters removed. */
export function cleanName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const flat = name.replace(/[\x00-\x1f\x7f]+/g, ' ').trim();
  const slash = Math.max(flat.lastIndexOf('/'), flat.lastIndexOf('\\'));
  const base = slash >= 0 && slash < flat.length - 1 ? flat.slice(slash + 1) : flat;
  return base.trim();
}
