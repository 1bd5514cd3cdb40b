/// <reference lib="dom" />
/**
 * The Item view (`#/items/<id>`): the comment with its quoted history and signature marked,
 * properties, thread properties and the thread as a conversation, predictions, where it came
 * from (with a pushed message's envelope), the exact document sent, the raw message's headers,
 * parts and attachments, warnings and the delivery history.
 */
import type { AttemptView, BodySpan, CommentView, ItemDetail, MimePartView, PredictionView, RawSummary } from '../../console-types.js';
import { download, get, url } from './api.js';
import { announce, announceUrgent, byId, clear, empty, errorBox, h, isolate, kv, panel, text } from './dom.js';
import { bytes, duration, when } from './format.js';
import { originPanel } from './origin.js';
import { threadPanel } from './thread.js';

interface Message {
  from?: string;
  to?: string[];
  cc?: string[];
  bcc?: string[];
  subject?: { text?: string };
  sent_at?: string;
}
interface Comment {
  id?: string;
  timestamp?: string;
  thread_id?: string;
  messages?: Message[];
  user_properties?: Record<string, unknown>;
}

const body = () => byId('item-body');
let shown = 0;

function bodyView(view: CommentView): HTMLElement {
  const box = h('div', { class: 'msg' });
  const spans: BodySpan[] = view.spans.length ? view.spans : [{ kind: 'text', start: 0, end: view.body_text.length }];
  for (const s of spans) {
    const t = view.body_text.slice(s.start, s.end);
    if (!t.trim()) continue;
    if (s.kind === 'quote')
      box.appendChild(
        h('div', { class: 'quoted' }, [h('p', { class: 'mark', text: 'Quoted history (removed)' }), h('div', { class: 'quote', text: t })]),
      );
    else if (s.kind === 'signature')
      box.appendChild(h('div', { class: 'sig' }, [h('h5', { text: 'Signature (moved out of the body)' }), h('pre', { text: t })]));
    else box.appendChild(h('div', { class: 'body', text: t }));
  }
  if (!box.childNodes.length) box.appendChild(empty('(empty body)'));
  return box;
}

function commentPanel(view: CommentView | null): HTMLElement {
  if (!view) return panel('Comment', empty('This message never parsed: there is no comment.'));
  const c = (view.comment ?? {}) as Comment;
  const m = c.messages?.[0] ?? {};
  return panel(
    'Comment',
    kv([
      ['From', m.from],
      ['To', m.to?.map(isolate).join(', ')],
      ['Cc', m.cc?.map(isolate).join(', ')],
      ['Bcc', m.bcc?.map(isolate).join(', ')],
      ['Sent at', m.sent_at],
      ['Comment id', c.id],
      ['Thread id', c.thread_id],
    ]),
    bodyView(view),
  );
}

function propertiesPanel(view: CommentView | null): HTMLElement {
  const props = ((view?.comment ?? {}) as Comment).user_properties ?? {};
  const generated = new Set(view?.generated_properties ?? []);
  const keys = Object.keys(props).sort();
  if (!keys.length) return panel('User properties', empty('(none)'));
  return panel(
    'User properties',
    table(
      ['Property', 'Value', 'From'],
      keys.map((k) => [k, text(props[k]), generated.has(k) || generated.has(k.replace(/^(string|number):/, '')) ? 'generated' : 'client']),
      ['name', '', 'tag'],
    ),
  );
}

/** `classes`: per column, e.g. `name` (wraps between words only) or `tag` (never wraps). */
function table(head: string[], rows: string[][], classes: string[] = []): HTMLTableElement {
  const top = h(
    'tr',
    {},
    head.map((c) => h('th', { scope: 'col', text: c })),
  );
  const body = rows.map((r) =>
    h(
      'tr',
      {},
      r.map((c, i) => h('td', { class: classes[i] || null, text: c })),
    ),
  );
  return h('table', {}, [h('thead', {}, [top]), h('tbody', {}, body)]);
}

function labelRow(p: unknown): string[] {
  if (p && typeof p === 'object' && 'probability' in p) {
    const l = p as { name?: unknown; probability?: unknown; sentiment?: unknown };
    const name = Array.isArray(l.name) ? l.name.map(String).join(' > ') : text(l.name);
    const prob = typeof l.probability === 'number' ? l.probability.toFixed(3) : text(l.probability);
    return [name, prob, l.sentiment === undefined ? '' : text(l.sentiment)];
  }
  return [text(p), '', ''];
}

function predictionsPanel(list: PredictionView[] | null): HTMLElement | null {
  if (list === null) return null;
  if (!list.length) return panel('Predictions', empty('No predictions yet.'));
  return panel(
    'Predictions',
    ...list.map((p) =>
      h('div', {}, [
        h('p', { class: 'tag', text: `${when(p.created_at)}${p.model ? ` · model version ${p.model.version}` : ''}` }),
        p.predictions.length
          ? table(['Label', 'Probability', 'Sentiment'], p.predictions.map(labelRow))
          : empty('No label above threshold.'),
      ]),
    ),
  );
}

function historyPanel(attempts: AttemptView[]): HTMLElement {
  if (!attempts.length) return panel('Delivery history', empty('No attempt yet.'));
  return panel(
    'Delivery history',
    table(
      ['When', 'Outcome', 'Code', 'Detail'],
      attempts.map((a) => [
        when(a.at),
        a.outcome,
        a.code ?? '',
        (a.message ?? '') + (a.delay_ms === null ? '' : ` (next try in ${duration(a.delay_ms / 1000)})`),
      ]),
    ),
  );
}

function partsTree(p: MimePartView): HTMLElement {
  const bits = [p.content_type, p.charset, p.transfer_encoding, p.disposition, p.filename, p.size === undefined ? '' : bytes(p.size)];
  return h('li', {}, [
    h('span', { text: `${p.part || '(top)'}: ${bits.filter(Boolean).join(' · ')}` }),
    p.children?.length ? h('ul', {}, p.children.map(partsTree)) : null,
  ]);
}

function rawPanel(id: number, raw: RawSummary): HTMLElement {
  const status = raw.kept
    ? `Original kept (${bytes(raw.bytes)}).`
    : raw.reason === 'dropped_after_delivery'
      ? 'Original bytes dropped after delivery; headers from the stored document.'
      : 'Original bytes never stored.';
  const btn = raw.kept
    ? h('button', {
        type: 'button',
        class: 'small',
        text: 'Download .eml',
        onclick: () => void download(url(`items/${id}/raw`), `item-${id}.eml`).then((e) => e && announceUrgent(`${e.code}: ${e.message}`)),
      })
    : null;
  return panel(
    'Raw message',
    h('p', { class: 'row' }, [status, btn]),
    h('h3', { text: 'Headers' }),
    raw.headers.length
      ? table(
          ['Name', 'Value'],
          raw.headers.map((x) => [x.name, x.value]),
          ['hname', ''],
        )
      : empty('(none)'),
    h('h3', { text: 'Parts' }),
    raw.parts ? h('ul', { class: 'thread-list' }, [partsTree(raw.parts)]) : empty('(structure not kept)'),
    h('h3', { text: 'Attachments' }),
    raw.attachments.length
      ? table(
          ['Name', 'Type', 'Size'],
          raw.attachments.map((a) => [a.name ?? '(unnamed)', a.content_type, bytes(a.size)]),
        )
      : empty('(none)'),
  );
}

function documentPanel(doc: unknown, cut: ItemDetail['document_cut']): HTMLElement {
  const pre = h('pre', { class: 'json', tabindex: '0', 'aria-label': 'JSON document', text: JSON.stringify(doc, null, 2) });
  const note = cut ? h('p', { class: 'hint', text: `${cut.field} shown cut to ${cut.shown_chars} of its ${cut.chars} characters.` }) : null;
  return panel('Document sent', note, pre);
}

function render(d: ItemDetail): void {
  const it = d.item;
  const notes: HTMLElement[] = [];
  if (d.error) notes.push(errorBox(d.error.code, d.error.message));
  if (d.warnings.length)
    notes.push(
      h(
        'ul',
        { class: 'warnings', 'aria-label': 'Warnings' },
        d.warnings.map((w) => h('li', {}, [h('code', { text: w.code }), ' ' + w.message])),
      ),
    );
  clear(
    body(),
    h('h1', { id: 'item-title', text: it.subject ?? '(no subject)' }),
    h('p', { class: 'row' }, [
      h('span', { class: 'state ' + it.state, text: it.state }),
      h('span', { class: 'hint', text: `#${it.id} · route ${it.route} · ${it.origin.label} · received ${when(it.received_at)}` }),
    ]),
    ...notes,
    h('div', { class: 'detail' }, [
      h('div', {}, [commentPanel(d.comment), threadPanel(d), predictionsPanel(d.predictions), historyPanel(d.attempts)]),
      h('div', {}, [propertiesPanel(d.comment), originPanel(d), documentPanel(d.document, d.document_cut), rawPanel(it.id, d.raw)]),
    ]),
  );
}

/** `quiet`: a live refresh — no "Loading…", the focus and the scroll position stay, nothing is announced. */
export async function showItem(id: number, quiet = false): Promise<void> {
  shown = id;
  if (!quiet) clear(body(), h('h1', { id: 'item-title', text: `Item #${id}` }), empty('Loading…'));
  const res = await get<ItemDetail>(url(`items/${id}`));
  if (shown !== id) return;
  if (!res.ok) {
    if (!quiet) clear(body(), h('h1', { id: 'item-title', text: `Item #${id}` }), errorBox(res.error.code, res.error.message));
    return;
  }
  const focused = quiet && body().contains(document.activeElement) ? document.activeElement : null;
  const y = window.scrollY;
  render(res.data);
  byId('item-title').setAttribute('tabindex', '-1');
  if (quiet) {
    window.scrollTo(0, y);
    // The old node is gone: put the focus on the same control of the new rendering, else on the title.
    if (focused) (sameControl(focused) ?? byId('item-title')).focus();
    return;
  }
  byId('item-title').focus();
  announce(`Item ${id} opened.`);
}

function sameControl(old: Element): HTMLElement | null {
  const label = old.getAttribute('aria-label') ?? old.textContent ?? '';
  const all = body().querySelectorAll<HTMLElement>(old.tagName.toLowerCase());
  for (let i = 0; i < all.length; i++) {
    const e = all[i]!;
    if ((e.getAttribute('aria-label') ?? e.textContent ?? '') === label) return e;
  }
  return null;
}

/** Live events: re-read the item on display when it changed. */
export function itemChanged(id: number): void {
  if (!byId('view-item').hidden && id === shown) void showItem(id, true);
}
