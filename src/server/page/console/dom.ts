/// <reference lib="dom" />
/**
 * Building the console's DOM: elements from tag, attributes and children; text only ever as
 * text nodes or textContent. There is no way here to insert markup, so mail can not run. Text
 * holding bidi controls is isolated (isolate), so an override read from mail cannot reorder
 * anything shown after it.
 */

const BIDI_CONTROL = /\p{Bidi_Control}/u;

/**
 * Text holding a bidi control (U+202E RIGHT-TO-LEFT OVERRIDE, an embedding, an isolate, a mark)
 * wrapped in U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE: the closing isolate
 * ends every embedding and override opened inside it (UAX #9, X6a), so they stay within the
 * value; other text is returned as it is. Values read from mail are isolated one by one before
 * they are joined with other text.
 */
export function isolate(text: string): string {
  return BIDI_CONTROL.test(text) ? `\u2068${text}\u2069` : text;
}

export type AttrValue = string | number | boolean | null | undefined | ((ev: Event) => void);
export type Child = Node | string | null | undefined | false;

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, AttrValue> = {},
  children: Child[] = [],
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (typeof v === 'function') {
      if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), v);
    } else if (k === 'class') e.className = String(v);
    else if (k === 'text') e.textContent = isolate(String(v));
    else if (k === 'href') e.setAttribute('href', safeHref(String(v)));
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === 'string' ? document.createTextNode(isolate(c)) : c);
  }
  return e;
}

/** Links the console makes point into the console (`#/…`); anything else is refused. */
function safeHref(v: string): string {
  return v.startsWith('#/') ? v : '#/items';
}

export function clear(e: HTMLElement, ...children: Child[]): void {
  e.textContent = '';
  for (const c of children) if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(isolate(c)) : c);
}

/** A value as text: strings as they are, anything else as JSON. */
export function text(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}

/** A definition list of the pairs whose value is set. */
export function kv(pairs: Array<[string, unknown]>): HTMLDListElement {
  const dl = h('dl', { class: 'kv' });
  for (const [name, value] of pairs) {
    if (value === undefined || value === null || value === '') continue;
    dl.appendChild(h('dt', { text: name }));
    dl.appendChild(h('dd', { text: text(value) }));
  }
  return dl;
}

export function empty(what: string): HTMLElement {
  return h('p', { class: 'empty', text: what });
}

export function errorBox(code: string, message: string): HTMLElement {
  return h('p', { class: 'error', role: 'alert' }, [h('code', { text: code }), ' ' + message]);
}

/** A titled panel of the item view. */
export function panel(title: string, ...children: Child[]): HTMLElement {
  const id = 'p-' + title.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return h('section', { class: 'panel', 'aria-labelledby': id }, [h('h2', { id, text: title }), ...children]);
}

/** Says what changed to screen readers (and tests) without moving focus: the polite region, where the next notice replaces it. */
export function announce(message: string): void {
  byId('announce').textContent = message;
}

/** Urgent notices waiting for the one before them to be read, oldest first. */
const urgent: string[] = [];
let saying: ReturnType<typeof setTimeout> | undefined;
/** Notices left in the assertive region after they were said (older ones are removed, silently). */
const URGENT_KEPT = 5;

/**
 * Time a screen reader needs to say a notice before the next one may interrupt it: 1 s, plus
 * 60 ms a character (about 170 words a minute), at most 10 s.
 */
function readingMs(message: string): number {
  return Math.min(1_000 + 60 * message.length, 10_000);
}

/**
 * Says what needs the reader now (a route paused or delivering again, a request refused) in the
 * assertive region of its own: routine notices (a new item, rows loaded) go to the polite one and
 * can no longer replace it before a screen reader has read it. Each notice is a node of its own
 * added to the region (only additions are read), so the same text twice is said twice; one
 * arriving while another is being said waits its turn (readingMs) instead of cutting it off.
 */
export function announceUrgent(message: string): void {
  urgent.push(message);
  if (saying === undefined) sayNextUrgent();
}

function sayNextUrgent(): void {
  const message = urgent.shift();
  if (message === undefined) {
    saying = undefined;
    return;
  }
  const region = byId('alert');
  region.appendChild(h('p', { text: message }));
  while (region.childElementCount > URGENT_KEPT) region.firstElementChild?.remove();
  saying = setTimeout(sayNextUrgent, readingMs(message));
}

/** Drops what the assertive region said and what it had still to say (signed out: it concerned the session). */
export function clearUrgent(): void {
  urgent.length = 0;
  clearTimeout(saying);
  saying = undefined;
  clear(byId('alert'));
}
