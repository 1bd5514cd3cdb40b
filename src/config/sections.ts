/**
 * The schema of mailgate.yaml, section by section, and how it is built from the entry schemas of
 * the adapter kinds. Strict: an unknown key is an error naming its path. Every field says what it
 * is, its unit and its default; docs/config.md is generated from it. schema.ts builds it with
 * every kind (ConfigSchema); a command builds it with only the kinds its configuration names
 * (load-named.ts): each kind's entry schema is a module of its own, loaded on first use.
 */
import { z } from 'zod';
import { KINDS, ADAPTER_KINDS } from '../../adapters/config.js';
import type { KindDefinition } from './kind.js';
import { insecureUrlIssue } from '../net.js';
import { isPlaceholderKey } from './placeholder-keys.js';
import { DEFAULT_DRAIN_MS, DEFAULT_MAX_DOCUMENTS, DEFAULT_STORE_URL } from './defaults.js';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_REQUEST_BYTES,
  MIN_WEBHOOK_SECRET_CHARS,
  DEFAULT_PARSE_TIMEOUT_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_THRESHOLD,
  DEFAULT_TRANSFORM_TAG,
  MAX_OVERRIDE_PROPERTIES,
  MAX_PREDICT_DOCUMENTS,
  MAX_SYNC_DOCUMENTS,
} from '../limits.js';
import { LabelThreshold, Threshold } from '../model/index.js';
import { DEFAULT_RETRY_POLICY as RETRY } from '../api/retry.js';

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const projectAndName = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,1024}\/[A-Za-z0-9_-]{1,256}$/, 'must be "<project>/<name>", e.g. acme/support-emails');

export const RetrySchema = z
  .object({
    max_attempts: int(1, 100)
      .default(RETRY.maxAttempts)
      .describe(`Attempts per request, the first included. Default ${RETRY.maxAttempts}.`),
    base_delay_ms: int(0).default(RETRY.baseDelayMs).describe(`First backoff delay in ms before jitter. Default ${RETRY.baseDelayMs}.`),
    max_delay_ms: int(0)
      .default(RETRY.maxDelayMs)
      .describe(
        `Largest single backoff delay in ms, before jitter (a longer Retry-After from the service is waited, within budget_ms). Default ${RETRY.maxDelayMs}.`,
      ),
    budget_ms: int(0).default(RETRY.budgetMs).describe(`Total time one request may spend retrying, in ms. Default ${RETRY.budgetMs}.`),
  })
  .strict();

export const ApiSchema = z
  .object({
    url: z.string().url().describe('Base URL of the Text Analytics API (without /api/v1). Omit to use the built-in emulator.').optional(),
    token: z.string().min(1).describe('Bearer token. Use ${MAILGATE_API_TOKEN} rather than a literal.').optional(),
    timeout_ms: int(1)
      .default(DEFAULT_REQUEST_TIMEOUT_MS)
      .describe('Deadline of one request, connect to last byte, in ms. Default 240000.'),
    retry: RetrySchema.prefault({}).describe('Retry policy for network errors, timeouts, 408, 409, 429 and 5xx.'),
    allow_insecure_http: z
      .boolean()
      .default(false)
      .describe('Accept an http:// `url` for a host that is not loopback (the token then crosses the network in clear). Default false.'),
  })
  .strict()
  .superRefine((a, ctx) => {
    const issue = a.url === undefined ? undefined : insecureUrlIssue(a.url, a.allow_insecure_http);
    if (issue) ctx.addIssue({ code: 'custom', path: ['url'], message: issue });
  });

export const PreviewServerSchema = z
  .object({
    max_body_bytes: int(1)
      .default(4 * 1024 * 1024)
      .describe('Largest request body of a preview endpoint, in bytes (refused with 413 before it is read). Default 4194304 (4 MiB).'),
    max_concurrent: int(1, 64).default(2).describe('Preview requests answered at once; more get 503 with Retry-After. Default 2.'),
  })
  .strict();

export const PushServerSchema = z
  .object({
    max_concurrent: int(1)
      .default(64)
      .describe(
        `Push requests (webhooks, uploads) open at once on one listener; more get 503 with Retry-After before their body is read. Default 64.`,
      ),
    max_bytes_in_flight: int(1)
      .default(128 * 1024 * 1024)
      .describe(
        'Body bytes the open push requests of one listener may hold between them, counted from Content-Length (a chunked body counts as its ' +
          `endpoint's whole body limit); past it: 503 with Retry-After before the body is read. Default 134217728 (128 MiB).`,
      ),
    max_per_client: int(1)
      .default(8)
      .describe(
        `Push requests one client address may have open at once on one listener (the X-Forwarded-For client behind a trusted proxy); more get 503 with Retry-After. Default 8.`,
      ),
    retry_after_s: int(1, 3600).default(5).describe(`Retry-After of a push request refused by these bounds, in seconds. Default 5.`),
  })
  .strict();

const listenAddress = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:8080');

export const ServerSchema = z
  .object({
    listen: listenAddress
      .default('127.0.0.1:8080')
      .describe('Address of the health, metrics, preview and admin HTTP server. Default 127.0.0.1:8080.'),
    public_listen: listenAddress
      .optional()
      .describe(
        'A second listener for what outsiders must reach: the push endpoints (webhooks, uploads, change-notification receivers) and GET /livez, ' +
          'nothing else; the admin API, console, metrics and preview stay on `listen`. Unset (the default): no second listener.',
      ),
    trusted_proxies: z
      .array(z.string().regex(/^[0-9a-fA-F:.]+(\/\d{1,3})?$/, 'must be an IP address or CIDR range'))
      .default([])
      .describe(
        'Reverse proxies (addresses or CIDR ranges) whose X-Forwarded-For names the client, for the per-client push bound and the logs; ' +
          'from any other peer the header is ignored. Default [].',
      ),
    push: PushServerSchema.prefault({}).describe('The push budget of each listener: bounds on push requests before they are trusted.'),
    api_keys: z
      .array(
        z
          .string()
          .min(16, 'admin API keys must be at least 16 characters')
          .refine((k) => !isPlaceholderKey(k), 'is a known placeholder key, not a secret: generate one, e.g. `openssl rand -hex 24`'),
      )
      .default([])
      .describe(
        'Keys accepted by the admin API (header `Authorization: Bearer <key>`), each at least 16 characters; known placeholders ' +
          '(`change-me…`, `your-…`, `xxxx…`, one repeated character, …) are refused. Empty: the admin API is disabled.',
      ),
    public_preview: z
      .boolean()
      .default(false)
      .describe(
        'Answer POST /api/preview, POST /api/preview/file and POST /api/preview/threads without an admin API key (they parse only: nothing is stored, sent or billed), and show the /preview page without a key field. Stored items (/api/preview/<id>), the dead letters and /api/status keep needing a key. Default false.',
      ),
    preview: PreviewServerSchema.prefault({}).describe(
      'Limits of the preview endpoints (POST /api/preview, POST /api/preview/file, POST /api/preview/threads).',
    ),
    allowed_hosts: z
      .array(z.string().regex(/^(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/, 'must be host or host:port'))
      .default([])
      .describe(
        'Host header values accepted besides localhost, 127.0.0.1 and [::1] (with the port) while listening on a loopback address, ' +
          "e.g. a reverse proxy's name; `host` matches any port, `host:port` that port only. " +
          'Others get 421 (a guard against DNS rebinding). Default [].',
      ),
    // It covers an SMTP listener's close (30 s by default) and the after-delivery actions' 10 s;
    // with the default drain, 70 s in all, within the 75 s systemd waits before SIGKILL.
    stop_timeout_ms: int(1_000, 3_600_000)
      .default(40_000)
      .describe(
        'On shutdown of `mailgate serve`, how long stopping may take beyond `delivery.drain_ms` (adapters, after-delivery actions, prediction sinks, the HTTP server, the store), in ms. ' +
          'Past drain_ms + this, the process logs what is still open (MAILGATE_ERR_SERVICE_STOP_TIMEOUT) and exits with status 1. Default 40000.',
      ),
    request_timeout_ms: int(1)
      .default(60_000)
      .describe('Time a client has to send one whole request (headers and body), in ms. Default 60000.'),
    headers_timeout_ms: int(1)
      .default(20_000)
      .describe('Time a client has to send the request headers, in ms (at most request_timeout_ms). Default 20000.'),
    idle_timeout_ms: int(1)
      .default(30_000)
      .describe('A connection with no bytes in either direction for this long is closed, in ms. Default 30000.'),
    keep_alive_timeout_ms: int(1)
      .default(5_000)
      .describe('How long an idle keep-alive connection waits for its next request, in ms. Default 5000.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.headers_timeout_ms > s.request_timeout_ms) {
      ctx.addIssue({ code: 'custom', path: ['headers_timeout_ms'], message: 'must not exceed request_timeout_ms' });
    }
  });

export const ParsingSchema = z
  .object({
    max_message_bytes: int(1)
      .default(DEFAULT_MAX_MESSAGE_BYTES)
      .describe('Size budget of one raw message in bytes; larger messages are dead-lettered. Default 52428800 (50 MiB).'),
    timeout_ms: int(1).default(DEFAULT_PARSE_TIMEOUT_MS).describe('Time budget to parse one message in ms. Default 5000.'),
    poison_after: int(1, 100)
      .default(3)
      .describe(
        'Parse attempts of one message (each counted in the store before it runs) after which a message that kills its parse worker or the process is set aside as a dead letter (MAILGATE_ERR_INTAKE_POISON, raw bytes kept), so its mailbox moves on. Default 3.',
      ),
    workers: int(1, 64)
      .optional()
      .describe('Parse worker threads. Default: one fewer than the CPU cores (at least 1); the main thread keeps a core busy.'),
    body: z
      .enum(['auto', 'plain', 'html'])
      .default('auto')
      .describe('Body sent: auto (text/plain, else HTML), plain (HTML converted when needed), html. Default auto.'),
    headers: z
      .enum(['raw', 'parsed'])
      .default('raw')
      .describe('Header form sent: raw, or parsed (only when no key repeats and all keys are ASCII). Default raw.'),
  })
  .strict();

export const DeliverySchema = z
  .object({
    max_documents: int(1, MAX_SYNC_DOCUMENTS)
      .default(DEFAULT_MAX_DOCUMENTS)
      .describe('Documents per request (sync at most 16384, predict at most 4096). Default 4096.'),
    max_request_bytes: int(1024)
      .default(DEFAULT_MAX_REQUEST_BYTES)
      .describe('Serialized request size bound in bytes. Default 25165824 (24 MiB).'),
    flush_ms: int(0)
      .default(200)
      .describe(
        'After a partial batch, how long delivery waits before claiming the next, so that documents arriving meanwhile share one request, in ms (0: at once); a pull batch of 100 messages or more (an IMAP backfill chunk, a batch of a file) ends the wait, being one already. Default 200.',
      ),
    concurrency: int(1, 64).default(2).describe('Requests in flight per route. Default 2.'),
    max_outbox: int(1).default(50_000).describe('Outbox depth at which intake pauses (backpressure). Default 50000.'),
    max_item_attempts: int(1)
      .default(50)
      .describe('Delivery attempts of one item (each a full retried request) before it is dead-lettered. Default 50.'),
    drain_ms: int(0, 3_600_000)
      .default(DEFAULT_DRAIN_MS)
      .describe(
        'On shutdown of `mailgate serve`, how long delivery may keep sending what is queued, in ms (0: stop at once); what is left stays queued for the next start. `--drain-ms` overrides it. Default 30000.',
      ),
    heartbeat_ms: int(100, 600_000)
      .default(5_000)
      .describe(
        'How often a process that claims outbox items renews its heartbeat in the store, in ms; one that missed 3 is taken for dead and its claims are released (on its own host and PID namespace at once when its pid is gone). Default 5000.',
      ),
  })
  .strict();

const DAY_S = 86_400;

export const RetentionSchema = z
  .object({
    delivered_s: int(60)
      .nullable()
      .default(7 * DAY_S)
      .describe(
        'How long a delivered (or unchanged) item stays in the store after delivery, in seconds: its document, preview, console row and attempts; then it is pruned. ' +
          'The ledger stays, so a message read again after that costs no AI units. null: kept for good. Default 604800 (7 days).',
      ),
    dead_s: int(60)
      .nullable()
      .default(null)
      .describe(
        'How long a dead letter (with its raw bytes) stays after it died, in seconds; null: until purged (`mailgate dlq purge`). Default null.',
      ),
    predictions_s: int(60)
      .nullable()
      .default(30 * DAY_S)
      .describe(
        'How long a stored prediction stays, in seconds (the sinks got it when it was made); null: kept for good. Default 2592000 (30 days).',
      ),
    threads_s: int(60)
      .nullable()
      .default(365 * DAY_S)
      .describe(
        "How long a thread stays in the thread index after its newest message's date, in seconds, once none of its messages has an item left in the store; then the thread's rows go together. " +
          'A later reply still gets its thread id (from its own headers) but counts the thread from itself. null: kept for good. Default 31536000 (365 days).',
      ),
    parse_attempts_s: int(60)
      .nullable()
      .default(30 * DAY_S)
      .describe(
        "How long a parse-attempt count of a message not stored stays after it was last counted, in seconds: a count left by a process that stopped before forgetting it, or a poison message's (then a message coming back after that is tried `parsing.poison_after` times again). null: kept for good. Default 2592000 (30 days).",
      ),
    interval_s: int(1, DAY_S)
      .default(300)
      .describe('How often `mailgate serve` prunes what is older than the above, in seconds. Default 300.'),
    batch: int(1, 10_000)
      .default(500)
      .describe(
        'Rows deleted per transaction while pruning: intake and delivery wait at most one such transaction for the store. Default 500.',
      ),
    reclaim_bytes: int(0)
      .default(64 * 1024 * 1024)
      .describe(
        'SQLite: free space given back to the file system after each pruning round, at most this many bytes (0: none; the space is then reused inside the file). Default 67108864 (64 MiB).',
      ),
  })
  .strict();

const PropertyConflict = z.enum(['reject', 'override', 'drop']);

export const LeasesSchema = z
  .object({
    ttl_ms: int(3_000, 300_000)
      .default(30_000)
      .describe(
        'How long a mailbox lease (an IMAP account or files drop owned by one `mailgate serve` replica) lasts without renewal, in ms: the bound for another replica to take over from one cut off from the store. Default 30000.',
      ),
    renew_ms: int(100, 60_000)
      .default(2_000)
      .describe(
        'How often a replica renews its mailbox leases and checks which it should hold, in ms; at most a third of ttl_ms. A replica that stops hands its mailboxes over within about this long. Default 2000.',
      ),
  })
  .strict()
  .refine((l) => l.renew_ms * 3 <= l.ttl_ms, { message: 'renew_ms must be at most a third of ttl_ms', path: ['renew_ms'] });

export const MailboxesSchema = z
  .object({
    check_ms: int(100, 600_000)
      .default(5_000)
      .describe(
        'How often each replica reads the mailboxes’ states (a disable or enable by command reaches it within this long), writes their filtered counts and checks how long a failing mailbox has failed, in ms. Default 5000.',
      ),
  })
  .strict();

export const RouteSchema = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'route names use letters, digits, - and _')
      .describe('Route name, referenced by adapters.'),
    mode: z
      .enum(['sync', 'predict'])
      .default('sync')
      .describe('sync: sync-raw-emails into `source`. predict: predict-raw-emails against `dataset`. Default sync.'),
    source: projectAndName.optional().describe('Target source for sync routes, "<project>/<source>".'),
    dataset: projectAndName.optional().describe('Dataset for predict routes, "<project>/<dataset>".'),
    model_version: z
      .union([int(0), z.enum(['live', 'staging'])])
      .default('live')
      .describe('Model version for predict routes: an integer, live or staging. Default live.'),
    threshold: Threshold.optional().describe(`Prediction threshold 0..1 or "auto". Default: the service default ${DEFAULT_THRESHOLD}.`),
    labels: z.array(LabelThreshold).optional().describe('Labels to return, each with an optional threshold.'),
    sink: z
      .object({
        jsonl: z.string().optional().describe('Append predictions to this JSONL file.'),
        webhook: z.string().url().optional().describe('POST predictions to this URL.'),
        webhook_secret: z
          .string()
          .min(MIN_WEBHOOK_SECRET_CHARS, `a webhook secret must be at least ${MIN_WEBHOOK_SECRET_CHARS} characters`)
          .refine((k) => !isPlaceholderKey(k), 'is a known placeholder, not a secret: generate one, e.g. `openssl rand -hex 32`')
          .optional()
          .describe(
            `HMAC-SHA256 key (at least ${MIN_WEBHOOK_SECRET_CHARS} characters) for ` +
              'X-Mailgate-Signature: t=<unix s>,v1=<hex HMAC of "<t>.<body>">.',
          ),
        allow_insecure_http: z
          .boolean()
          .default(false)
          .describe('Accept an http:// `webhook` for a host that is not loopback. Default false.'),
      })
      .strict()
      .superRefine((k, ctx) => {
        const issue = k.webhook === undefined ? undefined : insecureUrlIssue(k.webhook, k.allow_insecure_http);
        if (issue) ctx.addIssue({ code: 'custom', path: ['webhook'], message: issue });
      })
      .optional()
      .describe('Where predictions go besides the store: a JSONL file and/or a webhook signed with HMAC-SHA256.'),
    transform_tag: z
      .string()
      .min(1)
      .default(DEFAULT_TRANSFORM_TAG)
      .describe('Transform tag received during integration setup. Default generic.0.CONVKER5.'),
    user_properties: z
      .record(z.string(), z.union([z.string(), z.number()]))
      .default({})
      .describe(
        'Client properties added to every document; string values may use {adapter}, {instance} (also {account}), {id}, {folder}, {labels} (Google Vault, Gmail), {mailbox} (Graph, Gmail), {path}, {eventId}, ' +
          'and for pushed mail {envelope.from}, {envelope.to} (comma-joined), {envelope.provider}, {envelope.spf}, {envelope.dkim}, ' +
          '{envelope.dmarc}, {envelope.spamVerdict}, {envelope.remoteAddress}, {envelope.helo}, {envelope.tls}, {envelope.extra.<key>} ' +
          '(SMTP: {envelope.extra.plus}), {envelope.journal.*} (see unwrap); a value left empty is omitted.',
      ),
    unwrap: z
      .enum(['none', 'exchange_journal'])
      .default('none')
      .describe(
        'exchange_journal: an Exchange journal report (X-MS-Journal-Report) is replaced by the original message it carries, ' +
          'and the recipients it lists become the envelope ({envelope.from}, {envelope.to}, {envelope.journal.to|cc|bcc|recipient|expanded|lists|forwarded}); ' +
          'reports of one message are one comment whose envelope is their union. Any intake. Default none.',
      ),
    override_user_properties: z
      .array(z.string())
      .max(MAX_OVERRIDE_PROPERTIES)
      .default([])
      .describe('Generated property names (without type prefix) that client values override (sync only).'),
    on_property_conflict: PropertyConflict.default('reject').describe(
      'What happens to a document whose client property collides with a generated one not in the override list: reject, override (sync only), drop. Default reject.',
    ),
    max_documents: int(1, MAX_SYNC_DOCUMENTS).optional().describe('Per-route override of delivery.max_documents.'),
  })
  .strict()
  .superRefine((r, ctx) => {
    if (r.mode === 'sync' && !r.source)
      ctx.addIssue({ code: 'custom', path: ['source'], message: 'a sync route needs `source: <project>/<source>`' });
    if (r.mode === 'predict' && !r.dataset)
      ctx.addIssue({ code: 'custom', path: ['dataset'], message: 'a predict route needs `dataset: <project>/<dataset>`' });
    if (r.mode === 'predict' && r.max_documents !== undefined && r.max_documents > MAX_PREDICT_DOCUMENTS)
      ctx.addIssue({
        code: 'custom',
        path: ['max_documents'],
        message: `predict requests hold at most ${MAX_PREDICT_DOCUMENTS} documents`,
      });
  });
export type RouteConfig = z.infer<typeof RouteSchema>;
export type RetentionConfig = z.infer<typeof RetentionSchema>;

/** `store`: the one setting the read-only commands read (src/config/store-url.ts). */
export const StoreSchema = z
  .string()
  .default(DEFAULT_STORE_URL)
  .describe(`sqlite:PATH (default ${DEFAULT_STORE_URL}) or postgres://user:pass@host/db.`);

/** An unknown key under `adapters:` is a kind mailgate does not have: say which ones it has. */
function unknownKind(iss: { code?: string; keys?: string[] }): string | undefined {
  if (iss.code !== 'unrecognized_keys') return undefined;
  const keys = iss.keys ?? [];
  return `unknown adapter kind ${keys.map((k) => `"${k}"`).join(', ')}; the kinds are ${ADAPTER_KINDS.join(', ')} (rename or remove adapters.${keys[0] ?? ''})`;
}

type AdapterConfigs = typeof KINDS;
type EntrySchema<K extends keyof AdapterConfigs> = Awaited<ReturnType<AdapterConfigs[K]['schema']>>;
type AdapterLists = { [K in keyof AdapterConfigs]: z.ZodDefault<z.ZodArray<EntrySchema<K>>> };

/** The entry schemas of `kinds`, from their config modules (a kind's definition loads it on first use). */
export async function entrySchemas(kinds: readonly string[]): Promise<ReadonlyMap<string, z.ZodType>> {
  const known = ADAPTER_KINDS.filter((kind) => kinds.includes(kind));
  return new Map(await Promise.all(known.map(async (kind) => [kind, await KINDS[kind].schema()] as const)));
}

/** A kind whose entry schema was not loaded: its list must be absent, and is then empty, as with the kind's schema. */
const NOT_LOADED = z.array(z.never()).default([]);

/**
 * `adapters.<kind>`: a list of the kind's entries, for every kind of the registry
 * (adapters/config.ts). A kind missing from `entries` accepts only an absent list: a
 * configuration is validated with the schemas of every kind it names.
 */
export function adaptersSchemaWith(entries: ReadonlyMap<string, z.ZodType>) {
  const lists = Object.fromEntries(
    ADAPTER_KINDS.map((kind) => {
      const entry = entries.get(kind);
      return [kind, entry === undefined ? NOT_LOADED : z.array(entry).default([]).describe(KINDS[kind].description)];
    }),
  );
  return z.strictObject(lists as AdapterLists, { error: unknownKind }).prefault({});
}

/** The whole schema, every adapter kind's entries validated with the schema in `entries` (adaptersSchemaWith). */
export function configSchemaWith(entries: ReadonlyMap<string, z.ZodType>) {
  const sections = {
    store: StoreSchema,
    api: ApiSchema.prefault({}).describe('The Text Analytics API to deliver to.'),
    server: ServerSchema.prefault({}).describe('The HTTP server of `mailgate serve`.'),
    parsing: ParsingSchema.prefault({}).describe('Parsing budgets and the form of the documents sent.'),
    delivery: DeliverySchema.prefault({}).describe('Batching, concurrency and backpressure of delivery.'),
    retention: RetentionSchema.prefault({}).describe(
      'What `mailgate serve` deletes from the store by age, a few rows at a time (docs/store.md "Retention"). Durations in seconds.',
    ),
    leases: LeasesSchema.prefault({}).describe(
      'Mailbox ownership when several `mailgate serve` replicas share one store: each IMAP account and files drop is read by one live replica at a time.',
    ),
    mailboxes: MailboxesSchema.prefault({}).describe(
      'Mailbox states (IMAP accounts, Graph and Gmail mailboxes): enabled, or disabled with a reason; see docs/mailbox-controls.md.',
    ),
    routes: z.array(RouteSchema).default([]).describe('Where messages go: one route per target source (sync) or dataset (predict).'),
    adapters: adaptersSchemaWith(entries).describe('Where messages come from, per adapter kind; each entry names its route.'),
    log_level: z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
      .default('info')
      .describe('pino log level. Default info.'),
    log_format: z
      .enum(['auto', 'json', 'pretty'])
      .default('auto')
      .describe('Log lines: json, pretty (one readable line per event) or auto (pretty when the log stream is a terminal). Default auto.'),
  };
  return (
    z
      .object(sections)
      .strict()
      // Cross-field checks run even when fields are invalid, so that one round reports every mistake.
      .superRefine((c, ctx) => crossChecks(c, ctx), { when: () => true })
  );
}

type Ctx = Parameters<Parameters<z.ZodType['superRefine']>[0]>[1];

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const listOf = (v: unknown): Array<Record<string, unknown>> => (Array.isArray(v) ? v.map((e: unknown) => (isRecord(e) ? e : {})) : []);

/** Route names unique; each adapter entry names a route; a kind's own rule across its entries. The input may be invalid elsewhere. */
function crossChecks(input: unknown, ctx: Ctx): void {
  const c = isRecord(input) ? input : {};
  const names = new Set<string>();
  listOf(c['routes']).forEach((r, i) => {
    const name = r['name'];
    if (typeof name !== 'string') return;
    if (names.has(name)) ctx.addIssue({ code: 'custom', path: ['routes', i, 'name'], message: `route "${name}" is defined twice` });
    names.add(name);
  });
  const adapters = isRecord(c['adapters']) ? c['adapters'] : {};
  for (const kind of ADAPTER_KINDS) {
    const def: KindDefinition = KINDS[kind];
    listOf(adapters[kind]).forEach((a, i) => {
      for (const { path, route } of [{ path: ['route'], route: a['route'] }, ...(def.routes?.(a) ?? [])]) {
        if (typeof route === 'string' && !names.has(route))
          ctx.addIssue({
            code: 'custom',
            path: ['adapters', kind, i, ...path],
            message: `adapter route must name one of the routes: ${[...names].join(', ') || '(none defined)'}`,
          });
      }
    });
  }
  // A kind's own rule across its entries (IMAP: unique account names). An entry without a name
  // gets one no other can have (its missing name is reported already).
  for (const kind of ADAPTER_KINDS) {
    const def: KindDefinition = KINDS[kind];
    const named = listOf(adapters[kind]).map((a, i) => ({ name: typeof a['name'] === 'string' ? a['name'] : `\u0000${i}` }));
    const duplicate = def.unique?.(named);
    if (duplicate === undefined) continue;
    ctx.addIssue({ code: 'custom', path: ['adapters', kind, duplicate.index, 'name'], message: duplicate.message });
  }
}

export type Config = z.infer<ReturnType<typeof configSchemaWith>>;
