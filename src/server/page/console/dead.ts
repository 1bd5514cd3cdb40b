/// <reference lib="dom" />
/**
 * The Dead letters view (`#/dead`): why each item died, its original bytes, and replay or purge
 * of one or many (checkboxes), each only after a confirmation naming what will happen.
 */
import type { BulkReplayResult, DeadLetterPage, DeadLetterRow, ItemRow, ItemsPage } from '../../console-types.js';
import { del, download, get, post, url, type Result } from './api.js';
import { announce, announceUrgent, byId, clear, empty, errorBox, h, isolate } from './dom.js';
import { plural, when } from './format.js';

const PAGE = 100;
const list = () => byId('dead-list');
let rows: DeadLetterRow[] = [];
/** Subject and sender of the newest dead items (the dead-letter list itself carries neither). */
const about = new Map<number, ItemRow>();
const ABOUT_LIMIT = 500;
let next: number | null = null;
const picked = new Set<number>();
let confirmAction: (() => Promise<void>) | undefined;
let returnFocus: HTMLElement | null = null;

function rowView(r: DeadLetterRow): HTMLLIElement {
  const box = h('input', { type: 'checkbox', id: 'dl-' + r.id, checked: picked.has(r.id), 'aria-label': `Select dead letter ${r.id}` });
  box.addEventListener('change', () => {
    if ((box as HTMLInputElement).checked) picked.add(r.id);
    else picked.delete(r.id);
    sync();
  });
  const acts = h('div', { class: 'acts' }, [
    h('a', { href: '#/items/' + r.id, text: 'Open' }),
    r.hasRaw
      ? h('button', {
          type: 'button',
          class: 'small',
          text: 'Download .eml',
          'aria-label': `Download the original of dead letter ${r.id}`,
          onclick: () =>
            void download(url(`dlq/${r.id}/raw`), `dead-letter-${r.id}.eml`).then((e) => e && announceUrgent(e.code + ': ' + e.message)),
        })
      : null,
    h('button', {
      type: 'button',
      class: 'small',
      text: 'Replay',
      'aria-label': `Replay dead letter ${r.id}`,
      onclick: (ev) => ask('replay', [r.id], ev),
    }),
    h('button', {
      type: 'button',
      class: 'small',
      text: 'Purge',
      'aria-label': `Purge dead letter ${r.id}`,
      onclick: (ev) => ask('purge', [r.id], ev),
    }),
  ]);
  return h('li', { 'data-id': r.id }, [
    h('div', { class: 'dead-row' }, [
      box,
      h('div', {}, [
        summary(about.get(r.id)),
        h('p', { class: 'reason' }, [h('code', { text: r.error.code }), ' ' + r.error.message]),
        h('p', {
          class: 'meta',
          text: `#${r.id} · route ${r.route} · ${r.originLabel} · dead ${when(r.deadAt)} · comment ${r.commentId}`,
        }),
      ]),
      acts,
    ]),
  ]);
}

function summary(item: ItemRow | undefined): HTMLElement | null {
  if (!item) return null;
  const who =
    item.sender_name && item.sender ? `${isolate(item.sender_name)} <${isolate(item.sender)}>` : (item.sender ?? item.sender_name ?? '');
  return h('p', { class: 'about' }, [h('strong', { text: item.subject ?? '(no subject)' }), who ? ' — ' + who : '']);
}

/** One request for the subjects and senders of the dead items shown (the newest 500 at most). */
async function loadAbout(): Promise<void> {
  const res = await get<ItemsPage>(url('items', { state: 'dead', limit: ABOUT_LIMIT }));
  if (!res.ok) return;
  about.clear();
  for (const it of res.data.items) about.set(it.id, it);
}

function sync(): void {
  const n = picked.size;
  byId<HTMLButtonElement>('dead-replay').disabled = n === 0;
  byId<HTMLButtonElement>('dead-purge').disabled = n === 0;
  byId('dead-replay').textContent = n ? `Replay selected (${n})` : 'Replay selected';
  byId('dead-purge').textContent = n ? `Purge selected (${n})` : 'Purge selected';
  const all = byId<HTMLInputElement>('dead-all');
  all.checked = rows.length > 0 && rows.every((r) => picked.has(r.id));
  all.indeterminate = n > 0 && !all.checked;
}

/** What identifies a control across a redraw: its id, else its label. */
function keyOf(e: Element | null): string | null {
  return e ? e.id || e.getAttribute('aria-label') : null;
}
function refocus(key: string | null): boolean {
  if (!key) return false;
  const q = CSS.escape(key);
  const e = document.querySelector<HTMLElement>(`#view-dead [id="${q}"], #view-dead [aria-label="${q}"]`);
  e?.focus();
  return e !== null;
}

/** Redraws the list; the control that had the focus keeps it (live refreshes redraw under the operator's hands). */
function render(): void {
  const active = list().contains(document.activeElement) ? keyOf(document.activeElement) : null;
  for (const id of [...picked]) if (!rows.some((r) => r.id === id)) picked.delete(id);
  if (!rows.length) clear(list(), empty('No dead letters.'));
  else clear(list(), h('ol', { class: 'rows', 'aria-label': 'Dead letters, oldest first' }, rows.map(rowView)));
  byId('dead-more').hidden = next === null;
  sync();
  refocus(active);
}

/** `quiet`: a live refresh, which says nothing (it must not talk over what the operator just did). */
export async function showDead(quiet = false): Promise<void> {
  if (!quiet) clear(list(), empty('Loading…'));
  const [res] = await Promise.all([get<DeadLetterPage>(url('dlq', { limit: PAGE })), loadAbout()]);
  if (!res.ok) return clear(list(), errorBox(res.error.code, res.error.message));
  rows = res.data.items;
  next = res.data.next_after;
  render();
  if (!quiet) announce(`${plural(rows.length, 'dead letter')} shown.`);
}

async function more(): Promise<void> {
  if (next === null) return;
  const res = await get<DeadLetterPage>(url('dlq', { limit: PAGE, after: next }));
  if (!res.ok) return announceUrgent(res.error.code + ': ' + res.error.message);
  rows = rows.concat(res.data.items);
  next = res.data.next_after;
  render();
}

function ask(what: 'replay' | 'purge', ids: number[], ev: Event): void {
  returnFocus = ev.currentTarget as HTMLElement;
  const n = plural(ids.length, 'dead letter');
  byId('dead-confirm-text').textContent =
    what === 'replay'
      ? `Replay ${n} (${ids.map((i) => '#' + i).join(', ')})? Each is parsed again with the current configuration and queued for delivery.`
      : `Purge ${n} (${ids.map((i) => '#' + i).join(', ')})? Their kept original bytes are deleted for good.`;
  byId('dead-confirm-yes').textContent = what === 'replay' ? `Replay ${n}` : `Purge ${n}`;
  confirmAction = () => (what === 'replay' ? replay(ids) : purge(ids));
  byId('dead-confirm').hidden = false;
  byId('dead-confirm-yes').focus();
}

function closeConfirm(): void {
  byId('dead-confirm').hidden = true;
  confirmAction = undefined;
  if (returnFocus && returnFocus.isConnected) returnFocus.focus();
  else if (!refocus(keyOf(returnFocus))) byId('dead-title').focus();
}

/** One id: the per-item endpoint; several: the bulk one. Both answer per id. */
async function replayRequest(ids: number[]): Promise<Result<BulkReplayResult>> {
  if (ids.length > 1) return post<BulkReplayResult>(url('dlq/replay'), { ids });
  const one = await post<{ id: number; status: 'queued' | 'dead' }>(url(`dlq/${ids[0]}/replay`));
  return one.ok ? { ok: true, data: { results: [one.data] } } : one;
}

async function replay(ids: number[]): Promise<void> {
  const res = await replayRequest(ids);
  if (!res.ok) return announceUrgent(`Replay failed: ${res.error.code}: ${res.error.message}`);
  const queued = res.data.results.filter((r) => 'status' in r && r.status === 'queued').length;
  const failed = res.data.results.filter((r) => 'error' in r || r.status === 'dead');
  const detail = failed.map((r) => `#${r.id} ${'error' in r ? r.error.code : 'still dead'}`).join(', ');
  await showDead(true);
  announce(`${plural(queued, 'item')} queued again.${detail ? ' Not queued: ' + detail + '.' : ''}`);
}

async function purge(ids: number[]): Promise<void> {
  const res = await del<{ purged: number }>(url('dlq', { ids: ids.join(',') }));
  if (!res.ok) return announceUrgent(`Purge failed: ${res.error.code}: ${res.error.message}`);
  await showDead(true);
  announce(`${plural(res.data.purged, 'dead letter')} purged.`);
}

export function setupDead(): void {
  byId('dead-title').setAttribute('tabindex', '-1');
  byId('dead-refresh').addEventListener('click', () => void showDead());
  byId('dead-more').addEventListener('click', () => void more());
  byId('dead-all').addEventListener('change', () => {
    const on = byId<HTMLInputElement>('dead-all').checked;
    for (const r of rows) {
      if (on) picked.add(r.id);
      else picked.delete(r.id);
    }
    render();
  });
  byId('dead-replay').addEventListener('click', (ev) =>
    ask(
      'replay',
      [...picked].sort((a, b) => a - b),
      ev,
    ),
  );
  byId('dead-purge').addEventListener('click', (ev) =>
    ask(
      'purge',
      [...picked].sort((a, b) => a - b),
      ev,
    ),
  );
  byId('dead-confirm-no').addEventListener('click', closeConfirm);
  byId('dead-confirm').addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape') {
      ev.stopPropagation();
      closeConfirm();
    }
  });
  byId('dead-confirm-yes').addEventListener('click', () => {
    const run = confirmAction;
    closeConfirm();
    if (run) void run();
  });
}
