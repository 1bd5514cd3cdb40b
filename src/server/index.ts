/** The HTTP server of `mailgate serve`: build it with buildApp(options, deps), then listen. */
export { buildApp, type ServerOptions } from './app.js';
export type {
  Check,
  DeadLetterDetailView,
  DeadLetterPurge,
  DeadLetterQuery,
  DeadLetters,
  DeadLetterView,
  PreviewRequest,
  PreviewResponse,
  ReadyReport,
  ServerDeps,
  StatusReport,
  ThreadView,
} from './deps.js';
export { statusFor, type ErrorBody } from './errors.js';
export { localPreview, type LocalPreviewOptions } from './local-preview.js';
