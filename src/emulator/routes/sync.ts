/**
 * POST /api/v1/sources/<project>/<source>/sync-raw-emails[?no_charge=false]
 * All-or-nothing: the request is validated and every comment built before anything is stored.
 */
import type { AppContext, RegisterApi } from '../app.js';
import { ApiError, badRequest, notFound } from '../http.js';
import { buildComments, upsert } from '../ingest.js';
import { answered, threadPropertiesOf } from '../present.js';
import { parseSyncRequest } from '../validate.js';
import { findSource, isValidName, newSource } from './lookup.js';
import type { SourceRecord } from '../state.js';

function noChargeOf(query: unknown, allow: boolean): boolean {
  const value = (query as { no_charge?: unknown }).no_charge;
  if (value === undefined || value === 'false') return false;
  if (value !== 'true') throw badRequest(`no_charge must be true or false`);
  if (!allow) throw new ApiError(403, 'no_charge requires the billing-no-charge permission.');
  return true;
}

function sourceFor(ctx: AppContext, project: string, name: string): SourceRecord {
  const found = findSource(ctx, project, name);
  if (found) return found;
  if (!ctx.options.autoCreateSources || !isValidName(project, name)) throw notFound();
  const source = newSource(ctx, project, name, {});
  ctx.state.commit({ op: 'source', source });
  return source;
}

export function registerSyncRoutes(register: RegisterApi, ctx: AppContext): void {
  register('POST', '/api/v1/sources/:project/:source/sync-raw-emails', 'sync-raw-emails', (req) => {
    const { project, source: name } = req.params as { project: string; source: string };
    const source = sourceFor(ctx, project, name);
    const noCharge = noChargeOf(req.query, ctx.options.allowNoCharge);
    const request = parseSyncRequest(req.body, ctx.options);
    const now = ctx.options.now();
    const built = buildComments(request.documents, request.override_user_properties, true, now);
    const result = upsert(
      built,
      { id: source.id, comment: (id) => ctx.state.comment(source.id, id), thread: (t) => ctx.state.threadComments(source.id, t) },
      request.override_user_properties,
      now.toISOString(),
    );
    const units = noCharge ? 0 : result.units;
    if (result.changed.length > 0 || units > 0) {
      ctx.state.commit({ op: 'comments', source_id: source.id, comments: result.changed, units });
    }
    if (!request.include_comments) return { ...result.counts };
    const comments =
      ctx.options.commentsShape === 'comment'
        ? result.perDocument.map(answered)
        : result.perDocument.map((c) => ({ comment: answered(c), thread_properties: threadPropertiesOf(ctx, source.id, c) ?? null }));
    return { ...result.counts, comments };
  });
}
