/**
 * mailgate as a library: parse raw email into the Text Analytics API's raw-email document
 * and preview the comment the service would build from it.
 */
export { preview, previewSync, buildComment, computeThreadProperties, threadIdFor, splitReply, mergeUserProperties } from './preview/index.js';
export type { PreviewOptions, PreviewResult, BuildCommentOptions, ReplySplit } from './preview/index.js';
export { parseMessage } from './mime/parse.js';
export type { ParsedMessage, HeaderField, AttachmentMeta } from './mime/types.js';
export { buildDocument, commentIdFor } from './document/index.js';
export type { DocumentOptions, DocumentResult } from './document/types.js';
export * from './model/index.js';
export { GatewayError, isGatewayError, ERROR_CODES, WARNING_CODES, type ErrorCode, type Warning, type WarningCode } from './errors.js';
