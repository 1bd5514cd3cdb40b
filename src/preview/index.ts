/**
 * The comment preview: raw bytes -> the document exactly as it would be sent, and the
 * comment the service would store from it (docs/preview.md).
 */
import { buildDocument } from '../document/index.js';
import { parseMessage } from '../mime/parse.js';
import { buildComment } from './comment.js';
import { factsOf, type MessageFacts } from './facts.js';
import type { PreviewOptions, PreviewResult } from './types.js';

export { buildComment, commentIdOf, documentHeaders, documentText, withThreadPosition, type BuildCommentResult } from './comment.js';
export {
  generatedProperties,
  mergeUserProperties,
  mergeUserPropertiesReport,
  isGeneratedName,
  type MergeOptions,
  type MergeReport,
  type PropertyInput,
} from './properties.js';
export { splitReply, stripQuotes, MAX_QUOTE_SCAN_LINES, type ReplySplit } from './quotes.js';
export { splitSignature, type SignatureSplit } from './signature.js';
export { threadIdFor, threadRoot, computeThreadProperties, addressKey } from './threads.js';
export { resolveDates, newestReceived } from './timestamp.js';
export type { BuildCommentOptions, PreviewOptions, PreviewResult } from './types.js';

/**
 * Parse, build the document, build the comment; warnings in that order (a charset fallback
 * once per message). Throws GatewayError only (from the parser).
 */
export function previewSync(raw: Uint8Array, options: PreviewOptions = {}): PreviewResult {
  return previewWithFacts(raw, options).result;
}

/**
 * previewSync, with the message's facts as building the comment read them: the parse worker then
 * does not parse the sender, subject, Message-ID and date again.
 */
export function previewWithFacts(raw: Uint8Array, options: PreviewOptions = {}): { result: PreviewResult; facts: MessageFacts } {
  const parsed = parseMessage(raw, options.maxMessageBytes === undefined ? undefined : { maxMessageBytes: options.maxMessageBytes });
  const doc = buildDocument(parsed, options);
  const built = buildComment(doc.document, options, doc.fields);
  // A charset fallback is reported once per message, whether the parser or the comment met it first.
  const fallback = doc.warnings.some((w) => w.code === 'MAILGATE_WARN_CHARSET_FALLBACK');
  const own = fallback ? built.warnings.filter((w) => w.code !== 'MAILGATE_WARN_CHARSET_FALLBACK') : built.warnings;
  const result = { document: doc.document, comment: built.comment, warnings: [...doc.warnings, ...own] };
  return { result, facts: factsOf(built.headerFacts) };
}

/** previewSync on the calling thread, as a promise (the CLI and service parse in a worker pool). */
export async function preview(raw: Uint8Array, options: PreviewOptions = {}): Promise<PreviewResult> {
  return previewSync(raw, options);
}
