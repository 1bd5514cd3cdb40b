/**
 * The store's thread index as comments the thread computation takes: what a stored item's
 * preview needs to show its thread across everything ingested for its target, not just itself.
 */
import type { Comment, ThreadProperties } from '../model/index.js';
import { withThreadPosition } from '../preview/comment.js';
import { computeThreadProperties } from '../preview/threads.js';
import type { Store, ThreadEntry } from '../store/types.js';

/** A thread index entry as a comment with just what thread properties read: id, time, thread, people. */
function entryComment(e: ThreadEntry): Comment {
  const message: Comment['messages'][number] = { body: { text: '' }, to: e.participants };
  if (e.from !== undefined) message.from = e.from;
  return { id: e.commentId, timestamp: e.timestamp, thread_id: e.threadId, messages: [message], user_properties: {} };
}

/**
 * The comment's thread properties over the indexed members of its thread in `source` (the
 * comment itself counted once, as given), and the comment with its `Position in Thread`.
 */
export async function threadInIndex(
  store: Store,
  source: string,
  comment: Comment,
): Promise<{ comment: Comment; thread: ThreadProperties | null }> {
  const members =
    comment.thread_id === undefined ? [] : ((await store.threadMembers(source, [comment.thread_id])).get(comment.thread_id) ?? []);
  const all = [...members.filter((e) => e.commentId !== comment.id).map(entryComment), comment];
  const thread = computeThreadProperties(all).get(comment.id) ?? null;
  return { comment: thread === null ? comment : withThreadPosition(comment, thread.thread_position), thread };
}
