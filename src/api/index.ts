/** The Text Analytics API client: requests, retry policy, typed errors. */
export {
  createApiClient,
  type ApiClient,
  type ApiClientOptions,
  type AttemptInfo,
  type RequestOptions,
  type SourceInfo,
} from './client.js';
export { ApiError, isApiError, codeForStatus, readEnvelope } from './errors.js';
export { predictPath, sourcePath, splitResourceName, type Endpoint, type ModelVersion } from './paths.js';
export {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  delayFor,
  isRetryable,
  isRetryableStatus,
  parseRetryAfter,
  resolveRetryPolicy,
  type RetryDecision,
  type RetryPolicy,
} from './retry.js';
