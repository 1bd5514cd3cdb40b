/**
 * The JSON answers of the admin, console and preview endpoints as zod schemas: the OpenAPI
 * document is generated from them, and each is checked at compile time to describe exactly the
 * TypeScript shape the handler returns (console-types.ts, deps.ts), so neither can drift alone.
 */
import { z } from 'zod';
import { Comment, RawEmailDocument, ThreadProperties } from '../../model/index.js';
import type {
  AdapterHealthLine,
  BulkReplayResult,
  ConsoleError,
  ItemDetail,
  ItemRow,
  ItemsPage,
  MailboxView,
  OriginSummary,
  Overview,
} from '../console-types.js';
import type { ErrorBody } from '../errors.js';

/** True only when A and B are assignable both ways (the same shape). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
function same<A, B>(check: Same<A, B>): void {
  void check;
}

const instant = z.string().describe('ISO-8601 instant');
const states = z.enum(['queued', 'retrying', 'delivered', 'unchanged', 'dead']);
const counts = z.object({ queued: z.number(), retrying: z.number(), delivered: z.number(), unchanged: z.number(), dead: z.number() });

export const errorBody = z.object({ error: z.object({ code: z.string().describe('MAILGATE_ERR_* code'), message: z.string() }) });
same<z.output<typeof errorBody>, ErrorBody>(true);

const consoleError = z.object({ code: z.string(), message: z.string() });
same<z.output<typeof consoleError>, ConsoleError>(true);

const originSummary = z.object({
  kind: z.string(),
  name: z.string().nullable(),
  id: z.string(),
  provider: z.string().optional(),
  label: z.string(),
  details: z.record(z.string(), z.unknown()),
});
same<z.output<typeof originSummary>, OriginSummary>(true);

export const itemRow = z.object({
  id: z.number(),
  state: states,
  route: z.string(),
  comment_id: z.string(),
  origin: originSummary,
  sender: z.string().nullable(),
  sender_name: z.string().nullable(),
  subject: z.string().nullable(),
  message_id: z.string().nullable(),
  timestamp: instant.nullable(),
  received_at: instant,
  finished_at: instant.nullable(),
  ai_units: z.number().nullable(),
  attempts: z.number(),
  next_attempt_at: instant.nullable(),
  last_error_code: z.string().nullable(),
});
same<z.output<typeof itemRow>, ItemRow>(true);

export const itemsPage = z.object({ items: z.array(itemRow), next: z.string().nullable().describe('`before` of the next page') });
same<z.output<typeof itemsPage>, ItemsPage>(true);

interface MimePart {
  content_type: string;
  part: string;
  charset?: string;
  transfer_encoding?: string;
  disposition?: string;
  filename?: string;
  size?: number;
  children?: MimePart[];
}
const mimePart: z.ZodType<MimePart> = z.lazy(() =>
  z.object({
    content_type: z.string(),
    part: z.string(),
    charset: z.string().optional(),
    transfer_encoding: z.string().optional(),
    disposition: z.string().optional(),
    filename: z.string().optional(),
    size: z.number().optional(),
    children: z.array(mimePart).optional(),
  }),
);

export const itemDetail = z.object({
  item: itemRow,
  key: z.string(),
  origin: z.record(z.string(), z.unknown()),
  origin_lines: z.array(z.object({ label: z.string(), value: z.string() })),
  document: z.unknown(),
  document_cut: z.object({ field: z.literal('raw_email.body.html'), chars: z.number(), shown_chars: z.number() }).nullable(),
  comment: z
    .object({
      comment: z.unknown(),
      body_text: z.string(),
      spans: z.array(z.object({ kind: z.enum(['text', 'quote', 'signature']), start: z.number(), end: z.number() })),
      generated_properties: z.array(z.string()),
      thread_properties: z.unknown(),
    })
    .nullable(),
  raw: z.object({
    kept: z.boolean(),
    reason: z.enum(['dropped_after_delivery', 'never_stored']).optional(),
    bytes: z.number().optional(),
    headers: z.array(z.object({ name: z.string(), value: z.string() })),
    parts: mimePart.nullable(),
    attachments: z.array(z.object({ name: z.string().nullable(), content_type: z.string(), size: z.number() })),
  }),
  warnings: z.array(consoleError),
  error: consoleError.nullable(),
  attempts: z.array(
    z.object({
      at: instant,
      outcome: z.enum(['delivered', 'unchanged', 'retry', 'dead']),
      code: z.string().nullable(),
      message: z.string().nullable(),
      delay_ms: z.number().nullable(),
    }),
  ),
  predictions: z
    .array(
      z.object({
        id: z.number(),
        created_at: instant,
        model: z.object({ version: z.number(), time: z.string() }).nullable(),
        predictions: z.array(z.unknown()),
      }),
    )
    .nullable(),
  thread: z.array(
    z.object({
      comment_id: z.string(),
      timestamp: instant,
      from: z.string().nullable(),
      item_id: z.number().nullable(),
      self: z.boolean(),
      subject: z.string().nullable(),
      text: z.string().nullable(),
    }),
  ),
});
same<z.output<typeof itemDetail>, ItemDetail>(true);

const adapterHealthLine = z.object({
  kind: z.string(),
  name: z.string(),
  state: z.string().nullable(),
  healthy: z.boolean().nullable(),
  last_error: z.object({ code: z.string(), message: z.string(), at: z.string().optional() }).nullable(),
  detail: z.record(z.string(), z.unknown()),
});
same<z.output<typeof adapterHealthLine>, AdapterHealthLine>(true);

export const overview = z.object({
  at: instant,
  counts_at: instant,
  routes: z.array(
    z.object({
      route: z.string(),
      mode: z.string().nullable(),
      target: z.string().nullable(),
      counts,
      outbox_depth: z.number(),
      delivered_last_minute: z.number(),
      delivered_last_hour: z.number(),
      dead_last_hour: z.number(),
      ai_units_per_day: z.array(z.object({ day: z.string(), units: z.number() })),
    }),
  ),
  lines: z.array(z.object({ route: z.string(), adapter: z.string(), counts })),
  adapters: z.array(adapterHealthLine),
  owners: z.array(
    z.object({
      id: z.string(),
      host: z.string(),
      pid: z.number(),
      started_at: instant,
      heartbeat_at: instant,
      heartbeat_age_ms: z.number(),
    }),
  ),
  store: z.object({
    kind: z.string(),
    bytes: z.number(),
    free_bytes: z.number().nullable(),
    auto_vacuum: z.string().nullable(),
    oldest: z.object({ queued: instant.nullable(), delivered: instant.nullable(), dead: instant.nullable() }),
    full: z.object({ since: instant, method: z.string(), message: z.string() }).nullable(),
  }),
});
same<z.output<typeof overview>, Overview>(true);

export const bulkReplay = z.object({
  results: z.array(
    z.union([z.object({ id: z.number(), status: z.enum(['queued', 'dead']) }), z.object({ id: z.number(), error: consoleError })]),
  ),
});
same<z.output<typeof bulkReplay>, BulkReplayResult>(true);

/** `GET /api/status`: the store, routes and adapters as the service reports them (open-ended), and the server. */
export const status = z.looseObject({
  store: z.looseObject({}),
  routes: z.array(z.looseObject({ route: z.string() })),
  adapters: z.array(z.looseObject({})),
  server: z.object({ started_at: instant, uptime_seconds: z.number().int().min(0) }),
});

/** One mailbox: its state (the reason and error kind when disabled), filtered count and folders (src/service/mailboxes.ts). */
export const mailbox = z.object({
  mailbox: z.string().describe('`<kind>:<instance>`, e.g. `imap:support`, `graph:contoso/ops@contoso.com`'),
  kind: z.string(),
  configured: z.boolean(),
  state: z.enum(['enabled', 'disabled']),
  reason: z.enum(['user', 'quota', 'sync_error']).nullable(),
  byCommand: z.boolean().describe('set by `mailgate mailboxes enable|disable` or this API: wins over the configuration'),
  errorKind: z.string().nullable().describe('not_found, bad_credentials, access_denied, insufficient_scope, quota, unreachable, other'),
  errorCode: z.string().nullable(),
  message: z.string().nullable(),
  failingSince: instant.nullable(),
  run: z.string().nullable(),
  filtered: z.number().int().min(0),
  folders: z.array(
    z.object({
      folder: z.string(),
      state: z.enum(['in_progress', 'up_to_date']).nullable(),
      syncedUntil: z.string().nullable(),
      lastSynced: z.string().nullable(),
      behind: z.number().int().nullable(),
      filtered: z.number().int().min(0),
    }),
  ),
});
same<z.output<typeof mailbox>, MailboxView>(true);
export const mailboxes = z.object({ mailboxes: z.array(mailbox) });
export const mailboxChanged = z.object({ mailbox: z.string(), state: z.enum(['enabled', 'disabled']), byCommand: z.literal(true) });
export const routeResumed = z.object({ route: z.string(), resumed: z.boolean().describe('false: the route was not paused') });

/** A dead letter as the store lists it (fields by store; `id` always), with its origin as its kind shows it. */
const deadLetter = z.looseObject({
  id: z.number(),
  originLabel: z.string().describe('where the message came from as its kind shows it (the items list shows the same label)'),
});
export const deadLetterPage = z.object({
  items: z.array(deadLetter),
  next_after: z.number().nullable().describe('`after` of the next page'),
});
export const deadLetterDetail = z.looseObject({ id: z.number(), raw_bytes: z.number().nullable() });
export const replayed = z.looseObject({});
export const purged = z.object({ purged: z.number().int().min(0) });
export const predictionsPage = z.object({ items: z.array(z.looseObject({ id: z.number() })), next_after: z.number().nullable() });

export const previewAnswer = z.object({
  document: RawEmailDocument,
  comment: Comment,
  thread_properties: ThreadProperties.nullable(),
  warnings: z.array(consoleError),
});
export const previewFileAnswer = z.object({
  file: z.string(),
  kind: z.enum(['eml', 'mbox', 'msg', 'pst']).nullable().describe('How the file was read; null when it is not mail'),
  messages: z.array(
    z.union([previewAnswer.extend({ index: z.number().int().min(0) }), z.object({ index: z.number().int().min(0), error: consoleError })]),
  ),
  more: z.boolean().describe('The file holds more messages than one request previews; the rest was not read'),
});
export const threadsAnswer = z.object({ threads: z.array(z.object({ comment: Comment, thread_properties: ThreadProperties.nullable() })) });
export const storedPreview = z.looseObject({});

export const health = z.object({ status: z.literal('ok') });
export const readiness = z.object({
  status: z.enum(['ok', 'unavailable']),
  checks: z.record(z.string(), z.object({ ok: z.boolean(), state: z.string().optional(), code: z.string().optional() })),
});
