/**
 * The document of an item as a console view shows it: a plain body whole (at most
 * MAX_TEXT_CHARS), an HTML body cut to MAX_VIEW_HTML_CHARS. Imported by the view worker, so it
 * stays free of anything but the model and the limits.
 */
import { MAX_TEXT_CHARS } from '../limits.js';
import type { RawEmailDocument } from '../model/index.js';
import type { DocumentCut } from '../server/console-types.js';

/**
 * Characters of an HTML body converted to text for a view, on the service's thread. The text sent
 * is at most MAX_TEXT_CHARS; twice that in HTML holds it for all but markup-heavy mail, and keeps
 * a view of a hostile body (10 MB of `&amp;`) to milliseconds instead of seconds.
 */
export const MAX_VIEW_HTML_CHARS = 2 * MAX_TEXT_CHARS;

export interface ViewDocument {
  doc: RawEmailDocument;
  cut: DocumentCut | null;
}

/**
 * The answer never carries the whole of a large HTML body (up to 32 MiB of characters):
 * serializing it for every view of a hostile item held the server for tens of milliseconds and
 * hundreds of megabytes; `document_cut` says what was left out, and the original bytes stay
 * downloadable.
 */
export function cutForView(doc: RawEmailDocument): ViewDocument {
  const b = doc.raw_email.body;
  if ('plain' in b || b.html.length <= MAX_VIEW_HTML_CHARS) return { doc, cut: null };
  const html = b.html.slice(0, MAX_VIEW_HTML_CHARS);
  return {
    doc: { ...doc, raw_email: { ...doc.raw_email, body: { html } } },
    cut: { field: 'raw_email.body.html', chars: b.html.length, shown_chars: html.length },
  };
}
