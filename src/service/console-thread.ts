/**
 * The thread of an item as a conversation (`thread` of `GET /api/items/:id`): every message the
 * thread index knows for the route's target, oldest first, and for the stored ones nearest this
 * item their subject and the start of what they say (the comment's body, quoted history and
 * signature removed), so the console can show who said what, not only who wrote when.
 */
import type { RouteConfig } from '../config/schema.js';
import type { Comment } from '../model/index.js';
import { routeTarget } from '../pipeline/origin.js';
import { decodeWords } from '../mime/encoded-words.js';
import { documentHeaders, documentText, splitReply } from '../preview/index.js';
import type { CommentView, ThreadMemberView } from '../server/console-types.js';
import type { Store, StoredItem } from '../store/types.js';

/** Thread members listed at most. */
export const MAX_THREAD_MEMBERS = 200;
/** Members around this item whose subject and text are read (one store read each). */
export const MAX_CONVERSATION_MEMBERS = 30;
/** Characters of a member's text shown in the conversation. */
export const CONVERSATION_TEXT_CHARS = 600;

function cut(text: string): string {
  const t = text.trim();
  return t.length > CONVERSATION_TEXT_CHARS ? `${t.slice(0, CONVERSATION_TEXT_CHARS)}…` : t;
}

/** A stored item's subject and what it says: its comment's body when the comment was kept, else the document's text without the quote. */
function said(item: Pick<StoredItem, 'preview' | 'document'>): { subject: string | null; text: string | null } {
  const m = item.preview?.messages[0];
  if (m !== undefined) return { subject: m.subject?.text ?? null, text: m.body.text === undefined ? null : cut(m.body.text) };
  const subject = documentHeaders(item.document).find((h) => h.key === 'subject');
  return {
    subject: subject === undefined ? null : decodeWords(subject.value.trim()),
    text: cut(splitReply(documentText(item.document)).body),
  };
}

export async function threadView(
  store: Store,
  item: Pick<StoredItem, 'route' | 'commentId' | 'preview' | 'document'>,
  route: RouteConfig | undefined,
  comment: CommentView | null,
): Promise<ThreadMemberView[]> {
  const threadId = (comment?.comment as Comment | undefined)?.thread_id;
  if (route === undefined || threadId === undefined) return [];
  const members = ((await store.threadMembers(routeTarget(route), [threadId])).get(threadId) ?? []).slice(0, MAX_THREAD_MEMBERS);
  const items = await store.itemsByComment(
    item.route,
    members.map((m) => m.commentId),
  );
  // The members nearest this one (by position in the thread) get their words read.
  const self = Math.max(
    0,
    members.findIndex((m) => m.commentId === item.commentId),
  );
  const from = Math.max(0, Math.min(self - Math.floor(MAX_CONVERSATION_MEMBERS / 2), members.length - MAX_CONVERSATION_MEMBERS));
  const read = new Map<string, { subject: string | null; text: string | null }>();
  await Promise.all(
    members.slice(from, from + MAX_CONVERSATION_MEMBERS).map(async (m) => {
      const id = items.get(m.commentId);
      const stored = m.commentId === item.commentId ? item : id === undefined ? undefined : await store.getItem(id);
      if (stored !== undefined) read.set(m.commentId, said(stored));
    }),
  );
  return members.map(
    (m): ThreadMemberView => ({
      comment_id: m.commentId,
      timestamp: m.timestamp,
      from: m.from ?? null,
      item_id: items.get(m.commentId) ?? null,
      self: m.commentId === item.commentId,
      subject: read.get(m.commentId)?.subject ?? null,
      text: read.get(m.commentId)?.text ?? null,
    }),
  );
}
