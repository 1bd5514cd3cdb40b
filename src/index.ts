/**
 * mailgate as a library: parse raw email into the Text Analytics API's raw-email document
 * and preview the comment the service would build from it; or run the whole gateway
 * (createRuntime: store, API client, intake, delivery, sinks and adapters wired once).
 */
export {
  preview,
  previewSync,
  buildComment,
  computeThreadProperties,
  threadIdFor,
  splitReply,
  mergeUserProperties,
} from './preview/index.js';
export type { PreviewOptions, PreviewResult, BuildCommentOptions, ReplySplit } from './preview/index.js';
export { parseMessage } from './mime/parse.js';
export type { ParsedMessage, HeaderField, AttachmentMeta } from './mime/types.js';
export { buildDocument, commentIdFor } from './document/index.js';
export type { DocumentOptions, DocumentResult } from './document/types.js';
export * from './model/index.js';
export { GatewayError, isGatewayError, WARNING_CODES, type ErrorCode, type ErrorDef, type Warning, type WarningCode } from './errors.js';
export { ERROR_CATALOGUE, ERROR_CODES } from './error-catalogue.js';
export { createApiClient, ApiError, type ApiClient, type ApiClientOptions } from './api/client.js';
export { MemoryLedger, documentHashes } from './ledger/index.js';
export { deliverBatch, type DeliveryReport, type ItemOutcome, type SyncTarget, type PredictTarget } from './batcher/index.js';
export { createEmulator } from './emulator/index.js';
export { openStore } from './store/index.js';
export type { Store } from './store/types.js';
export { loadConfig } from './config/load.js';
export type { Config, RouteConfig } from './config/schema.js';
export { createRuntime, type Runtime, type RuntimeOptions } from './runtime/index.js';
export type { Accepted, AcceptOptions, Adapter, AdapterHealth, Inbound, Intake, Origin, PushEndpoint } from './pipeline/types.js';
