/**
 * ParsedMessage -> the API's RawEmailDocument (DESIGN.md "Documents", "Comment ids";
 * docs/parsing.md for every rule in user terms).
 */
import { GatewayError, warning, type Warning } from '../errors.js';
import { MAX_ATTACHMENTS, MAX_ATTACHMENT_FIELD_CHARS } from '../limits.js';
import type { AttachmentMeta, ParsedMessage } from '../mime/types.js';
import type { Attachment, RawEmailDocument } from '../model/index.js';
import { isHexId } from '../model/names.js';
import { buildBody } from './body.js';
import { resolveCommentId } from './comment-id.js';
import { buildHeaders } from './headers.js';
import { validProperties } from './properties.js';
import { truncateField } from './truncate.js';
import type { DocumentOptions, DocumentResult } from './types.js';

export { commentIdFor, resolveCommentId, messageIdValue } from './comment-id.js';
export type { DocumentOptions, DocumentResult } from './types.js';

function attachments(list: readonly AttachmentMeta[], warnings: Warning[]): Attachment[] {
  if (list.length > MAX_ATTACHMENTS) {
    warnings.push(warning('MAILGATE_WARN_ATTACHMENTS_TRUNCATED', `${list.length} attachments; the first ${MAX_ATTACHMENTS} are listed`));
  }
  return list.slice(0, MAX_ATTACHMENTS).map((a) => ({
    name: truncateField(a.name, MAX_ATTACHMENT_FIELD_CHARS, true),
    size: a.size,
    content_type: truncateField(a.content_type, MAX_ATTACHMENT_FIELD_CHARS, false),
  }));
}

/**
 * Build the document exactly as it will be sent. Warnings are the parser's followed by the
 * document's own (truncations, missing Message-ID, dropped properties).
 */
export function buildDocument(parsed: ParsedMessage, options: DocumentOptions = {}): DocumentResult {
  const warnings: Warning[] = [...parsed.warnings];
  const { headers, fields } = buildHeaders(parsed.headers, options.headers ?? 'raw', warnings, parsed.rootIsBody ?? true);
  const body = buildBody(parsed, options.body ?? 'auto', warnings);
  const list = attachments(parsed.attachments, warnings);
  let commentId = options.commentId;
  if (commentId !== undefined && !isHexId(commentId)) {
    throw new GatewayError(
      'MAILGATE_ERR_DOCUMENT_INVALID',
      `explicit comment id "${commentId.slice(0, 64)}" is not 1-1024 lowercase hex characters`,
    );
  }
  if (commentId === undefined) {
    const resolved = resolveCommentId(parsed);
    commentId = resolved.id;
    if (resolved.source === 'hash-missing') {
      warnings.push(
        warning('MAILGATE_WARN_MESSAGE_ID_MISSING', 'no Message-ID; the comment id is the SHA-256 of the header block and body'),
      );
    }
  }
  const document: RawEmailDocument = { raw_email: { headers, body, attachments: list }, comment_id: commentId };
  const props = validProperties(options.userProperties, warnings);
  if (props !== undefined) document.user_properties = props;
  return fields === undefined ? { document, warnings } : { document, warnings, fields };
}
