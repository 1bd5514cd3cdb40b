/**
 * One catalogue of stable error codes: MAILGATE_ERR_<AREA>_<WHAT>.
 *
 * Decisions are made on `code` (or the class), never on message text.
 * Every code here must be documented in docs/errors.md; test/errors.test.ts keeps
 * the two in step. Add a code in the section of its area, with a one-line meaning.
 */

export const ERROR_CODES = {
  // --- mime: turning raw bytes into a ParsedMessage -------------------------------
  MAILGATE_ERR_MIME_TOO_LARGE: 'The message exceeds the configured size budget.',
  MAILGATE_ERR_MIME_TIMEOUT: 'Parsing the message exceeded the configured time budget.',
  MAILGATE_ERR_MIME_EMPTY: 'The input holds no message at all (zero bytes or only whitespace).',
  MAILGATE_ERR_MIME_NOT_EMAIL: 'The input does not look like an RFC 5322 message (no header field could be read).',
  MAILGATE_ERR_MIME_WORKER_CRASHED: 'The parse worker died while parsing this message.',
  MAILGATE_ERR_MIME_INTERNAL: 'The parser failed unexpectedly on this message (a parser bug; the message is kept for inspection).',

  // --- document: ParsedMessage -> RawEmailDocument --------------------------------
  MAILGATE_ERR_DOCUMENT_HEADERS_TOO_LARGE: 'The header block exceeds the API limit even after removing MIME structure headers.',
  MAILGATE_ERR_DOCUMENT_INVALID: 'The built document does not satisfy the API schema.',

  // --- properties: user properties and override rules -----------------------------
  MAILGATE_ERR_PROPERTY_INVALID_KEY: 'A user property key is not `string:<name>` or `number:<name>` with a valid name.',
  MAILGATE_ERR_PROPERTY_INVALID_VALUE: 'A user property value does not match its type prefix.',
  MAILGATE_ERR_PROPERTY_CONFLICT: 'A client user property collides with a property the service generates and is not overridable.',

  // --- api: talking to the Text Analytics API --------------------------------------
  MAILGATE_ERR_API_NETWORK: 'The request failed before an HTTP response arrived (connection refused, reset, DNS).',
  MAILGATE_ERR_API_TIMEOUT: 'The request exceeded its deadline.',
  MAILGATE_ERR_API_BAD_REQUEST: 'The API answered 400 Bad Request.',
  MAILGATE_ERR_API_UNAUTHORIZED: 'The API answered 401: the token is missing or invalid.',
  MAILGATE_ERR_API_FORBIDDEN: 'The API answered 403: the token lacks a permission.',
  MAILGATE_ERR_API_NOT_FOUND: 'The API answered 404: unknown project, source, dataset or model version.',
  MAILGATE_ERR_API_CONFLICT: 'The API answered 409 Conflict (retried).',
  MAILGATE_ERR_API_UNPROCESSABLE: 'The API answered 422 Unprocessable Entity.',
  MAILGATE_ERR_API_RATE_LIMITED: 'The API answered 429 Too Many Requests (retried, honouring Retry-After).',
  MAILGATE_ERR_API_SERVER: 'The API answered with a 5xx status (retried).',
  MAILGATE_ERR_API_HTTP: 'The API answered with an unexpected HTTP status.',
  MAILGATE_ERR_API_BAD_RESPONSE: 'The API answered with a body that is not the expected JSON envelope.',
  MAILGATE_ERR_API_ABORTED: 'The request was cancelled by the caller (shutdown or a cancelled run); not retried.',
  MAILGATE_ERR_API_REQUEST_REJECTED:
    'The API refuses the request as a whole whatever documents it holds (e.g. an invalid transform tag): the documents are left for retry and the route should pause.',

  // --- batch: packing and delivering documents -----------------------------------
  MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE: 'One document alone exceeds the configured request byte limit.',
  MAILGATE_ERR_BATCH_REJECTED: 'The API rejected this document (isolated by splitting the batch).',
  MAILGATE_ERR_BATCH_NOT_ISOLATED:
    'The API rejected a batch holding this document, and the split budget ran out before the document was sent alone (left for retry).',

  // --- store ---------------------------------------------------------------------
  MAILGATE_ERR_STORE_UNAVAILABLE: 'The store cannot be reached or opened.',
  MAILGATE_ERR_STORE_FULL:
    'Store writes fail for want of space (a full disk, or the SQLite max_page_count): senders are asked to retry, nothing is acknowledged, and work resumes when space returns.',
  MAILGATE_ERR_STORE_MIGRATION: 'A store migration failed or the store schema is newer than this mailgate.',
  MAILGATE_ERR_STORE_LEASE_LOST: 'A lease held by this process expired or was taken over.',
  MAILGATE_ERR_STORE_FENCED: 'A write made under a mailbox lease this process no longer holds was refused; nothing was written.',
  MAILGATE_ERR_STORE_NOT_FOUND: 'The requested item does not exist in the store.',
  MAILGATE_ERR_STORE_WRITE_FAILED: 'A store write failed and was rolled back as a whole; nothing of it was kept.',
  MAILGATE_ERR_STORE_INVALID_ARGUMENT: 'A store call got an invalid argument (limit, lease or delay out of range, empty purge filter).',
  MAILGATE_ERR_STORE_REPLAY_MISMATCH: 'A dead-letter replacement names another route or key than the dead letter it replaces.',

  // --- input: files and adapters --------------------------------------------------
  MAILGATE_ERR_INPUT_NOT_FOUND: 'An input path does not exist or cannot be read.',
  MAILGATE_ERR_INPUT_UNSUPPORTED: 'An input file is of a kind mailgate cannot read.',
  MAILGATE_ERR_INPUT_MSG_INVALID: 'An Outlook .msg file could not be read.',
  MAILGATE_ERR_INPUT_PST_ENCRYPTED: 'An Outlook PST/OST file uses "high" encryption, which mailgate does not read.',
  MAILGATE_ERR_INPUT_PST_INVALID: 'An Outlook PST/OST file, or one item in it, could not be read.',
  MAILGATE_ERR_INPUT_VAULT_INVALID: 'A Google Vault export (zip or metadata XML) could not be read.',

  // --- emulator: the local Text Analytics API stand-in -----------------------------
  MAILGATE_ERR_EMULATOR_OPTIONS_INVALID: 'An emulator option is invalid (token, limits, model versions, transform tags).',
  MAILGATE_ERR_EMULATOR_FAULT_INVALID: 'A fault rule or fault spec string is malformed.',
  MAILGATE_ERR_EMULATOR_STATE_CORRUPT: 'The emulator data directory holds a state file that cannot be read.',

  // --- server: health, metrics, preview and admin HTTP API ------------------------------
  MAILGATE_ERR_SERVER_UNAUTHORIZED:
    'The admin API request has no `Authorization: Bearer <key>` header or the key is not one of server.api_keys.',
  MAILGATE_ERR_SERVER_ADMIN_DISABLED: 'The admin API is disabled because server.api_keys is empty.',
  MAILGATE_ERR_SERVER_BAD_REQUEST: 'A query parameter, path parameter or body of an HTTP request is invalid.',
  MAILGATE_ERR_SERVER_NOT_FOUND: 'No such HTTP endpoint, or the requested item does not exist.',
  MAILGATE_ERR_SERVER_BODY_TOO_LARGE: 'The HTTP request body exceeds the configured limit.',
  MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE: 'The HTTP request body has a Content-Type the endpoint does not accept.',
  MAILGATE_ERR_SERVER_INTERNAL: 'An unexpected failure while answering an HTTP request (details in the log).',
  MAILGATE_ERR_SERVER_BUSY:
    'As many preview requests as server.preview.max_concurrent are being answered, or as many console event streams as allowed are open; retry after the Retry-After seconds.',
  MAILGATE_ERR_SERVER_GONE: 'The item exists but what was asked for is no longer kept (raw bytes dropped after delivery).',
  MAILGATE_ERR_SERVER_MISDIRECTED:
    'The Host header names neither this loopback listener (localhost, 127.0.0.1, [::1] with its port) nor one of server.allowed_hosts.',

  // --- service: `mailgate serve` -----------------------------------------------------
  MAILGATE_ERR_SERVICE_ADAPTER_FAILED:
    'An adapter of the service stopped with an unexpected error (the others keep running; details in the log).',
  MAILGATE_ERR_SERVICE_DRAIN_TIMEOUT:
    'Shutdown stopped waiting for delivery after the drain bound; undelivered items stay queued for the next start.',
  MAILGATE_ERR_SERVICE_LISTEN:
    'An HTTP server cannot listen on its address (the port is in use or not allowed): for `serve`, choose another with server.listen or MAILGATE_LISTEN; for `emulator`, with --port (0 picks a free one).',

  // --- push intake: webhooks, uploads, SMTP --------------------------------------------
  MAILGATE_ERR_INTAKE_UNAVAILABLE:
    'The store could not make a pushed message durable (answered 503 / 451 with Retry-After; nothing was stored, the sender retries).',
  MAILGATE_ERR_INTAKE_OUTBOX_FULL:
    'The route outbox is over its depth limit (delivery.max_outbox): pushed mail is refused with 503 / 451 and Retry-After until delivery catches up.',

  // --- smtp: SMTP and LMTP listeners ----------------------------------------------------
  MAILGATE_ERR_SMTP_LISTEN:
    'An SMTP/LMTP listener cannot listen on its address (port in use or not allowed): set adapters.smtp[].listen to another host:port.',
  MAILGATE_ERR_SMTP_TLS: 'The TLS key or certificate of an SMTP/LMTP listener cannot be read (adapters.smtp[].tls.key and cert).',

  // --- webhook: mail-provider inbound webhooks -----------------------------------------
  MAILGATE_ERR_WEBHOOK_UNSIGNED:
    'The request carries no signature, token or credentials where the endpoint requires them; nothing was stored.',
  MAILGATE_ERR_WEBHOOK_FORGED: "The request's signature, token or credentials do not match the configured secret; nothing was stored.",
  MAILGATE_ERR_WEBHOOK_REPLAYED:
    "The request's timestamp lies outside the allowed window, or its token was seen before; nothing was stored.",
  MAILGATE_ERR_WEBHOOK_MALFORMED:
    "The request is not the provider's payload shape (missing field, undecodable body, truncated multipart); nothing was stored.",
  MAILGATE_ERR_WEBHOOK_TOO_LARGE: "The request body or one of its fields exceeds the endpoint's limit (answered 413); nothing was stored.",
  MAILGATE_ERR_WEBHOOK_UNSUPPORTED:
    'The payload is genuine but of a kind the endpoint does not take (e.g. an SNS topic not configured, Mailgun store() notifications, SES content in S3 without S3 configured).',
  MAILGATE_ERR_WEBHOOK_CERTIFICATE:
    'The SNS signing certificate could not be fetched or is not from an sns.<region>.amazonaws.com https URL (answered 5xx when the failure may pass).',

  // --- upload: the HTTP upload API -----------------------------------------------------
  MAILGATE_ERR_UPLOAD_UNAUTHORIZED: 'The upload request carries no valid key for that upload adapter.',
  MAILGATE_ERR_UPLOAD_BAD_REQUEST: "The upload's Content-Type, multipart structure or file list is unusable; nothing was stored.",
  MAILGATE_ERR_UPLOAD_TOO_LARGE: "The upload body or one of its files exceeds the adapter's limit (413); nothing was stored.",
  MAILGATE_ERR_UPLOAD_IDEMPOTENCY_CONFLICT: 'The Idempotency-Key was used before with different content (422).',

  // --- sink: predictions to a JSONL file or webhook ------------------------------------
  MAILGATE_ERR_SINK_WRITE_FAILED: 'Appending predictions to the JSONL sink file failed (retried with backoff; nothing is skipped).',
  MAILGATE_ERR_SINK_WEBHOOK_FAILED:
    'The prediction webhook could not be reached, timed out, or answered 408, 429 or 5xx (retried with backoff).',
  MAILGATE_ERR_SINK_WEBHOOK_REJECTED:
    'The prediction webhook answered another non-2xx status: the batch was logged and skipped (the predictions stay in the store).',
  MAILGATE_ERR_SINK_FLUSH_TIMEOUT:
    'An import stopped waiting for its prediction sink; unsent predictions stay in the store and go out with the next import or serve of the route.',

  // --- imap: the IMAP adapter ------------------------------------------------------
  MAILGATE_ERR_IMAP_AUTH: 'The IMAP server refused the credentials (password or OAuth2 access token).',
  MAILGATE_ERR_IMAP_OAUTH_TOKEN: 'The OAuth2 token endpoint refused or failed to issue an access token.',
  MAILGATE_ERR_IMAP_CONNECTION: 'The IMAP connection failed or closed (retried with backoff).',
  MAILGATE_ERR_IMAP_TIMEOUT: 'An IMAP operation exceeded its deadline; the connection was dropped and is retried.',
  MAILGATE_ERR_IMAP_THROTTLED: 'The IMAP server asked the client to slow down (THROTTLED, LIMIT, too many connections); waited out.',
  MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND: 'A configured folder does not exist on the server (retried at the next resync).',
  MAILGATE_ERR_IMAP_COMMAND: 'The IMAP server answered a command with NO or BAD.',
  MAILGATE_ERR_IMAP_UNAVAILABLE: 'An after-delivery action could not run: the account has no usable connection (retry later).',

  // --- graph: the Microsoft Graph adapter ------------------------------------------
  MAILGATE_ERR_GRAPH_TOKEN:
    'The Microsoft identity platform refused or failed to issue an access token (tenant, client id, secret or certificate); the mailbox retries with backoff.',
  MAILGATE_ERR_GRAPH_UNAUTHORIZED: 'Graph answered 401 again after one token renewal; the mailbox retries with backoff.',
  MAILGATE_ERR_GRAPH_FORBIDDEN:
    'Graph answered 403: the app lacks Mail.Read (Mail.ReadWrite for actions) or an application access policy excludes the mailbox; retried with backoff.',
  MAILGATE_ERR_GRAPH_NOT_FOUND:
    'Graph answered 404: the mailbox or folder does not exist, or the mailbox is not enabled for REST; retried with backoff.',
  MAILGATE_ERR_GRAPH_THROTTLED: 'Graph answered 429, 503 or 504; the mailbox waits its Retry-After before any other request.',
  MAILGATE_ERR_GRAPH_UNAVAILABLE: 'Graph could not be reached, timed out or answered another 5xx; retried with backoff.',
  MAILGATE_ERR_GRAPH_RESPONSE: 'Graph answered with an unexpected status or a body mailgate cannot read.',
  MAILGATE_ERR_GRAPH_SYNC_RESET:
    "A folder's delta link expired (410 or syncStateNotFound): the folder is read again in full; deterministic comment ids and the ledger keep it free.",
  MAILGATE_ERR_GRAPH_SUBSCRIPTION:
    'A change-notification subscription could not be created or renewed; the folder is still read every poll_interval_ms.',
  MAILGATE_ERR_GRAPH_NOTIFICATION: 'A change notification was refused: its clientState is not the configured one.',

  // --- cli: client commands of the HTTP endpoints ----------------------------------------
  MAILGATE_ERR_CLI_UNREACHABLE: 'A client command (`webhook simulate`, `upload`) got no HTTP answer from --url (refused, timeout).',
  MAILGATE_ERR_CLI_CONSENT_REQUIRED:
    'A command that bills AI units (`import`) or deletes (`dlq purge --all`) needs an answer and there is no terminal to ask on: pass --yes.',
  MAILGATE_ERR_CLI_WAIT_TIMEOUT: '`mailgate upload --wait` gave up before every message was delivered or dead (they stay queued).',

  // --- config ------------------------------------------------------------------------
  MAILGATE_ERR_CONFIG_INVALID: 'The configuration does not satisfy the schema; the message names the path and the fix.',
  MAILGATE_ERR_CONFIG_ENV_MISSING: 'The configuration refers to an environment variable that is not set.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface GatewayErrorOptions {
  cause?: unknown;
  /** HTTP status for API errors. */
  status?: number;
  /** Anything structured worth logging or storing with the error. */
  details?: Record<string, unknown>;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status;
    this.details = options.details;
  }

  toJSON(): { code: ErrorCode; message: string; status?: number } {
    return this.status === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, status: this.status };
  }
}

export function isGatewayError(err: unknown, code?: ErrorCode): err is GatewayError {
  return err instanceof GatewayError && (code === undefined || err.code === code);
}

/** A non-fatal finding attached to an item: truncation, charset fallback, clamped dates. */
export interface Warning {
  code: WarningCode;
  message: string;
}

export const WARNING_CODES = {
  MAILGATE_WARN_CHARSET_FALLBACK: 'An unknown or bogus charset label was decoded by the fallback rule.',
  MAILGATE_WARN_BODY_TRUNCATED: 'The body text exceeded 65536 characters and was truncated.',
  MAILGATE_WARN_HEADERS_TRUNCATED: 'The raw header block exceeded the limit; trailing fields were dropped.',
  MAILGATE_WARN_JOURNAL_MALFORMED: 'The message says it is an Exchange journal report but cannot be read as one; it was kept as it is.',
  MAILGATE_WARN_HEADERS_SYNTHESIZED:
    'The archive kept no transport headers for the item (sent items, drafts); its headers were built from its properties.',
  MAILGATE_WARN_ATTACHMENTS_TRUNCATED: 'The message has more than 128 attachments; only the first 128 are listed.',
  MAILGATE_WARN_MIME_MALFORMED: 'The MIME structure is broken (missing boundary, bad encoding); a best-effort reading was used.',
  MAILGATE_WARN_NO_BODY: 'The message has no text body; an empty plain body was sent.',
  MAILGATE_WARN_DATE_MISSING: 'No usable Date header; the timestamp fell back by the documented rule.',
  MAILGATE_WARN_DATE_OUT_OF_RANGE: 'The date lies outside 1950-2049 and was clamped into the allowed range.',
  MAILGATE_WARN_MESSAGE_ID_MISSING: 'No Message-ID; the comment id is a SHA-256 of the header block and body.',
  MAILGATE_WARN_PROPERTY_DROPPED: 'A user property was dropped (invalid, empty, or conflicting with a generated one).',
  MAILGATE_WARN_PROPERTY_OVERRIDDEN: 'A client user property overrides a generated one (listed in override_user_properties).',
} as const;

export type WarningCode = keyof typeof WARNING_CODES;

export function warning(code: WarningCode, message: string): Warning {
  return { code, message };
}
