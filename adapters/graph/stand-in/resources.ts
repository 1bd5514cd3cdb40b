/**
 * The mailbox resources of the stand-in: users, mail folders (by id or well-known name, child
 * folders), messages (JSON with `$select`/`$expand=attachments`, MIME via `$value`), the
 * messages delta function, updates (`isRead`, `categories`) and moves. Errors have Graph's
 * shape `{ error: { code, message, innerError } }`.
 */
import { randomUUID } from 'node:crypto';
import { decodeToken, deltaPage, resumeState } from './delta.js';
import type { Folder, Mailbox, Tenant } from './mailboxes.js';
import { attachmentResources, messageResource, renderMime } from './message.js';

export interface GraphRequest {
  method: string;
  /** Path below the version, e.g. `/users/a@b/mailFolders/inbox/messages/delta`. */
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: unknown;
}

export interface GraphReply {
  status: number;
  headers?: Record<string, string>;
  /** JSON unless a Buffer. */
  body?: unknown;
}

export function graphError(status: number, code: string, message: string, headers?: Record<string, string>): GraphReply {
  const now = new Date().toISOString();
  return {
    status,
    ...(headers ? { headers } : {}),
    body: { error: { code, message, innerError: { date: now, 'request-id': randomUUID(), 'client-request-id': randomUUID() } } },
  };
}

export interface Preferences {
  maxPageSize?: number;
  immutableId: boolean;
  bodyType: 'text' | 'html';
}

export function preferences(prefer: string | undefined): Preferences {
  const p = prefer ?? '';
  const size = /odata\.maxpagesize=(\d+)/i.exec(p);
  return {
    ...(size ? { maxPageSize: Number(size[1]) } : {}),
    immutableId: /IdType="ImmutableId"/i.test(p),
    bodyType: /outlook\.body-content-type="?text"?/i.test(p) ? 'text' : 'html',
  };
}

const list = (v: string | null): string[] | undefined =>
  v === null
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** `$expand=attachments($select=name,size)` → the nested select (or [] when expanded without one). */
function expandAttachments(v: string | null): string[] | undefined | 'all' {
  if (v === null) return undefined;
  const m = /^attachments(?:\(\$select=([^)]*)\))?$/i.exec(v.trim());
  if (!m) return undefined;
  return m[1] === undefined ? 'all' : list(m[1]);
}

const notFoundItem = () => graphError(404, 'ErrorItemNotFound', 'The specified object was not found in the store.');

function folderResource(t: Tenant, mb: Mailbox, f: Folder): Record<string, unknown> {
  return {
    id: f.id,
    displayName: f.displayName,
    parentFolderId: f.parentId ?? null,
    childFolderCount: t.children(mb, f).length,
    unreadItemCount: [...f.messages.values()].filter((m) => !m.isRead).length,
    totalItemCount: f.messages.size,
    isHidden: false,
  };
}

/** Handles one request for mailbox `mb` (the caller resolved `/users/{u}` and did the accounting). */
export function mailboxRequest(t: Tenant, mb: Mailbox, rest: string[], req: GraphRequest, base: string): GraphReply {
  const prefs = preferences(req.headers['prefer']);
  const [a, b, c, d, e] = rest;
  if (a === undefined && req.method === 'GET') return { status: 200, body: { id: mb.id, userPrincipalName: mb.upn, mail: mb.upn } };
  if (a === 'mailFolders' && b !== undefined) {
    const f = t.folder(mb, b);
    if (f === undefined) return graphError(404, 'ErrorInvalidIdMalformed', 'Id is malformed.');
    if (c === undefined && req.method === 'GET') return { status: 200, body: folderResource(t, mb, f) };
    if (c === 'childFolders' && d === undefined && req.method === 'GET')
      return { status: 200, body: { value: t.children(mb, f).map((x) => folderResource(t, mb, x)) } };
    if (c === 'messages' && d === 'delta' && e === undefined && req.method === 'GET') return delta(t, mb, f, req, prefs, base);
    if (c === 'messages' && d !== undefined) return message(t, mb, d, e, req, prefs);
  }
  if (a === 'messages' && b !== undefined) return message(t, mb, b, c, req, prefs);
  return graphError(400, 'BadRequest', `Resource not found for the segment '${a ?? ''}'.`);
}

function delta(t: Tenant, mb: Mailbox, f: Folder, req: GraphRequest, prefs: Preferences, base: string): GraphReply {
  const skip = req.query.get('$skiptoken');
  const dtok = req.query.get('$deltatoken');
  const token = skip ?? dtok;
  let state = token === null ? undefined : decodeToken(token);
  if (token !== null && (state === undefined || state.e !== f.epoch)) {
    return f.expiredAs === 'syncStateNotFound'
      ? graphError(400, 'syncStateNotFound', 'The sync state generation is not found. Restart the synchronization.')
      : graphError(410, 'SyncStateInvalid', 'The sync state is no longer valid; restart the synchronization.', {
          location: `${base}/users/${mb.id}/mailFolders/${f.id}/messages/delta`,
        });
  }
  if (state !== undefined) state = resumeState(state, dtok !== null, t.seq);
  const pageSize = Math.min(prefs.maxPageSize ?? 10, 1000);
  const select = list(req.query.get('$select'));
  const changeType = req.query.get('changeType') ?? undefined;
  const body = deltaPage({
    mailbox: mb,
    folder: f,
    state,
    ...(select ? { select } : {}),
    ...(changeType ? { changeType } : {}),
    pageSize,
    bodyType: prefs.bodyType,
    seq: t.seq,
    link: `${base}/users/${mb.id}/mailFolders/${f.id}/messages/delta`,
  });
  return { status: 200, headers: { 'preference-applied': `odata.maxpagesize=${pageSize}` }, body };
}

function message(t: Tenant, mb: Mailbox, id: string, action: string | undefined, req: GraphRequest, prefs: Preferences): GraphReply {
  const found = t.locate(mb, decodeURIComponent(id));
  if (found === undefined) return notFoundItem();
  const { folder, message: m } = found;
  if (action === '$value' && req.method === 'GET')
    return { status: 200, headers: { 'content-type': 'message/rfc822' }, body: renderMime(m) };
  if (action === 'move' && req.method === 'POST') {
    const dest = t.folder(mb, String((req.body as { destinationId?: unknown } | undefined)?.destinationId ?? ''));
    if (dest === undefined) return graphError(400, 'ErrorInvalidIdMalformed', 'destinationId is not a folder.');
    if (dest !== folder) t.move(mb, folder, dest, m);
    return { status: 201, body: messageResource(m, dest.id, { bodyType: prefs.bodyType }) };
  }
  if (action !== undefined) return graphError(400, 'BadRequest', `Unsupported segment '${action}'.`);
  if (req.method === 'PATCH') {
    const patch = (req.body ?? {}) as { isRead?: unknown; categories?: unknown };
    if (typeof patch.isRead === 'boolean') m.isRead = patch.isRead;
    if (Array.isArray(patch.categories)) m.categories = patch.categories.map(String);
    t.touch(mb, folder, m);
    return { status: 200, body: messageResource(m, folder.id, { bodyType: prefs.bodyType }) };
  }
  if (req.method !== 'GET') return graphError(405, 'MethodNotAllowed', `${req.method} is not allowed here.`);
  const select = list(req.query.get('$select'));
  const body = messageResource(m, folder.id, { ...(select ? { select } : {}), bodyType: prefs.bodyType });
  const expand = expandAttachments(req.query.get('$expand'));
  if (expand !== undefined) body['attachments'] = attachmentResources(m, expand === 'all' ? undefined : expand);
  return { status: 200, body };
}
