/**
 * The console API (behind the admin keys): the item list with filters, search and keyset
 * pagination, one item in full, its raw bytes, the overview, live events (server-sent events)
 * and bulk replay of dead letters. The data comes from `deps.console` (src/service/console.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ITEM_LIST_STATES } from '../store/console.js';
import type { ItemQuery } from '../store/types.js';
import type { ConsoleEvent } from './console-events.js';
import { itemRow } from './console-rows.js';
import type { BulkReplayResult, ItemsPage } from './console-types.js';
import type { ConsoleDeps, ServerDeps } from './deps.js';
import { httpError, statusFor } from './errors.js';
import { idParams, intParam, parse, routeName } from './params.js';
import { isGatewayError } from '../errors.js';

export const MAX_ITEMS_LIMIT = 500;
export const DEFAULT_ITEMS_LIMIT = 50;
/** Dead letters one bulk replay takes at most. */
export const MAX_BULK_REPLAY = 1_000;
/** Event streams open at once; more get 503 with Retry-After. */
export const MAX_EVENT_STREAMS = 64;
/** A comment line on every open stream this often, so proxies and clients see it alive. */
export const HEARTBEAT_MS = 15_000;

const instant = z.iso.datetime({ offset: true, message: 'must be an ISO-8601 instant, e.g. 2026-01-31T00:00:00Z' });

export const itemsQuery = z
  .object({
    state: z.enum(ITEM_LIST_STATES as [string, ...string[]], `must be one of ${ITEM_LIST_STATES.join(', ')}`).optional(),
    route: routeName.optional(),
    adapter: z
      .string()
      .regex(/^[a-z0-9:_-]{1,64}$/, 'must be an adapter kind such as imap or webhook:mailgun')
      .optional(),
    adapter_name: z.string().min(1).max(256).optional(),
    since: instant.optional(),
    until: instant.optional(),
    q: z.string().trim().min(1, 'must not be empty').max(256).optional(),
    before: intParam(1, Number.MAX_SAFE_INTEGER).optional(),
    limit: intParam(1, MAX_ITEMS_LIMIT).optional(),
  })
  .strict()
  .refine((q) => q.adapter_name === undefined || q.adapter !== undefined, { path: ['adapter_name'], message: 'needs adapter' });

export const replayBody = z
  .object({ ids: z.array(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)).min(1).max(MAX_BULK_REPLAY) })
  .strict();

function storeQuery(q: z.output<typeof itemsQuery>): ItemQuery {
  const out: ItemQuery = { limit: q.limit ?? DEFAULT_ITEMS_LIMIT };
  if (q.state !== undefined) out.state = q.state as ItemQuery['state'] & string;
  if (q.route !== undefined) out.route = q.route;
  if (q.adapter !== undefined) out.adapter = q.adapter;
  if (q.adapter_name !== undefined) out.account = q.adapter_name;
  if (q.since !== undefined) out.since = new Date(q.since);
  if (q.until !== undefined) out.until = new Date(q.until);
  if (q.q !== undefined) out.q = q.q;
  if (q.before !== undefined) out.beforeId = q.before;
  return out;
}

function consoleOf(deps: ServerDeps): ConsoleDeps {
  if (!deps.console) throw httpError('MAILGATE_ERR_SERVER_NOT_FOUND', 'This server has no console data.');
  return deps.console;
}

function noItem(id: number): Error {
  return httpError('MAILGATE_ERR_SERVER_NOT_FOUND', `No item with id ${id}.`);
}

const sse = (e: ConsoleEvent): string => `event: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`;

/** `GET /api/events`: one stream; ends when the client goes or the server closes. */
function eventStreams(deps: ServerDeps) {
  const open = new Set<() => void>();
  return {
    open,
    async handler(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      const c = consoleOf(deps);
      if (open.size >= MAX_EVENT_STREAMS) {
        void reply.header('retry-after', '5');
        throw httpError('MAILGATE_ERR_SERVER_BUSY', `${MAX_EVENT_STREAMS} event streams are open; retry later.`);
      }
      const first = await c.events.status();
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write(`retry: 5000\n\n${sse({ type: 'status', data: first })}`);
      const unsubscribe = c.events.subscribe((e) => void res.write(sse(e)));
      const heartbeat = setInterval(() => void res.write(`: heartbeat ${new Date().toISOString()}\n\n`), HEARTBEAT_MS);
      heartbeat.unref();
      let ended = false;
      const end = (): void => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        unsubscribe();
        open.delete(end);
        if (!res.writableEnded) res.end();
      };
      open.add(end);
      // The response's close: the client went away (or the stream was ended here).
      res.on('close', end);
      request.log.debug('event stream opened');
    },
  };
}

async function bulkReplay(deps: ServerDeps, ids: number[]): Promise<BulkReplayResult> {
  const results: BulkReplayResult['results'] = [];
  for (const id of ids) {
    try {
      const r = await deps.deadLetters.replay(id);
      if (!r) results.push({ id, error: { code: 'MAILGATE_ERR_SERVER_NOT_FOUND', message: `No dead letter with id ${id}.` } });
      else results.push({ id, status: r.status === 'dead' ? 'dead' : 'queued' });
    } catch (err) {
      if (!isGatewayError(err) || statusFor(err.code) >= 500) throw err;
      results.push({ id, error: { code: err.code, message: err.message } });
    }
  }
  return { results };
}

export function consoleRoutes(deps: ServerDeps) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/items', async (request): Promise<ItemsPage> => {
      const query = storeQuery(parse(itemsQuery, request.query, 'query parameter'));
      const items = await consoleOf(deps).listItems(query);
      const last = items.at(-1);
      return { items: items.map(itemRow), next: items.length === query.limit && last ? String(last.id) : null };
    });

    app.get('/api/items/:id', async (request) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const item = await consoleOf(deps).item(id);
      if (!item) throw noItem(id);
      return item;
    });

    app.get('/api/items/:id/raw', async (request, reply) => {
      const { id } = parse(idParams, request.params, 'path parameter');
      const item = await consoleOf(deps).raw(id);
      if (!item) throw noItem(id);
      if (item.raw === undefined) {
        const why = item.status === 'delivered' ? 'were dropped after delivery' : 'were not kept';
        throw httpError('MAILGATE_ERR_SERVER_GONE', `The raw bytes of item ${id} ${why}.`);
      }
      return reply
        .type('message/rfc822')
        .header('content-disposition', `attachment; filename="item-${id}.eml"`)
        .send(Buffer.from(item.raw.buffer, item.raw.byteOffset, item.raw.byteLength));
    });

    app.get('/api/overview', async () => consoleOf(deps).overview());

    const streams = eventStreams(deps);
    app.get('/api/events', streams.handler);
    // A stream never ends by itself: close them before the server waits for open requests.
    app.addHook('preClose', async () => {
      for (const end of [...streams.open]) end();
    });

    app.post('/api/dlq/replay', async (request) => {
      const { ids } = parse(replayBody, request.body, 'body field');
      const result = await bulkReplay(deps, ids);
      request.log.info(
        { ids: ids.length, queued: result.results.filter((r) => 'status' in r && r.status === 'queued').length },
        'bulk replay',
      );
      return result;
    });
  };
}
