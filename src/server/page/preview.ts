/// <reference lib="dom" />
/**
 * The preview page's script, run by the browser as an ES module (GET /preview/app.js): no
 * imports, so it needs no bundler. Message content reaches the DOM through textContent and
 * text nodes only — never innerHTML — so mail can not run.
 */

/** Only what the page reads of the preview API's answers; every field may be absent. */
interface ApiError {
  code: string;
  message: string;
}
type Result<T> = { ok: true; data: T } | { ok: false; error: ApiError };
type Properties = Record<string, unknown>;
interface PreviewMessage {
  from?: string;
  to?: string | string[];
  cc?: string | string[];
  bcc?: string | string[];
  subject?: { text?: string };
  sent_at?: string;
  language?: string;
  body?: { text?: string };
  signature?: { text?: string };
}
interface Attachment {
  name: string;
  content_type: string;
  size: number;
}
interface PreviewComment {
  id?: string;
  timestamp?: string;
  thread_id?: string;
  messages?: PreviewMessage[];
  user_properties?: Properties;
  attachments?: Attachment[];
}
interface PreviewData {
  document?: { user_properties?: Properties };
  comment?: PreviewComment;
  thread_properties?: Properties | null;
  warnings?: ApiError[];
}
interface ThreadView {
  comment: PreviewComment;
  thread_properties: Properties | null;
}
/** POST /api/preview/file: the messages of one file, each a preview or the reason it has none. */
interface FileAnswer {
  kind: string | null;
  messages: Array<(PreviewData & { index: number }) | { index: number; error: ApiError }>;
  more: boolean;
}
interface Item {
  name: string;
  /** A file (read as the CLI reads files: sniffed, an mbox split, a .msg converted), else pasted text (one message). */
  file: boolean;
  bytes(): BodyInit | Promise<BodyInit>;
}
/** One message to show: where it came from and its preview (or the refusal). */
interface Shown {
  label: string;
  res: Result<PreviewData>;
  /** Not a message: a line about the file (the messages left unread). */
  note?: string;
}
type UpdateCard = (t: ThreadView, scope: string) => void;

type AttrValue = string | number | boolean | null | undefined | ((ev: Event) => void);
type Child = Node | string | null | undefined | false;

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`the page has no #${id}`);
  return e as T;
}

const auth = document.documentElement.getAttribute('data-auth');
const results = byId('results');
const statusLine = byId('status');
const keyInput = byId<HTMLInputElement>('key');
const routeInput = byId<HTMLInputElement>('route');
const paste = byId<HTMLTextAreaElement>('paste');
const files = byId<HTMLInputElement>('files');
const drop = byId('drop');
let batch = 0;
/** Comments one POST /api/preview/threads takes (the server's MAX_THREAD_COMMENTS). */
const MAX_THREAD_COMMENTS = 1000;

/**
 * Text holding a bidi control wrapped in FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE, so an
 * override read from mail stays inside its value (as the console's dom.ts `isolate`).
 */
function isolate(text: string): string {
  return /\p{Bidi_Control}/u.test(text) ? `\u2068${text}\u2069` : text;
}

function h<K extends keyof HTMLElementTagNameMap>(
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
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === 'string' ? document.createTextNode(isolate(c)) : c);
  }
  return e;
}
function say(text: string): void {
  statusLine.textContent = text;
}
function text(v: unknown): string {
  return v === null || v === undefined ? '' : typeof v === 'string' ? v : (JSON.stringify(v) ?? '');
}

function setupAuth(): void {
  const note = byId('auth-note');
  if (auth !== 'key') byId('key-row').hidden = true;
  if (auth === 'disabled') {
    note.hidden = false;
    note.textContent = 'Previews need the admin API, which is disabled on this server: set server.api_keys in mailgate.yaml.';
  }
}

function query(): string {
  const r = routeInput.value.trim();
  return r ? '?route=' + encodeURIComponent(r) : '';
}
function headers(type: string): Record<string, string> {
  const hd: Record<string, string> = { 'Content-Type': type, Accept: 'application/json' };
  const k = keyInput.value.trim();
  if (auth === 'key' && k) hd['Authorization'] = 'Bearer ' + k;
  return hd;
}
async function post<T>(path: string, type: string, body: BodyInit): Promise<Result<T>> {
  let res: Response;
  try {
    res = await fetch(path, { method: 'POST', headers: headers(type), body, credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    return { ok: false, error: { code: 'NETWORK', message: String((err instanceof Error && err.message) || err) } };
  }
  const t = await res.text();
  let data: { error?: ApiError };
  try {
    data = JSON.parse(t) as { error?: ApiError };
  } catch {
    data = { error: { code: 'HTTP_' + res.status, message: t.slice(0, 500) } };
  }
  if (res.status === 401) keyInput.focus();
  return res.ok
    ? { ok: true, data: data as T }
    : { ok: false, error: data.error || { code: 'HTTP_' + res.status, message: res.statusText } };
}

function kv(pairs: Array<[string, unknown]>): HTMLDListElement {
  const dl = h('dl', { class: 'kv' });
  for (const [name, value] of pairs) {
    if (value === undefined || value === null || value === '') continue;
    dl.appendChild(h('dt', { text: name }));
    dl.appendChild(h('dd', { text: text(value) }));
  }
  return dl;
}
function list(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v.join(', ') : v;
}

function renderMessage(m: PreviewMessage, i: number, count: number): HTMLElement {
  const body = m.body && m.body.text;
  const sig = m.signature && m.signature.text;
  return h('div', { class: 'msg' }, [
    count > 1 ? h('h4', { text: 'Message ' + (i + 1) + ' of ' + count }) : null,
    kv([
      ['From', m.from],
      ['To', list(m.to)],
      ['Cc', list(m.cc)],
      ['Bcc', list(m.bcc)],
      ['Subject', m.subject && m.subject.text],
      ['Sent at', m.sent_at],
      ['Language', m.language],
    ]),
    body ? h('div', { class: 'body', text: body }) : h('p', { class: 'empty', text: '(empty body)' }),
    sig ? h('div', { class: 'sig' }, [h('h5', { text: 'Signature (removed from the body)' }), h('pre', { text: sig })]) : null,
  ]);
}

function renderProperties(box: HTMLElement, comment: PreviewComment, doc: PreviewData['document']): void {
  box.textContent = '';
  box.appendChild(propertiesTable(comment, doc));
}
function propertiesTable(comment: PreviewComment, doc: PreviewData['document']): HTMLElement {
  const props = comment.user_properties || {};
  const client = (doc && doc.user_properties) || {};
  const keys = Object.keys(props).sort();
  if (!keys.length) return h('p', { class: 'empty', text: '(none)' });
  return h('table', {}, [
    h('thead', {}, [h('tr', {}, [h('th', { text: 'Property' }), h('th', { text: 'Value' }), h('th', { text: 'From' })])]),
    h(
      'tbody',
      {},
      keys.map((k) =>
        h('tr', {}, [
          h('td', { class: 'name', text: k }),
          h('td', { text: text(props[k]) }),
          h('td', { class: 'tag', text: Object.prototype.hasOwnProperty.call(client, k) ? 'client' : 'generated' }),
        ]),
      ),
    ),
  ]);
}

/** A span of seconds for people, the seconds beside it: `1 h 30 min (5400 s)`; `45 s`. */
function seconds(v: number): string {
  if (v < 60) return v + ' s';
  const d = Math.floor(v / 86400);
  const hr = Math.floor((v % 86400) / 3600);
  const min = Math.floor((v % 3600) / 60);
  const parts = d ? [d + ' d', hr ? hr + ' h' : ''] : hr ? [hr + ' h', min ? min + ' min' : ''] : [min + ' min'];
  return parts.filter(Boolean).join(' ') + ' (' + v + ' s)';
}

function renderThread(box: HTMLElement, props: Properties | null | undefined, scope: string): void {
  box.textContent = '';
  if (!props || typeof props !== 'object') {
    box.appendChild(h('p', { class: 'empty', text: '(not computed)' }));
    return;
  }
  box.appendChild(h('p', { class: 'tag', text: scope }));
  box.appendChild(
    kv(
      Object.keys(props).map((k): [string, unknown] => {
        const v = props[k];
        if (v === null) return [k, 'null'];
        return [k, typeof v === 'number' && (k === 'duration' || k === 'response_time') ? seconds(v) : v];
      }),
    ),
  );
}

function renderAttachments(attachments: Attachment[] | undefined): HTMLElement {
  if (!attachments || !attachments.length) return h('p', { class: 'empty', text: '(none)' });
  return h(
    'ul',
    {},
    attachments.map((a) => h('li', { text: a.name + ' — ' + a.content_type + ', ' + a.size + ' bytes' })),
  );
}

function selectText(node: Node): void {
  const r = document.createRange();
  r.selectNodeContents(node);
  const s = getSelection();
  if (!s) return;
  s.removeAllRanges();
  s.addRange(r);
}
function copyButton(pre: HTMLElement): HTMLButtonElement {
  const onclick = (ev: Event): void => {
    const btn = ev.currentTarget as HTMLButtonElement;
    const done = (): void => {
      btn.textContent = 'Copied';
      setTimeout(() => {
        btn.textContent = 'Copy JSON';
      }, 1500);
    };
    // Older or insecure-context browsers have no clipboard API: select the text instead.
    if (navigator.clipboard) navigator.clipboard.writeText(pre.textContent ?? '').then(done, () => selectText(pre));
    else selectText(pre);
  };
  return h('button', { type: 'button', class: 'small', onclick }, ['Copy JSON']);
}

function errorCard(id: string, name: string, error: ApiError): HTMLElement {
  return h('article', { class: 'card', 'aria-labelledby': id }, [
    h('header', {}, [h('h2', { id, text: name })]),
    h('p', { class: 'error' }, [h('code', { text: error.code }), ' ' + error.message]),
  ]);
}

/** A result card; `update` re-renders its properties once thread properties across the batch are known. */
function renderCard(name: string, res: Result<PreviewData>): { card: HTMLElement; update?: UpdateCard } {
  const id = 'card-' + ++batch;
  if (!res.ok) return { card: errorCard(id, name, res.error) };
  const d = res.data;
  const c = d.comment || {};
  const msgs = c.messages || [];
  const subject = msgs[0] && msgs[0].subject && msgs[0].subject.text;
  const warns = d.warnings || [];
  const threadBox = h('div', { class: 'thread' });
  const propsBox = h('div', { class: 'props' });
  renderProperties(propsBox, c, d.document);
  renderThread(threadBox, d.thread_properties, 'This message alone');
  const pre = h('pre', { class: 'json', tabindex: '0', 'aria-label': 'JSON document', text: JSON.stringify(d.document, null, 2) });
  const card = h('article', { class: 'card', 'aria-labelledby': id }, [
    h('header', {}, [
      h('h2', { id, text: subject || '(no subject)' }),
      h('span', { class: 'file', text: name }),
      h('span', {
        class: warns.length ? 'badge' : 'badge ok',
        text: warns.length ? warns.length + ' warning' + (warns.length > 1 ? 's' : '') : 'no warnings',
      }),
    ]),
    warns.length
      ? h(
          'ul',
          { class: 'warnings', 'aria-label': 'Warnings' },
          warns.map((w) => h('li', {}, [h('code', { text: w.code }), ' ' + w.message])),
        )
      : null,
    h('div', { class: 'cols' }, [
      h('section', { class: 'comment', 'aria-label': 'Comment' }, [
        h('h3', { text: 'Comment as the service shows it' }),
        kv([
          ['Comment id', c.id],
          ['Timestamp', c.timestamp],
          ['Thread id', c.thread_id],
        ]),
        ...msgs.map((m, i) => renderMessage(m, i, msgs.length)),
        h('h4', { text: 'User properties' }),
        propsBox,
        h('h4', { text: 'Thread properties' }),
        threadBox,
        h('h4', { text: 'Attachments' }),
        renderAttachments(c.attachments),
      ]),
      h('section', { class: 'doc', 'aria-label': 'Document sent' }, [h('h3', {}, ['Document that would be sent', copyButton(pre)]), pre]),
    ]),
  ]);
  const update: UpdateCard = (t, scope) => {
    renderProperties(propsBox, t.comment, d.document);
    renderThread(threadBox, t.thread_properties, scope);
  };
  return { card, update };
}

/** The messages of one item: a pasted message as it is, a file as the server reads it. */
async function read(it: Item, q: string): Promise<Shown[]> {
  if (!it.file) return [{ label: it.name, res: await post<PreviewData>('api/preview' + q, 'message/rfc822', await it.bytes()) }];
  const name = 'name=' + encodeURIComponent(it.name);
  const res = await post<FileAnswer>('api/preview/file' + (q ? q + '&' : '?') + name, 'application/octet-stream', await it.bytes());
  if (!res.ok) return [{ label: it.name, res }];
  const all = res.data.messages;
  const shown = all.map(
    (m): Shown => ({
      label: all.length > 1 ? it.name + ' — message ' + (m.index + 1) + ' of ' + all.length + (res.data.more ? '+' : '') : it.name,
      res: 'error' in m ? { ok: false, error: m.error } : { ok: true, data: m },
    }),
  );
  if (res.data.more) {
    const text = `${it.name} holds more messages: the first ${all.length} are previewed here; \`mailgate preview\` reads the whole file.`;
    shown.push({ label: it.name, res: { ok: true, data: {} }, note: text });
  }
  return shown;
}

/** Previews the items one after the other, then, for two or more messages, their thread properties together. */
async function previewAll(items: Item[]): Promise<void> {
  if (!items.length) return;
  if (auth === 'key' && !keyInput.value.trim()) {
    say('Enter the admin API key first.');
    keyInput.focus();
    return;
  }
  const cards: HTMLElement[] = [];
  const comments: PreviewComment[] = [];
  const updates: UpdateCard[] = [];
  const q = query();
  let total = 0;
  let ok = 0;
  for (let i = 0; i < items.length; i++) {
    const it = items[i]!;
    say('Previewing ' + (i + 1) + ' of ' + items.length + '…');
    for (const { label, res, note } of await read(it, q)) {
      const { card, update } =
        note === undefined ? renderCard(label, res) : { card: h('p', { class: 'hint note', text: note }), update: undefined };
      if (note === undefined) total++;
      if (note === undefined && res.ok) ok++;
      const last = cards[cards.length - 1];
      results.insertBefore(card, last ? last.nextSibling : results.firstChild);
      cards.push(card);
      if (res.ok && update && comments.length < MAX_THREAD_COMMENTS) {
        comments.push(res.data.comment as PreviewComment);
        updates.push(update);
      }
    }
  }
  const failed = total - ok;
  const plural = total === 1 ? '' : 's';
  const summary = `Previewed ${ok} of ${total} message${plural}${failed ? ` (${failed} failed)` : ''}.`;
  if (comments.length < 2) return say(summary);
  const res = await post<{ threads: ThreadView[] }>('api/preview/threads', 'application/json', JSON.stringify({ comments }));
  if (res.ok) res.data.threads.forEach((t, k) => updates[k]!(t, 'Within the ' + comments.length + ' messages previewed together'));
  say(summary);
}

function fromFiles(list: FileList): Item[] {
  return Array.from(list, (f) => ({ name: f.name || 'dropped file', file: true, bytes: () => f.arrayBuffer() }));
}

byId('go').addEventListener('click', () => {
  if (!paste.value.trim()) {
    say('Paste a raw message first.');
    paste.focus();
    return;
  }
  const raw = paste.value.replace(/\r?\n/g, '\r\n');
  void previewAll([{ name: 'pasted message', file: false, bytes: () => new TextEncoder().encode(raw) }]);
});
paste.addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    byId('go').click();
  }
});
byId('clear').addEventListener('click', () => {
  results.textContent = '';
  say('Results cleared.');
});
files.addEventListener('change', () => {
  if (files.files) void previewAll(fromFiles(files.files));
  files.value = '';
});
for (const t of ['dragenter', 'dragover'] as const) {
  document.addEventListener(t, (ev) => {
    ev.preventDefault();
    drop.classList.add('over');
  });
}
for (const t of ['dragleave', 'drop'] as const) {
  document.addEventListener(t, (ev) => {
    ev.preventDefault();
    if (t === 'drop' || ev.target === drop) drop.classList.remove('over');
  });
}
document.addEventListener('drop', (ev) => {
  if (ev.dataTransfer && ev.dataTransfer.files.length) void previewAll(fromFiles(ev.dataTransfer.files));
});
setupAuth();
