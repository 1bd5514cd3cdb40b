/**
 * Stored comments: get one (with its thread properties), delete some, list threads by id.
 * Thread properties are computed with mailgate's preview code, so the preview and the
 * emulator agree.
 */
import type { ThreadProperties } from '../../model/index.js';
import type { AppContext, RegisterApi } from '../app.js';
import { badRequest, notFound, queryList } from '../http.js';
import { answered, threadOf } from '../present.js';
import { requireSource } from './lookup.js';

type Params = { project: string; source: string };

export function registerCommentRoutes(register: RegisterApi, ctx: AppContext): void {
  register('GET', '/api/v1/sources/:project/:source/comments/:id', 'comments', (req) => {
    const { project, source: name, id } = req.params as Params & { id: string };
    const source = requireSource(ctx, project, name);
    const comment = ctx.state.comment(source.id, id);
    if (!comment) throw notFound();
    const props = comment.thread_id === undefined ? undefined : threadOf(ctx, source.id, comment.thread_id).properties.get(comment.id);
    return { comment: answered(comment), ...(props ? { thread_properties: props } : {}) };
  });

  register('DELETE', '/api/v1/sources/:project/:source/comments', 'comments', (req) => {
    const { project, source: name } = req.params as Params;
    const source = requireSource(ctx, project, name);
    const ids = queryList((req.query as { id?: unknown }).id);
    if (ids.length === 0) throw badRequest('at least one id query parameter is required');
    const existing = ids.filter((id) => ctx.state.comment(source.id, id) !== undefined);
    if (existing.length > 0) ctx.state.commit({ op: 'comments_delete', source_id: source.id, ids: existing });
    return {};
  });

  register('GET', '/api/v1/sources/:project/:source/threads', 'threads', (req) => {
    const { project, source: name } = req.params as Params;
    const source = requireSource(ctx, project, name);
    const ids = queryList((req.query as { id?: unknown }).id);
    if (ids.length === 0) throw badRequest('at least one id query parameter is required');
    const threads = ids.map((threadId) => {
      const { comments, properties } = threadOf(ctx, source.id, threadId);
      const thread_properties: Record<string, ThreadProperties> = {};
      for (const c of comments) {
        const p = properties.get(c.id);
        if (p) thread_properties[c.uid] = p;
      }
      return { thread_id: threadId, comments: comments.map((c) => c.uid), thread_properties };
    });
    return { threads };
  });
}
