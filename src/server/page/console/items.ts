/// <reference lib="dom" />
/**
 * The Items view: newest first, filters and search in the URL hash (`#/items?state=dead&q=ann`),
 * keyset paging ("Older items"), keyboard navigation (j/k or arrows, Enter, `/`), and rows that
 * arrive or change while it is open (live events re-read the first page).
 */
import type { ItemRow, ItemsPage } from '../../console-types.js';
import { get, url } from './api.js';
import { announce, announceUrgent, byId, clear, empty, errorBox, h, isolate } from './dom.js';
import { isoToLocal, localToIso, plural, when } from './format.js';

const FILTERS = ['q', 'state', 'route', 'adapter', 'since', 'until'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;
const PAGE = 50;

const list = () => byId('items-list');
const older = () => byId<HTMLButtonElement>('items-older');
const field = (name: string) => byId<HTMLInputElement | HTMLSelectElement>('f-' + name);

let filters: Filters = {};
let rows: ItemRow[] = [];
let next: string | null = null;
let selected = -1;
/** Rows that arrived while the list was open: marked until the list is loaded again. */
const fresh = new Set<number>();
let refreshing = false;
/** Bumped by every load: an answer to an older request (other filters) is dropped, never drawn. */
let generation = 0;
let pendingRefresh = false;

function query(extra: Record<string, string | number | undefined> = {}): Record<string, string | number | undefined> {
  return { ...filters, limit: PAGE, ...extra };
}

function rowView(r: ItemRow, isFresh: boolean): HTMLLIElement {
  const who =
    r.sender_name && r.sender ? `${isolate(r.sender_name)} <${isolate(r.sender)}>` : (r.sender ?? r.sender_name ?? '(unknown sender)');
  const link = h('a', { class: 'entry', href: '#/items/' + r.id, 'data-id': r.id }, [
    h('span', { class: 'state ' + r.state, text: r.state }),
    h('span', { class: 'subject', text: r.subject ?? '(no subject)' }),
    h('span', { class: 'who', text: who }),
    h('span', { class: 'when', title: r.received_at, text: when(r.timestamp ?? r.received_at) }),
    h('span', { class: 'meta' }, [
      `#${r.id} · ${r.route} · ${r.origin.label}`,
      r.last_error_code ? h('span', { class: 'code', text: ' · ' + r.last_error_code }) : null,
    ]),
  ]);
  return h('li', { class: isFresh ? 'fresh' : '', 'data-id': r.id }, [link]);
}

/** Redraws the rows; a row that had the focus keeps it (a live update must not throw the keyboard user out). */
function render(): void {
  const hadFocus = list().contains(document.activeElement);
  if (!rows.length) {
    clear(list(), empty(Object.keys(filters).length ? 'No item matches these filters.' : 'No items yet.'));
  } else {
    const ol = h('ol', { class: 'rows', 'aria-label': 'Items, newest first' });
    rows.forEach((r) => ol.appendChild(rowView(r, fresh.has(r.id))));
    clear(list(), ol);
  }
  older().hidden = next === null;
  select(Math.min(selected, rows.length - 1), hadFocus);
}

function select(i: number, focus: boolean): void {
  const items = list().querySelectorAll<HTMLLIElement>('ol.rows > li');
  items.forEach((li, k) => li.classList.toggle('selected', k === i));
  selected = i;
  if (focus && i >= 0) items[i]?.querySelector<HTMLAnchorElement>('a')?.focus();
}

async function load(): Promise<void> {
  const mine = ++generation;
  clear(list(), empty('Loading…'));
  const res = await get<ItemsPage>(url('items', query()));
  if (mine !== generation) return;
  if (!res.ok) return clear(list(), errorBox(res.error.code, res.error.message));
  rows = res.data.items;
  next = res.data.next;
  selected = -1;
  fresh.clear();
  render();
  announce(`${plural(rows.length, 'item')} shown${next ? ', more are older' : ''}.`);
}

async function loadOlder(): Promise<void> {
  if (next === null) return;
  const mine = generation;
  const res = await get<ItemsPage>(url('items', query({ before: next })));
  if (mine !== generation) return;
  if (!res.ok) return announceUrgent(`${res.error.code}: ${res.error.message}`);
  const first = rows.length;
  rows = rows.concat(res.data.items);
  next = res.data.next;
  render();
  select(first, true);
  announce(`${plural(res.data.items.length, 'older item')} added.`);
}

/** Re-reads the first page after an event: new rows go on top (marked), changed rows update in place. */
export async function refresh(): Promise<void> {
  if (refreshing) {
    pendingRefresh = true;
    return;
  }
  refreshing = true;
  try {
    const mine = generation;
    const res = await get<ItemsPage>(url('items', query()));
    if (mine !== generation || !res.ok) return;
    const known = new Map(rows.map((r) => [r.id, r]));
    const top = rows.length ? Math.max(...rows.map((r) => r.id)) : 0;
    const added = res.data.items.filter((r) => r.id > top);
    for (const r of res.data.items) if (known.has(r.id)) known.set(r.id, r);
    if (!rows.length) next = res.data.next;
    rows = added.concat(rows.map((r) => known.get(r.id) ?? r));
    for (const r of added) fresh.add(r.id);
    if (selected >= 0) selected += added.length;
    render();
    if (added.length) announce(`${plural(added.length, 'new item')}.`);
  } finally {
    refreshing = false;
    if (pendingRefresh) {
      pendingRefresh = false;
      void refresh();
    }
  }
}

function readFields(): Filters {
  const f: Filters = {};
  for (const name of FILTERS) {
    const v = field(name).value.trim();
    if (!v) continue;
    f[name] = name === 'since' || name === 'until' ? localToIso(v) : v;
  }
  return f;
}

function applyFilters(): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(readFields())) if (v) q.set(k, v);
  const s = q.toString();
  location.hash = '#/items' + (s ? '?' + s : '');
}

/** Shows the view for the hash's query; reloads only when the filters changed (or when asked). */
export function showItems(params: URLSearchParams, reload: boolean): void {
  const f: Filters = {};
  for (const name of FILTERS) {
    const v = params.get(name);
    if (v) f[name] = v;
  }
  for (const name of FILTERS) field(name).value = name === 'since' || name === 'until' ? isoToLocal(f[name]) : (f[name] ?? '');
  const changed = JSON.stringify(f) !== JSON.stringify(filters);
  filters = f;
  if (changed || reload || !rows.length) void load();
  else if (selected >= 0) select(selected, true);
}

/** j/k and arrows move, Home/End jump, `/` goes to the search box; Enter follows the focused link by itself. */
function onKey(ev: KeyboardEvent): void {
  if (byId('view-items').hidden || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const t = ev.target as HTMLElement;
  if (t.closest('input, select, textarea')) {
    if (ev.key === 'Escape' && t instanceof HTMLInputElement) t.blur();
    return;
  }
  const n = rows.length;
  const moves: Record<string, number> = { j: 1, ArrowDown: 1, k: -1, ArrowUp: -1 };
  if (ev.key in moves && n) {
    ev.preventDefault();
    select(Math.max(0, Math.min(n - 1, selected + moves[ev.key]!)), true);
  } else if (ev.key === 'Home' && n) select(0, true);
  else if (ev.key === 'End' && n) select(n - 1, true);
  else if (ev.key === '/') {
    ev.preventDefault();
    field('q').focus();
  }
}

export function setupItems(): void {
  byId('f-apply').addEventListener('click', applyFilters);
  byId('f-reset').addEventListener('click', () => {
    for (const name of FILTERS) field(name).value = '';
    applyFilters();
  });
  for (const name of FILTERS) {
    field(name).addEventListener('keydown', (ev) => {
      if ((ev as KeyboardEvent).key === 'Enter') applyFilters();
    });
  }
  field('state').addEventListener('change', applyFilters);
  older().addEventListener('click', () => void loadOlder());
  list().addEventListener('focusin', (ev) => {
    const li = (ev.target as HTMLElement).closest('li');
    if (li) select(Array.prototype.indexOf.call(li.parentElement?.children ?? [], li) as number, false);
  });
  document.addEventListener('keydown', onKey);
}
