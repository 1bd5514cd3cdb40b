/** The document's `body`: which text is sent (per the `body` option) and the length rules. */
import { warning, type Warning } from '../errors.js';
import { MAX_HTML_CHARS, MAX_TEXT_CHARS } from '../limits.js';
import { htmlToText } from '../mime/html.js';
import type { ParsedMessage } from '../mime/types.js';
import type { RawEmailBody } from '../model/index.js';
import { truncateHtml, truncateText } from './truncate.js';

export type BodyMode = 'auto' | 'plain' | 'html';

function hasText(s: string | undefined): s is string {
  return s !== undefined && s.trim() !== '';
}

function plain(text: string, warnings: Warning[]): RawEmailBody {
  if (text.length <= MAX_TEXT_CHARS) return { plain: text };
  warnings.push(warning('MAILGATE_WARN_BODY_TRUNCATED', `plain body of ${text.length} characters cut to ${MAX_TEXT_CHARS}`));
  return { plain: truncateText(text, MAX_TEXT_CHARS) };
}

function html(text: string, warnings: Warning[]): RawEmailBody {
  if (text.length <= MAX_HTML_CHARS) return { html: text };
  warnings.push(warning('MAILGATE_WARN_BODY_TRUNCATED', `html body of ${text.length} characters cut to ${MAX_HTML_CHARS}`));
  return { html: truncateHtml(text, MAX_HTML_CHARS) };
}

/**
 * `auto`: the text/plain body when it is present and not blank, else the HTML, else the
 * (blank) text. `plain`: the text/plain body when not blank, else the HTML converted to text.
 * `html`: the HTML when present, else the text. Nothing at all: `{plain: ''}` + NO_BODY.
 */
export function buildBody(parsed: ParsedMessage, mode: BodyMode, warnings: Warning[]): RawEmailBody {
  const { text } = parsed;
  const markup = parsed.html;
  if (mode === 'html' && markup !== undefined) return html(markup, warnings);
  if (hasText(text) || (text !== undefined && markup === undefined)) return plain(text, warnings);
  if (markup !== undefined) return mode === 'plain' ? plain(htmlToText(markup), warnings) : html(markup, warnings);
  warnings.push(warning('MAILGATE_WARN_NO_BODY', 'the message has no text/plain or text/html body'));
  return { plain: '' };
}
