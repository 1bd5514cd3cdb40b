/// <reference lib="dom" />
/**
 * The item view's Thread panel: the thread properties (durations for people, the seconds beside
 * them) and the thread as a conversation — who wrote, when and how long after the message before,
 * the subject where it changes, and the start of what each message says.
 */
import type { ItemDetail, ThreadMemberView } from '../../console-types.js';
import { empty, h, isolate, kv, panel } from './dom.js';
import { duration, when } from './format.js';

/** Thread properties for people: durations in hours and minutes beside the seconds the service counts. */
function threadRows(props: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(props).map(([k, v]): [string, unknown] => {
    if (v === null) return [k, 'null'];
    if (typeof v === 'number' && (k === 'duration' || k === 'response_time') && v >= 60) return [k, `${duration(v)} (${v} s)`];
    if (typeof v === 'number' && (k === 'duration' || k === 'response_time')) return [k, `${v} s`];
    return [k, v];
  });
}

/** One message of the conversation: who, when (and how long after the one before), what it says. */
function turn(m: ThreadMemberView, before: ThreadMemberView | undefined): HTMLElement {
  const gap = before === undefined ? null : (new Date(m.timestamp).getTime() - new Date(before.timestamp).getTime()) / 1000;
  // Mail's own text is isolated (bidi controls stay inside it) before it stands beside other text.
  const who = isolate(m.from ?? '(unknown sender)');
  const head = h('p', { class: 'turn-head' }, [
    m.self || m.item_id === null ? h('strong', { text: who }) : h('a', { href: '#/items/' + m.item_id, text: who }),
    h('span', { class: 'hint', text: ` · ${when(m.timestamp)}${gap !== null && gap >= 0 ? ` · ${duration(gap)} later` : ''}` }),
    m.self
      ? h('span', { class: 'tag', text: ' (this item)' })
      : m.item_id === null
        ? h('span', { class: 'hint', text: ' (not stored on this route)' })
        : null,
  ]);
  return h('li', { class: m.self ? 'turn self' : 'turn', 'aria-current': m.self ? 'true' : null }, [
    head,
    m.subject && m.subject !== before?.subject ? h('p', { class: 'turn-subject', text: isolate(m.subject) }) : null,
    m.text ? h('p', { class: 'turn-text', text: isolate(m.text) }) : null,
  ]);
}

export function threadPanel(d: ItemDetail): HTMLElement {
  const props = d.comment?.thread_properties as Record<string, unknown> | null | undefined;
  const members = d.thread.length
    ? h(
        'ol',
        { class: 'thread-list conversation', 'aria-label': 'The conversation, oldest first' },
        d.thread.map((m, i) => turn(m, d.thread[i - 1])),
      )
    : empty('No thread known.');
  const rows = props && typeof props === 'object' ? kv(threadRows(props)) : null;
  return panel('Thread', rows ?? empty('(thread properties not computed)'), members);
}
