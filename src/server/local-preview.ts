/**
 * ServerDeps.preview and .threads from the preview module, for a service (or a
 * test) that has no better implementation: parsing on the calling thread, thread
 * properties within the given messages only. A service with a parse worker pool or a
 * thread index should pass its own functions instead.
 */
import { Comment } from '../model/index.js';
import { computeThreadProperties, preview, withThreadPosition, type PreviewOptions } from '../preview/index.js';
import type { PreviewResponse, ServerDeps } from './deps.js';
import { httpError } from './errors.js';

export interface LocalPreviewOptions {
  /** Preview options of a route (its user properties, body and header form); throw a coded error for an unknown route. */
  optionsFor?: (route: string | undefined) => PreviewOptions;
}

export function localPreview(options: LocalPreviewOptions = {}): Pick<ServerDeps, 'preview' | 'threads'> {
  const optionsFor =
    options.optionsFor ??
    ((route: string | undefined): PreviewOptions => {
      if (route !== undefined) throw httpError('MAILGATE_ERR_SERVER_BAD_REQUEST', `Unknown route "${route}".`);
      return {};
    });
  return {
    async preview(raw, request): Promise<PreviewResponse> {
      const r = await preview(raw, optionsFor(request.route));
      const thread = computeThreadProperties([r.comment]).get(r.comment.id) ?? null;
      return { document: r.document, comment: r.comment, thread_properties: thread, warnings: r.warnings };
    },
    async threads(comments) {
      const parsed = comments.map((c, i) => {
        const r = Comment.safeParse(c);
        if (!r.success)
          throw httpError(
            'MAILGATE_ERR_SERVER_BAD_REQUEST',
            `comments[${i}] is not a comment: ${r.error.issues[0]?.message ?? 'invalid'}.`,
          );
        return r.data;
      });
      const props = computeThreadProperties(parsed);
      return parsed.map((c) => {
        const p = props.get(c.id);
        return p === undefined
          ? { comment: c, thread_properties: null }
          : { comment: withThreadPosition(c, p.thread_position), thread_properties: p };
      });
    },
  };
}
