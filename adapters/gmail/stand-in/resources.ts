/**
 * The Gmail resources of one mailbox in the stand-in (developers.google.com/workspace/gmail/api/
 * reference/rest): users.getProfile, labels.list/get/create, messages.list/get/modify/batchModify,
 * history.list, users.watch/stop. Each call is metered first (its quota units; a refusal answers
 * before any work). Error bodies have Google's shape: `{ error: { code, message, errors: [{
 * reason, domain, message }], status } }`.
 */
import type { Mailbox, StoredMessage } from './mailboxes.js';
import { parseQuery } from './mailboxes.js';
import type { Meter } from './meter.js';
import type { Pubsub } from './pubsub.js';

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  500: 'INTERNAL',
};

export function apiError(status: number, reason: string, message: string, headers?: Record<string, string>): Reply {
  return {
    status,
    body: { error: { code: status, message, errors: [{ message, domain: 'global', reason }], status: STATUS[status] ?? 'UNKNOWN' } },
    ...(headers ? { headers } : {}),
  };
}

const UNITS: Record<string, number> = {
  getProfile: 1,
  'labels.list': 1,
  'labels.get': 1,
  'labels.create': 5,
  'messages.list': 5,
  'messages.get': 5,
  'messages.modify': 5,
  'messages.batchModify': 50,
  'history.list': 2,
  watch: 100,
  stop: 50,
};

const MODIFY = 'https://www.googleapis.com/auth/gmail.modify';

export interface CallContext {
  mb: Mailbox;
  meter: Meter;
  scopes: string[];
  pubsub: Pubsub;
}

function methodOf(method: string, rest: string): string | undefined {
  if (method === 'GET' && rest === '/profile') return 'getProfile';
  if (rest === '/labels') return method === 'GET' ? 'labels.list' : 'labels.create';
  if (method === 'GET' && /^\/labels\/[^/]+$/.test(rest)) return 'labels.get';
  if (method === 'GET' && rest === '/messages') return 'messages.list';
  if (method === 'POST' && rest === '/messages/batchModify') return 'messages.batchModify';
  if (method === 'POST' && /^\/messages\/[^/]+\/modify$/.test(rest)) return 'messages.modify';
  if (method === 'GET' && /^\/messages\/[^/]+$/.test(rest)) return 'messages.get';
  if (method === 'GET' && rest === '/history') return 'history.list';
  if (method === 'POST' && rest === '/watch') return 'watch';
  if (method === 'POST' && rest === '/stop') return 'stop';
  return undefined;
}

export function gmailRequest(ctx: CallContext, method: string, rest: string, q: URLSearchParams, body: unknown): Reply {
  const name = methodOf(method, rest);
  if (name === undefined) return apiError(404, 'notFound', `Method not found: ${method} ${rest}`);
  const refused = ctx.meter.admit(UNITS[name]!);
  if (refused !== undefined) return refused;
  const { mb } = ctx;
  if (mb.opts.forbidden) return apiError(400, 'failedPrecondition', 'Mail service not enabled');
  const writes = name === 'labels.create' || name === 'messages.modify' || name === 'messages.batchModify';
  if (writes && !ctx.scopes.includes(MODIFY))
    return apiError(403, 'insufficientPermissions', 'Request had insufficient authentication scopes.');
  const b = (body ?? {}) as Record<string, unknown>;
  switch (name) {
    case 'getProfile':
      return {
        status: 200,
        body: {
          emailAddress: mb.address,
          messagesTotal: mb.messages.size,
          threadsTotal: mb.messages.size,
          historyId: String(mb.historyId),
        },
      };
    case 'labels.list':
      return { status: 200, body: { labels: [...mb.labels.values()] } };
    case 'labels.get': {
      const label = mb.labels.get(decodeURIComponent(rest.split('/')[2]!));
      if (label === undefined) return apiError(404, 'notFound', 'Requested entity was not found.');
      const withIt = [...mb.messages.values()].filter((m) => m.labelIds.has(label.id));
      const unread = withIt.filter((m) => m.labelIds.has('UNREAD')).length;
      return { status: 200, body: { ...label, messagesTotal: withIt.length, messagesUnread: unread } };
    }
    case 'labels.create': {
      if (typeof b['name'] !== 'string' || b['name'] === '') return apiError(400, 'invalidArgument', 'Invalid label name');
      if ([...mb.labels.values()].some((l) => l.name === b['name'])) return apiError(409, 'duplicate', 'Label name exists or conflicts');
      return { status: 200, body: mb.createLabel(b['name']) };
    }
    case 'messages.list':
      return list(mb, q);
    case 'messages.get':
      return get(mb, decodeURIComponent(rest.split('/')[2]!), q.get('format') ?? 'full');
    case 'messages.modify': {
      const m = mb.messages.get(decodeURIComponent(rest.split('/')[2]!));
      if (m === undefined) return apiError(404, 'notFound', 'Requested entity was not found.');
      mb.modify(m, strings(b['addLabelIds']), strings(b['removeLabelIds']));
      return { status: 200, body: { id: m.id, threadId: m.threadId, labelIds: [...m.labelIds] } };
    }
    case 'messages.batchModify': {
      const ids = strings(b['ids']);
      if (ids.length === 0 || ids.length > 1000) return apiError(400, 'invalidArgument', 'ids must hold 1 to 1000 ids');
      // Assumed: an id that does not exist fails the whole call (Google does not document it).
      if (ids.some((id) => !mb.messages.has(id))) return apiError(400, 'invalidArgument', 'Invalid id value');
      for (const id of ids) mb.modify(mb.messages.get(id)!, strings(b['addLabelIds']), strings(b['removeLabelIds']));
      return { status: 204 };
    }
    case 'history.list':
      return history(mb, q);
    case 'watch': {
      const topic = String(b['topicName'] ?? '');
      if (!/^projects\/[^/]+\/topics\/[^/]+$/.test(topic))
        return apiError(400, 'invalidArgument', 'Invalid topicName does not match projects/*/topics/*');
      const expiration = Date.now() + 7 * 86_400_000;
      mb.watch = { topic, labelIds: strings(b['labelIds']), expiration };
      ctx.pubsub.watches += 1;
      return { status: 200, body: { historyId: String(mb.historyId), expiration: String(expiration) } };
    }
    case 'stop':
      delete mb.watch;
      return { status: 204 };
  }
  return apiError(404, 'notFound', 'Method not found');
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

function page<T>(items: T[], q: URLSearchParams, dflt: number, max: number): { items: T[]; next?: string } | Reply {
  const size = Number(q.get('maxResults') ?? dflt);
  if (!Number.isInteger(size) || size < 1) return apiError(400, 'invalidArgument', 'Invalid maxResults');
  const start = q.get('pageToken') === null ? 0 : Number.parseInt(Buffer.from(q.get('pageToken')!, 'base64url').toString(), 10);
  if (!Number.isInteger(start) || start < 0) return apiError(400, 'invalidArgument', 'Invalid pageToken');
  const n = Math.min(size, max);
  const slice = items.slice(start, start + n);
  return { items: slice, ...(start + n < items.length ? { next: Buffer.from(String(start + n)).toString('base64url') } : {}) };
}

function list(mb: Mailbox, q: URLSearchParams): Reply {
  const query = q.get('q') ?? '';
  const unknown = parseQuery(query).unknown;
  if (unknown !== undefined) return apiError(400, 'invalidArgument', `The stand-in does not know the search term ${unknown}`);
  const p = page(mb.list(q.getAll('labelIds'), query), q, 100, 500);
  if ('status' in p) return p;
  return {
    status: 200,
    body: {
      ...(p.items.length > 0 ? { messages: p.items.map((m) => ({ id: m.id, threadId: m.threadId })) } : {}),
      ...(p.next ? { nextPageToken: p.next } : {}),
      resultSizeEstimate: p.items.length,
    },
  };
}

function get(mb: Mailbox, id: string, format: string): Reply {
  const m: StoredMessage | undefined = mb.messages.get(id);
  if (m === undefined) return apiError(404, 'notFound', 'Requested entity was not found.');
  const base = {
    id: m.id,
    threadId: m.threadId,
    labelIds: [...m.labelIds],
    snippet: '',
    sizeEstimate: m.raw.length,
    historyId: String(m.historyId),
    internalDate: String(m.internalDate),
  };
  if (format === 'raw') return { status: 200, body: { ...base, raw: m.raw.toString('base64url') } };
  if (format === 'minimal') return { status: 200, body: base };
  if (format === 'full') return { status: 200, body: { ...base, payload: m.payload } };
  return apiError(400, 'invalidArgument', `Invalid format ${format}`);
}

function history(mb: Mailbox, q: URLSearchParams): Reply {
  const start = Number(q.get('startHistoryId'));
  if (!Number.isInteger(start) || start <= 0) return apiError(400, 'invalidArgument', 'Invalid startHistoryId');
  if (start < mb.oldestKept) return apiError(404, 'notFound', 'Requested entity was not found.');
  const types = q.getAll('historyTypes');
  const label = q.get('labelId');
  const records = mb.history
    .filter((r) => r.id > start)
    .map((r) => ({
      id: String(r.id),
      ...(r.messagesAdded && (types.length === 0 || types.includes('messageAdded')) ? { messagesAdded: r.messagesAdded } : {}),
      ...(r.labelsAdded && (types.length === 0 || types.includes('labelAdded')) ? { labelsAdded: r.labelsAdded } : {}),
      ...(r.labelsRemoved && (types.length === 0 || types.includes('labelRemoved')) ? { labelsRemoved: r.labelsRemoved } : {}),
      messages: [...(r.messagesAdded ?? []), ...(r.labelsAdded ?? []), ...(r.labelsRemoved ?? [])].map((x) => x.message),
    }))
    .filter((r) => label === null || r.messages.some((m) => m.labelIds.includes(label)))
    .filter((r) => 'messagesAdded' in r || 'labelsAdded' in r || 'labelsRemoved' in r);
  const p = page(records, q, 100, 500);
  if ('status' in p) return p;
  return {
    status: 200,
    body: {
      ...(p.items.length > 0 ? { history: p.items } : {}),
      ...(p.next ? { nextPageToken: p.next } : {}),
      historyId: String(mb.historyId),
    },
  };
}
