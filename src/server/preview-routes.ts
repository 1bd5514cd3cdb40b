/**
 * The analyst's "what would be sent" tools:
 * POST /api/preview         raw RFC 5322 body -> { document, comment, thread_properties, warnings }
 * POST /api/preview/file?name=  one file's bytes (eml, mbox, .msg) -> { file, kind, messages: [preview | error], more }
 * POST /api/preview/threads { comments } -> { threads: [{ comment, thread_properties }] } within that set
 * GET  /api/preview/:id     the stored document and comment of an outbox item (always behind a key)
 * Nothing here stores or sends anything.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isGatewayError } from '../errors.js';
import { fileMessages } from '../mime/file-messages.js';
import type { PreviewResponse, ServerDeps } from './deps.js';
import { httpError, statusFor } from './errors.js';
import { concurrencyGate } from './guards.js';
import { idParams, parse, routeName } from './params.js';

export const RAW_MESSAGE_TYPES = ['message/rfc822', 'application/octet-stream'];
/** Comments one /api/preview/threads request may hold. */
export const MAX_THREAD_COMMENTS = 1_000;

/** Messages one /api/preview/file request previews at most (the rest of an mbox is left unread, `more` says so). */
export const MAX_FILE_MESSAGES = MAX_THREAD_COMMENTS;

export const previewQuery = z.object({ route: routeName.optional() }).strict();
export const previewFileQuery = z
  .object({
    name: z
      .string()
      .min(1)
      .max(255)
      .describe('The file name: its extension breaks ties when the first bytes do not decide (`.eml`, `.mbox`, `.msg`).'),
    route: routeName.optional(),
  })
  .strict();
export const threadsBody = z.object({ comments: z.array(z.record(z.string(), z.unknown())).min(1).max(MAX_THREAD_COMMENTS) }).strict();

export interface PreviewLimits {
  /** Largest body in bytes: refused with 413 from Content-Length, or as soon as a chunked body passes it. */
  bodyLimit: number;
  /** Requests answered at once; more get 503 with Retry-After before their body is read. */
  maxConcurrent: number;
}

/**
 * Parsing endpoints; open or behind a key depending on `server` options. Their limits are
 * their own, far below the mail limit: a preview is an analyst's single message or a page of
 * comments, and an open endpoint must not let anyone buffer 50 MiB bodies by the dozen.
 */
export function previewParseRoutes(deps: ServerDeps, limits: PreviewLimits) {
  const { bodyLimit } = limits;
  const gate = concurrencyGate(limits.maxConcurrent);
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRequest', gate.acquire);
    app.addHook('onResponse', gate.release);
    app.addHook('onRequestAbort', gate.release);
    app.addContentTypeParser(RAW_MESSAGE_TYPES, { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

    app.post('/api/preview', { bodyLimit }, async (request) => {
      const q = parse(previewQuery, request.query, 'query parameter');
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) {
        throw httpError(
          'MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE',
          `Send the raw message as the body with Content-Type ${RAW_MESSAGE_TYPES.join(' or ')}.`,
        );
      }
      const result = await deps.preview(raw, q.route === undefined ? {} : { route: q.route });
      request.log.debug({ bytes: raw.byteLength, warnings: result.warnings.length }, 'previewed a message');
      return {
        document: result.document,
        comment: result.comment,
        thread_properties: result.thread_properties ?? null,
        warnings: result.warnings,
      };
    });

    // A dropped file, read as `mailgate preview <file>` reads it: only mail is mail, an mbox is
    // split, a .msg converted; each message then parsed as POST /api/preview parses it.
    app.post('/api/preview/file', { bodyLimit }, async (request) => {
      const q = parse(previewFileQuery, request.query, 'query parameter');
      const raw = request.body;
      if (!Buffer.isBuffer(raw)) {
        throw httpError(
          'MAILGATE_ERR_SERVER_UNSUPPORTED_MEDIA_TYPE',
          `Send the file as the body with Content-Type ${RAW_MESSAGE_TYPES.join(' or ')}.`,
        );
      }
      const read = await fileMessages(raw, q.name, { maxMessageBytes: bodyLimit, maxMessages: MAX_FILE_MESSAGES });
      const options = q.route === undefined ? {} : { route: q.route };
      const messages: Array<({ index: number } & PreviewResponse) | { index: number; error: { code: string; message: string } }> = [];
      for (const m of read.messages) {
        if ('error' in m) {
          messages.push({ index: m.index, error: { code: m.error.code, message: m.error.message } });
          continue;
        }
        try {
          const r = await deps.preview(m.raw, options);
          messages.push({
            index: m.index,
            document: r.document,
            comment: r.comment,
            thread_properties: r.thread_properties ?? null,
            warnings: r.warnings,
          });
        } catch (err) {
          // A message that cannot become a comment (422 on POST /api/preview) is that message's answer;
          // an unknown route or a busy server is the request's.
          if (!isGatewayError(err) || (statusFor(err.code) !== 422 && err.code !== 'MAILGATE_ERR_MIME_TOO_LARGE')) throw err;
          messages.push({ index: m.index, error: { code: err.code, message: err.message } });
        }
      }
      request.log.debug({ bytes: raw.byteLength, kind: read.kind, messages: messages.length }, 'previewed a file');
      return { file: q.name, kind: read.kind ?? null, messages, more: read.more };
    });

    app.post('/api/preview/threads', { bodyLimit }, async (request) => {
      const { comments } = parse(threadsBody, request.body, 'body field');
      return { threads: await deps.threads(comments) };
    });
  };
}

/** Stored items: behind a key. */
export function previewItemRoutes(deps: ServerDeps) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/preview/:id', async (request) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const item = await deps.previewItem(id);
      if (!item) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `No outbox item with id ${id}.`);
      return item;
    });
  };
}
