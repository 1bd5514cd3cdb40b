/**
 * Stable error codes, MAILGATE_ERR_<AREA>_<WHAT>, each declared once with its meaning and its
 * answers: the HTTP status of a request that fails with it and, where a mail transaction can
 * fail with it, the SMTP reply code. The core's codes are below; each kind of adapter declares
 * its own in its folder (adapters/<kind>/errors.ts) and the registry assembles the catalogue
 * (`errorCatalogue()` in adapters/config.ts). docs/errors.md is generated from the catalogue
 * (`npm run docs:errors`) and test/core/errors.test.ts keeps the two in step.
 *
 * Decisions are made on `code` (or the class), never on message text.
 */

/** One code: its one-line meaning and its answers. */
export interface ErrorDef {
  readonly message: string;
  /** The HTTP status of an answer with this code (undefined: 500 where it ever reaches a client). */
  readonly http?: number;
  /** The SMTP reply code of a transaction refused with this code. */
  readonly smtp?: number;
}

export type ErrorDefs = Readonly<Record<`MAILGATE_ERR_${string}`, ErrorDef>>;

/** Declares a set of codes, keeping their literal names for the type of `GatewayError.code`. */
export function defineErrors<const D extends ErrorDefs>(defs: D): D {
  return Object.freeze(defs);
}

export const CORE_ERRORS = defineErrors({
  // --- mime: turning raw bytes into a ParsedMessage -------------------------------
  MAILGATE_ERR_MIME_TOO_LARGE: { message: 'The message exceeds the configured size budget.', http: 413 },
  MAILGATE_ERR_MIME_TIMEOUT: { message: 'Parsing the message exceeded the configured time budget.', http: 422 },
  MAILGATE_ERR_MIME_EMPTY: { message: 'The input holds no message at all (zero bytes or only whitespace).', http: 422 },
  MAILGATE_ERR_MIME_NOT_EMAIL: { message: 'The input does not look like an RFC 5322 message (no header field could be read).', http: 422 },
  MAILGATE_ERR_MIME_WORKER_CRASHED: {
    message:
      'The parse worker died while parsing this message (exit, abort, out of memory). Intake counts the attempt and parses it again alone, up to parsing.poison_after attempts.',
    http: 422,
  },
  MAILGATE_ERR_MIME_POOL_CLOSED: {
    message:
      'The parse pool was closed (the process is stopping, or its workers kept dying before taking any message): the message was not parsed and stays with its origin.',
    http: 503,
  },
  MAILGATE_ERR_MIME_INTERNAL: {
    message: 'The parser failed unexpectedly on this message (a parser bug; the message is kept for inspection).',
    http: 422,
  },

  // --- document: ParsedMessage -> RawEmailDocument --------------------------------
  MAILGATE_ERR_DOCUMENT_HEADERS_TOO_LARGE: {
    message: 'The header block exceeds the API limit even after removing MIME structure headers.',
    http: 422,
  },
  MAILGATE_ERR_DOCUMENT_INVALID: { message: 'The built document does not satisfy the API schema.', http: 422 },

  // --- properties: user properties and override rules -----------------------------
  MAILGATE_ERR_PROPERTY_INVALID_KEY: {
    message: 'A user property key is not `string:<name>` or `number:<name>` with a valid name.',
    http: 422,
  },
  MAILGATE_ERR_PROPERTY_INVALID_VALUE: { message: 'A user property value does not match its type prefix.', http: 422 },
  MAILGATE_ERR_PROPERTY_CONFLICT: {
    message: 'A client user property collides with a property the service generates and is not overridable.',
    http: 422,
  },

  // --- api: talking to the Text Analytics API --------------------------------------
  MAILGATE_ERR_API_NETWORK: { message: 'The request failed before an HTTP response arrived (connection refused, reset, DNS).' },
  MAILGATE_ERR_API_TIMEOUT: { message: 'The request exceeded its deadline.' },
  MAILGATE_ERR_API_BAD_REQUEST: { message: 'The API answered 400 Bad Request.' },
  MAILGATE_ERR_API_UNAUTHORIZED: { message: 'The API answered 401: the token is missing or invalid.' },
  MAILGATE_ERR_API_FORBIDDEN: { message: 'The API answered 403: the token lacks a permission.' },
  MAILGATE_ERR_API_NOT_FOUND: { message: 'The API answered 404: unknown project, source, dataset or model version.' },
  MAILGATE_ERR_API_QUOTA: {
    message: 'The API answered 402: a quota of the project is reached (e.g. comments); the route pauses, the documents are kept.',
  },
  MAILGATE_ERR_API_CONFLICT: { message: 'The API answered 409 Conflict (retried).' },
  MAILGATE_ERR_API_UNPROCESSABLE: { message: 'The API answered 422 Unprocessable Entity.' },
  MAILGATE_ERR_API_RATE_LIMITED: { message: 'The API answered 429 Too Many Requests (retried, honouring Retry-After).' },
  MAILGATE_ERR_API_SERVER: { message: 'The API answered with a 5xx status (retried).' },
  MAILGATE_ERR_API_HTTP: { message: 'The API answered with an unexpected HTTP status.' },
  MAILGATE_ERR_API_BAD_RESPONSE: { message: 'The API answered with a body that is not the expected JSON envelope.' },
  MAILGATE_ERR_API_ABORTED: { message: 'The request was cancelled by the caller (shutdown or a cancelled run); not retried.' },
  MAILGATE_ERR_API_REQUEST_REJECTED: {
    message:
      'The API refuses the request as a whole whatever documents it holds (e.g. an invalid transform tag): the documents are left for retry and the route should pause.',
  },

  // --- batch: packing and delivering documents -----------------------------------
  MAILGATE_ERR_BATCH_DOCUMENT_TOO_LARGE: { message: 'One document alone exceeds the configured request byte limit.' },
  MAILGATE_ERR_BATCH_REJECTED: { message: 'The API rejected this document (isolated by splitting the batch).' },
  MAILGATE_ERR_BATCH_NOT_ISOLATED: {
    message:
      'The API rejected a batch holding this document, and the split budget ran out before the document was sent alone (left for retry).',
  },

  // --- store ---------------------------------------------------------------------
  MAILGATE_ERR_STORE_UNAVAILABLE: { message: 'The store cannot be reached or opened.', http: 503 },
  MAILGATE_ERR_STORE_FULL: {
    message:
      'Store writes fail for want of space (a full disk, or the SQLite max_page_count): senders are asked to retry, nothing is acknowledged, and work resumes when space returns.',
    http: 503,
    smtp: 451,
  },
  MAILGATE_ERR_STORE_MIGRATION: { message: 'A store migration failed or the store schema is newer than this mailgate.' },
  MAILGATE_ERR_STORE_LEASE_LOST: { message: 'A lease held by this process expired or was taken over.' },
  MAILGATE_ERR_STORE_FENCED: {
    message: 'A write made under a mailbox lease this process no longer holds was refused; nothing was written.',
  },
  MAILGATE_ERR_STORE_NOT_FOUND: { message: 'The requested item does not exist in the store.', http: 404 },
  MAILGATE_ERR_STORE_WRITE_FAILED: { message: 'A store write failed and was rolled back as a whole; nothing of it was kept.' },
  MAILGATE_ERR_STORE_INVALID_ARGUMENT: {
    message: 'A store call got an invalid argument (limit, lease or delay out of range, empty purge filter).',
  },
  MAILGATE_ERR_STORE_REPLAY_MISMATCH: {
    message: 'A dead-letter replacement names another route or key than the dead letter it replaces.',
    http: 409,
  },

  // --- input: files and adapters --------------------------------------------------
  MAILGATE_ERR_INPUT_NOT_FOUND: { message: 'An input path does not exist or cannot be read.', http: 422 },
  MAILGATE_ERR_INPUT_UNSUPPORTED: { message: 'An input file is of a kind mailgate cannot read.', http: 422 },
  MAILGATE_ERR_INPUT_MSG_INVALID: { message: 'An Outlook .msg file could not be read.', http: 422 },
  MAILGATE_ERR_INPUT_PST_ENCRYPTED: { message: 'An Outlook PST/OST file uses "high" encryption, which mailgate does not read.', http: 422 },
  MAILGATE_ERR_INPUT_PST_INVALID: { message: 'An Outlook PST/OST file, or one item in it, could not be read.', http: 422 },

  // --- emulator: the local Text Analytics API stand-in -----------------------------
  MAILGATE_ERR_EMULATOR_OPTIONS_INVALID: { message: 'An emulator option is invalid (token, limits, model versions, transform tags).' },
  MAILGATE_ERR_EMULATOR_FAULT_INVALID: { message: 'A fault rule or fault spec string is malformed.' },
  MAILGATE_ERR_EMULATOR_STATE_CORRUPT: { message: 'The emulator data directory holds a state file that cannot be read.' },

  // --- server: health, metrics, preview and admin HTTP API ------------------------------
  MAILGATE_ERR_SERVER_UNAUTHORIZED: {
    message: 'The admin API request has no `Authorization: Bearer <key>` header or the key is not one of server.api_keys.',
    http: 401,
  },
  MAILGATE_ERR_SERVER_ADMIN_DISABLED: { message: 'The admin API is disabled because server.api_keys is empty.', http: 403 },
  MAILGATE_ERR_SERVER_BAD_REQUEST: { message: 'A query parameter, path parameter or body of an HTTP request is invalid.', http: 400 },
  MAILGATE_ERR_SERVER_NOT_FOUND: { message: 'No such HTTP endpoint, or the requested item does not exist.', http: 404 },
  MAILGATE_ERR_SERVER_BODY_TOO_LARGE: { message: 'The HTTP request body exceeds the configured limit.', http: 413 },
  MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE: {
    message: 'The HTTP request body has a Content-Type the endpoint does not accept.',
    http: 415,
  },
  MAILGATE_ERR_SERVER_INTERNAL: { message: 'An unexpected failure while answering an HTTP request (details in the log).' },
  MAILGATE_ERR_SERVER_BUSY: {
    message:
      'As many preview requests as server.preview.max_concurrent are being answered, or as many console event streams as allowed are open; retry after the Retry-After seconds.',
    http: 503,
  },
  MAILGATE_ERR_SERVER_GONE: {
    message: 'The item exists but what was asked for is no longer kept (raw bytes dropped after delivery).',
    http: 410,
  },
  MAILGATE_ERR_SERVER_MISDIRECTED: {
    message:
      'The Host header names neither this loopback listener (localhost, 127.0.0.1, [::1] with its port) nor one of server.allowed_hosts.',
    http: 421,
  },

  // --- service: `mailgate serve` -----------------------------------------------------
  MAILGATE_ERR_SERVICE_ADAPTER_FAILED: {
    message: 'An adapter of the service stopped with an unexpected error (the others keep running; details in the log).',
  },
  MAILGATE_ERR_SERVICE_DRAIN_TIMEOUT: {
    message: 'Shutdown stopped waiting for delivery after the drain bound; undelivered items stay queued for the next start.',
  },
  MAILGATE_ERR_SERVICE_STOP_TIMEOUT: {
    message:
      'Shutdown took longer than delivery.drain_ms + server.stop_timeout_ms: the process exited with status 1, naming what was still open; queued items stay for the next start.',
  },
  MAILGATE_ERR_SERVICE_LISTEN: {
    message:
      'An HTTP server cannot listen on its address (the port is in use or not allowed): for `serve`, choose another with server.listen or MAILGATE_LISTEN; for `emulator`, with --port (0 picks a free one).',
  },

  // --- push intake: webhooks, uploads, SMTP --------------------------------------------
  MAILGATE_ERR_INTAKE_UNAVAILABLE: {
    message:
      'The store could not make a pushed message durable (answered 503 / 451 with Retry-After; nothing was stored, the sender retries).',
    http: 503,
    smtp: 451,
  },
  MAILGATE_ERR_INTAKE_OUTBOX_FULL: {
    message:
      'The route outbox is over its depth limit (delivery.max_outbox): pushed mail is refused with 503 / 451 and Retry-After until delivery catches up.',
    http: 503,
    smtp: 451,
  },

  MAILGATE_ERR_INTAKE_POISON: {
    message:
      'A message killed its parse worker or the process on each of parsing.poison_after attempts (counted in the store before each): it is set aside as a dead letter with its raw bytes, and its mailbox moves on.',
    http: 422,
  },

  // --- sink: predictions to a JSONL file or webhook ------------------------------------
  MAILGATE_ERR_SINK_WRITE_FAILED: {
    message: 'Appending predictions to the JSONL sink file failed (retried with backoff; nothing is skipped).',
  },
  MAILGATE_ERR_SINK_WEBHOOK_FAILED: {
    message: 'The prediction webhook could not be reached, timed out, or answered 408, 429 or 5xx (retried with backoff).',
  },
  MAILGATE_ERR_SINK_WEBHOOK_REJECTED: {
    message:
      'The prediction webhook answered another non-2xx status: the batch was logged and skipped (the predictions stay in the store).',
  },
  MAILGATE_ERR_SINK_FLUSH_TIMEOUT: {
    message:
      'An import stopped waiting for its prediction sink; unsent predictions stay in the store and go out with the next import or serve of the route.',
  },

  // --- cli: client commands of the HTTP endpoints ----------------------------------------
  MAILGATE_ERR_CLI_UNREACHABLE: {
    message: 'A client command (`webhook simulate`, `upload`) got no HTTP answer from --url (refused, timeout).',
  },
  MAILGATE_ERR_CLI_CONSENT_REQUIRED: {
    message:
      'A command that bills AI units (`import`) or deletes (`dlq purge --all`) needs an answer and there is no terminal to ask on: pass --yes.',
  },
  MAILGATE_ERR_CLI_USAGE: {
    message: 'The flags of a command are missing or do not go together (the message says which); it exits 2, as other usage errors do.',
  },
  MAILGATE_ERR_CLI_WAIT_TIMEOUT: {
    message: '`mailgate upload --wait` gave up before every message was delivered or dead (they stay queued).',
  },

  // --- config ------------------------------------------------------------------------
  MAILGATE_ERR_CONFIG_INVALID: {
    message: 'The configuration does not satisfy the schema; the message names the path and the fix.',
    http: 400,
  },
  MAILGATE_ERR_CONFIG_ENV_MISSING: { message: 'The configuration refers to an environment variable that is not set.' },
});

/**
 * The codes of the adapter kinds: each kind's errors.ts adds its own through declaration
 * merging (`declare module '../../src/errors.js' { interface KindErrorCodes extends CodesOf<…> {} }`),
 * so that `new GatewayError(code, …)` is checked against every known code while the core names none.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the kinds (declaration merging)
export interface KindErrorCodes {}

/** The code names of a set of definitions, as the members `KindErrorCodes` takes. */
export type CodesOf<D extends ErrorDefs> = { readonly [K in keyof D]: true };

export type CoreErrorCode = keyof typeof CORE_ERRORS;
export type ErrorCode = CoreErrorCode | (keyof KindErrorCodes & string);

/** The whole catalogue: the core's codes and every kind's, each once. */
export type ErrorCatalogue = Readonly<Record<string, ErrorDef>>;

/** Joins the core's codes and the kinds' into one catalogue; a code declared twice is a programming error. */
export function assembleCatalogue(parts: ReadonlyArray<{ owner: string; errors: ErrorDefs }>): ErrorCatalogue {
  const out: Record<string, ErrorDef> = { ...CORE_ERRORS };
  const ownerOf = new Map<string, string>(Object.keys(CORE_ERRORS).map((c) => [c, 'core']));
  for (const { owner, errors } of parts) {
    for (const [code, def] of Object.entries(errors)) {
      const first = ownerOf.get(code);
      if (first !== undefined) throw new Error(`error code ${code} of ${owner} is already declared by ${first}`);
      ownerOf.set(code, owner);
      out[code] = def;
    }
  }
  return Object.freeze(out);
}

/** The HTTP status of a core code (500 for a code without one): what the server answers with it. */
export function httpStatusOf(code: string, catalogue: ErrorCatalogue = CORE_ERRORS): number {
  return catalogue[code]?.http ?? 500;
}

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
