/**
 * Comments as the emulator answers them: the stored comment with both `last_modified` (the
 * notes' stored Comment, §5.1) and `updated_at` (the spec's field), and its thread's
 * properties computed with mailgate's preview code, so the preview and the emulator agree.
 */
import type { StoredComment, ThreadProperties } from '../model/index.js';
import { computeThreadProperties } from '../preview/threads.js';
import type { AppContext } from './app.js';

export type AnsweredComment = StoredComment & { updated_at: string };

export function answered(c: StoredComment): AnsweredComment {
  return { ...c, updated_at: c.last_modified };
}

/** The thread's comments ordered by timestamp (then id), and their properties keyed by comment id. */
export function threadOf(
  ctx: AppContext,
  sourceId: string,
  threadId: string,
): { comments: StoredComment[]; properties: Map<string, ThreadProperties> } {
  const comments = ctx.state
    .threadComments(sourceId, threadId)
    .sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { comments, properties: comments.length === 0 ? new Map() : computeThreadProperties(comments) };
}

/** A comment's thread properties as now stored (a comment outside any thread is a thread of one). */
export function threadPropertiesOf(ctx: AppContext, sourceId: string, c: StoredComment): ThreadProperties | undefined {
  if (c.thread_id === undefined) return computeThreadProperties([c]).get(c.id);
  return threadOf(ctx, sourceId, c.thread_id).properties.get(c.id);
}
