/** The HTTP server of `mailgate serve`: build it with buildApp(options, deps), then listen. */
export { buildApp, type ServerOptions } from './app.js';
export type {
  Check,
  ConsoleDeps,
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
export { ConsoleEventBus, type ConsoleEvent, type ConsoleFeed } from './console-events.js';
export type * from './console-types.js';
export { statusFor, type ErrorBody } from './errors.js';
export { localPreview, type LocalPreviewOptions } from './local-preview.js';
