/**
 * The upload adapter (kind `upload`, push mode): POST /api/upload/<name> stores the messages
 * of an upload and answers 202 once every one is durable; GET /api/upload/<name>/<id> tells
 * where an item stands. Only its own keys open it, and a key sees only the items it uploaded
 * (the ids answered are tagged for the key: item-ref.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { tmpdir } from 'node:os';
import { CORE_ERRORS, GatewayError, httpStatusOf, isGatewayError, type ErrorCode } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Adapter, AdapterHealth, Inbound, Intake, PushEndpoint, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import { contentKey } from '../../src/pipeline/origin.js';
import { intakeSlot } from '../../src/pipeline/push-slot.js';
import { uploadConfigSchema, type UploadConfig, type UploadConfigInput } from './config.js';
import { UPLOAD_ERRORS } from './errors.js';
import { Spool, uploadedFiles } from './files.js';
import { fingerprint, IdempotencyCache, MAX_IDEMPOTENCY_KEY_CHARS } from './idempotency.js';
import { itemOfRef, itemRef } from './item-ref.js';
import { messagesOf, type UploadedMessage } from './messages.js';
import { uploadOperations } from './openapi.js';

/** Seconds a client waits before retrying an upload the store could not take. */
const RETRY_AFTER_S = 30;

function header(req: Pick<PushRequest, 'headers'>, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The codes an upload is answered with: its own and the core's, each with its HTTP status. */
const ANSWERS = { ...CORE_ERRORS, ...UPLOAD_ERRORS };

/** A refusal in the one error body shape of every endpoint, `{ error: { code, message } }`, with the status of its code. */
function refuse(code: ErrorCode, message: string, headers?: Record<string, string>): PushResponse {
  return { status: httpStatusOf(code, ANSWERS), ...(headers && { headers }), body: { error: { code, message } } };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** The key the request presents (Bearer or X-Api-Key); the empty string when none. */
function presentedKey(req: Pick<PushRequest, 'headers'>): string {
  const bearer = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header(req, 'authorization') ?? '')?.[1];
  return bearer ?? header(req, 'x-api-key')?.trim() ?? '';
}

/** The key the request presents, checked against every key in constant time. */
function authorized(req: Pick<PushRequest, 'headers'>, keys: readonly Buffer[]): boolean {
  const presented = presentedKey(req);
  if (!presented) return false;
  const d = digest(presented);
  let ok = false;
  for (const k of keys) ok = timingSafeEqual(d, k) || ok;
  return ok;
}

/** The upload kind's details of an origin: the file a message came in (multipart), its index in it (mbox) and its folder (PST). */
type UploadDetails = { path?: string; index?: number; folder?: string };

function inbound(config: UploadConfig, m: UploadedMessage, receivedAt: Date): Inbound {
  const key = contentKey(m.raw);
  const details: UploadDetails = {};
  if (m.file !== undefined) details.path = m.file;
  if (m.index !== undefined) details.index = m.index;
  if (m.folder !== undefined) details.folder = m.folder;
  const origin: Inbound['origin'] = { adapter: 'upload', instance: config.name, id: key, envelope: { provider: 'upload' }, details };
  return { raw: m.raw, key, route: config.route, receivedAt, origin, ...(m.failure && { failure: m.failure }) };
}

export class UploadAdapter implements Adapter {
  readonly kind = 'upload';
  readonly mode = 'push' as const;
  readonly name: string;
  private readonly keys: Buffer[];
  private readonly idempotency: IdempotencyCache;
  private readonly log: Logger;
  private readonly slot = intakeSlot('upload');

  constructor(
    private readonly config: UploadConfig,
    logger: Logger,
  ) {
    this.name = config.name;
    this.keys = config.api_keys.map(digest);
    this.idempotency = new IdempotencyCache(config.idempotency_keys);
    this.log = logger.child({ adapter: 'upload', instance: config.name, endpoint: config.name });
  }

  start(intake: Intake, signal: AbortSignal): Promise<void> {
    return this.slot.start(intake, signal);
  }

  health(): AdapterHealth[] {
    return [{ name: this.name, ok: true, state: 'listening', detail: { path: this.path } }];
  }

  get path(): string {
    return `/api/upload/${this.name}`;
  }

  endpoints(): PushEndpoint[] {
    // The key is in the headers: checked before the body is read (authorize), and again in handle.
    const authorize = (req: Pick<PushRequest, 'headers'>) => this.unauthorized(req);
    const openapi = uploadOperations(this.name);
    return [
      {
        method: 'POST',
        path: this.path,
        bodyLimit: this.config.body_limit,
        tooLarge: 'MAILGATE_ERR_UPLOAD_TOO_LARGE',
        // Read as it comes: an archive goes to the spool folder, never whole into memory.
        streamBody: true,
        public: true,
        authorize,
        handle: (req) => this.guard(req, () => this.upload(req)),
        openapi: openapi.post,
      },
      {
        method: 'GET',
        path: `${this.path}/:id`,
        bodyLimit: 0,
        public: true,
        authorize,
        handle: (req, params) => this.guard(req, () => this.status(req, params['id'] ?? '')),
        openapi: openapi.get,
      },
    ];
  }

  private unauthorized(req: Pick<PushRequest, 'headers'>): PushResponse | undefined {
    if (authorized(req, this.keys)) return undefined;
    return refuse('MAILGATE_ERR_UPLOAD_UNAUTHORIZED', "send one of the adapter's keys as Authorization: Bearer <key> or X-Api-Key", {
      'www-authenticate': 'Bearer',
    });
  }

  private async guard(req: PushRequest, run: () => Promise<PushResponse>): Promise<PushResponse> {
    return this.unauthorized(req) ?? run();
  }

  private async upload(req: PushRequest): Promise<PushResponse> {
    const key = header(req, 'idempotency-key');
    if (key !== undefined && (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_CHARS)) {
      return refuse('MAILGATE_ERR_UPLOAD_BAD_REQUEST', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters`);
    }
    let messages: UploadedMessage[];
    try {
      messages = await this.read(req);
    } catch (err) {
      if (isGatewayError(err, 'MAILGATE_ERR_UPLOAD_SPOOL_FULL')) {
        this.log.warn({ code: err.code }, err.message);
        return refuse(err.code, err.message, { 'retry-after': String(RETRY_AFTER_S) });
      }
      if (!isGatewayError(err) || !Object.hasOwn(ANSWERS, err.code) || httpStatusOf(err.code, ANSWERS) >= 500) throw err;
      return refuse(err.code, err.message);
    }
    const uploader = presentedKey(req);
    if (key === undefined) return this.store(messages, uploader);
    // Kept per uploading key: its answer holds ids only that key can look up.
    const scoped = `${digest(uploader).toString('hex')}:${key}`;
    const answer = await this.idempotency.answer(scoped, fingerprint(messages), () => this.store(messages, uploader));
    if (answer !== 'conflict') return answer;
    return refuse('MAILGATE_ERR_UPLOAD_IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was used before with different content');
  }

  /** The messages of the upload; a GatewayError (answered with its code's status) for an upload refused as a whole. */
  private async read(req: PushRequest): Promise<UploadedMessage[]> {
    const { config } = this;
    if (req.stream === undefined && req.body.length > config.body_limit) {
      throw new GatewayError('MAILGATE_ERR_UPLOAD_TOO_LARGE', `the body exceeds ${config.body_limit} bytes`);
    }
    const declared = Number(header(req, 'content-length'));
    const spool = new Spool(config.spool_dir ?? tmpdir(), Number.isSafeInteger(declared) && declared >= 0 ? declared : undefined);
    try {
      const files = await uploadedFiles(
        header(req, 'content-type'),
        req.stream ?? req.body,
        { maxFileBytes: config.body_limit, maxFiles: config.max_files },
        spool,
      );
      return await messagesOf(files, config.body_limit, config.max_messages);
    } finally {
      await spool.remove();
    }
  }

  private async store(messages: UploadedMessage[], uploader: string): Promise<PushResponse> {
    const { config } = this;
    const receivedAt = new Date();
    let results;
    try {
      results = await this.slot.intake().accept(
        messages.map((m) => inbound(config, m, receivedAt)),
        { whenFull: 'refuse' },
      );
    } catch (err) {
      if (isGatewayError(err, 'MAILGATE_ERR_INTAKE_UNAVAILABLE') || isGatewayError(err, 'MAILGATE_ERR_INTAKE_OUTBOX_FULL')) {
        return refuse(err.code, err.message, { 'retry-after': String(RETRY_AFTER_S) });
      }
      throw err;
    }
    const dead = results.filter((r) => r.dead).length;
    this.log.info({ messages: results.length, dead, duplicates: results.filter((r) => r.duplicate).length }, 'upload stored');
    const body = results.map((r, i) => ({
      id: itemRef(uploader, this.name, r.id),
      item: r.id,
      duplicate: r.duplicate,
      ...(r.dead && { dead: r.dead }),
      ...(messages[i]!.file !== undefined && { file: messages[i]!.file }),
      ...(messages[i]!.index !== undefined && { index: messages[i]!.index }),
    }));
    return { status: 202, body: { results: body } };
  }

  /**
   * The state of the item `ref` names, when the presented key uploaded it to this endpoint; any
   * other id (a bare item number, another key's or endpoint's, another route's) is as unknown as
   * a missing one.
   */
  private async status(req: PushRequest, ref: string): Promise<PushResponse> {
    const id = itemOfRef(presentedKey(req), this.name, ref);
    let item;
    try {
      item = id === undefined ? undefined : await this.slot.intake().item(id);
    } catch (err) {
      if (!isGatewayError(err, 'MAILGATE_ERR_INTAKE_UNAVAILABLE')) throw err;
      return refuse(err.code, err.message, { 'retry-after': String(RETRY_AFTER_S) });
    }
    if (!item || item.route !== this.config.route) return refuse('MAILGATE_ERR_SERVER_NOT_FOUND', `no item ${ref} uploaded with this key`);
    return { status: 200, body: { ...item, id: ref } };
  }
}

/** Builds an upload adapter from its configuration entry (validated again here). */
export function createUploadAdapter(entry: UploadConfigInput, ctx: { logger: Logger }): UploadAdapter {
  const parsed = uploadConfigSchema.safeParse(entry);
  if (!parsed.success) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `adapters.upload: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  }
  return new UploadAdapter(parsed.data, ctx.logger);
}
