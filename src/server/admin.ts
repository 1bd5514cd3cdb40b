/**
 * The admin API (behind API keys, see auth.ts): status, the dead-letter list with
 * replay and purge, and the stored predictions. The preview endpoints live in preview-routes.ts.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DeadLetterPurge, ServerDeps } from './deps.js';
import { httpError } from './errors.js';
import { originLabel } from './console-rows.js';
import { idParams, intParam, parse, routeName } from './params.js';

export const MAX_DLQ_LIMIT = 10_000;
export const DEFAULT_DLQ_LIMIT = 100;

export const listQuery = z
  .object({
    route: routeName.optional(),
    limit: intParam(1, MAX_DLQ_LIMIT).optional(),
    after: intParam(0, Number.MAX_SAFE_INTEGER).optional(),
  })
  .strict();

export const purgeQuery = z
  .object({
    ids: z
      .string()
      .regex(/^\d{1,16}(,\d{1,16}){0,9999}$/, 'must be comma-separated ids, e.g. 12,13')
      .transform((s) => s.split(',').map(Number))
      .optional(),
    route: routeName.optional(),
    older_than: z.iso.datetime({ offset: true, message: 'must be an ISO-8601 instant, e.g. 2026-01-31T00:00:00Z' }).optional(),
    all: z.literal('true', 'must be "true"').optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    const filters = [q.ids, q.route, q.older_than].filter((v) => v !== undefined).length;
    if (filters === 0 && q.all === undefined)
      ctx.addIssue({ code: 'custom', message: 'give ids, route or older_than, or all=true to purge every dead letter' });
    if (filters > 0 && q.all !== undefined)
      ctx.addIssue({ code: 'custom', path: ['all'], message: 'all=true cannot be combined with other filters' });
  });

/** A mailbox name: `<kind>:<instance>` (`imap:support`, `graph:contoso/ops@contoso.com`), URL-encoded in the path. */
export const mailboxParams = z
  .object({ mailbox: z.string().regex(/^[a-z]+:[^\s]{1,320}$/, 'must be a mailbox name such as imap:support') })
  .strict();

function purgeFilter(q: z.output<typeof purgeQuery>): DeadLetterPurge {
  const f: DeadLetterPurge = {};
  if (q.ids !== undefined) f.ids = q.ids;
  if (q.route !== undefined) f.route = q.route;
  if (q.older_than !== undefined) f.olderThan = new Date(q.older_than);
  if (q.all !== undefined) f.all = true;
  return f;
}

function notFound(id: number): Error {
  return httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `No dead letter with id ${id}.`);
}

export function adminRoutes(deps: ServerDeps, startedAt: Date) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/status', async () => ({
      ...(await deps.status()),
      server: { started_at: startedAt.toISOString(), uptime_seconds: Math.floor((Date.now() - startedAt.getTime()) / 1000) },
    }));

    app.get('/api/mailboxes', async () => {
      if (!deps.mailboxes) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', 'This server keeps no mailbox states.');
      return { mailboxes: await deps.mailboxes.list() };
    });

    for (const action of ['enable', 'disable'] as const) {
      app.post(`/api/mailboxes/:mailbox/${action}`, async (request) => {
        const { mailbox } = parse(mailboxParams, request.params, 'path parameter');
        if (!deps.mailboxes) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', 'This server keeps no mailbox states.');
        if (!(await deps.mailboxes.set(mailbox, action === 'enable')))
          throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `No mailbox "${mailbox}" (names as in GET /api/mailboxes, e.g. imap:support).`);
        request.log.info({ mailbox, action }, `mailbox ${action}d by command`);
        return { mailbox, state: action === 'enable' ? 'enabled' : 'disabled', byCommand: true };
      });
    }

    app.post('/api/routes/:route/resume', async (request) => {
      const { route } = parse(z.object({ route: routeName }).strict(), request.params, 'path parameter');
      const resumed = await deps.routes?.resume(route);
      if (resumed === undefined) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `No route "${route}".`);
      return { route, resumed };
    });

    app.get('/api/dlq', async (request) => {
      const q = parse(listQuery, request.query, 'query parameter');
      const limit = q.limit ?? DEFAULT_DLQ_LIMIT;
      const items = await deps.deadLetters.list({
        limit,
        ...(q.route === undefined ? {} : { route: q.route }),
        ...(q.after === undefined ? {} : { after: q.after }),
      });
      const last = items.at(-1);
      // `originLabel`: where the message came from as its kind shows it (as the items list and `dlq list` do).
      return {
        items: items.map((d) => ({ ...d, originLabel: originLabel(d.origin) })),
        next_after: items.length === limit && last ? last.id : null,
      };
    });

    app.get('/api/predictions', async (request) => {
      if (!deps.predictions) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', 'This server keeps no predictions.');
      const q = parse(listQuery, request.query, 'query parameter');
      const limit = q.limit ?? DEFAULT_DLQ_LIMIT;
      const items = await deps.predictions.list({
        limit,
        ...(q.route === undefined ? {} : { route: q.route }),
        ...(q.after === undefined ? {} : { after: q.after }),
      });
      const last = items.at(-1);
      return { items, next_after: items.length === limit && last ? last.id : null };
    });

    app.get('/api/dlq/:id', async (request) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const item = await deps.deadLetters.get(id);
      if (!item) throw notFound(id);
      const { raw, ...rest } = item;
      return { ...rest, raw_bytes: raw === undefined ? null : raw.byteLength };
    });

    app.get('/api/dlq/:id/raw', async (request, reply) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const item = await deps.deadLetters.get(id);
      if (!item) throw notFound(id);
      if (item.raw === undefined) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `Dead letter ${id} has no raw bytes kept.`);
      return reply
        .type('message/rfc822')
        .header('content-disposition', `attachment; filename="dead-letter-${id}.eml"`)
        .send(Buffer.from(item.raw.buffer, item.raw.byteOffset, item.raw.byteLength));
    });

    app.post('/api/dlq/:id/replay', async (request) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const result = await deps.deadLetters.replay(id);
      if (!result) throw notFound(id);
      request.log.info({ id, result }, 'dead letter replayed');
      return result;
    });

    app.delete('/api/dlq', async (request) => {
      const filter = purgeFilter(parse(purgeQuery, request.query, 'query parameter'));
      const purged = await deps.deadLetters.purge(filter);
      request.log.info({ filter, purged }, 'dead letters purged');
      return { purged };
    });
  };
}
