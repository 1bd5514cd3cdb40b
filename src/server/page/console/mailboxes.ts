/// <reference lib="dom" />
/**
 * The Mailboxes view (`#/mailboxes`): one row a mailbox (IMAP account, Graph or Gmail mailbox)
 * with its state — enabled, or disabled with the reason and error kind —, what its filter left
 * out and an Enable or Disable button; its folders under it with their sync state (in progress
 * or up to date, synced until, last synced, messages behind). From GET /api/mailboxes; the
 * buttons POST /api/mailboxes/<mailbox>/enable|disable (a command: it wins over the configuration).
 */
import type { FolderView, MailboxView } from '../../console-types.js';
import { get, post } from './api.js';
import { announce, announceUrgent, byId, clear, empty, errorBox, h } from './dom.js';
import { ago, when } from './format.js';

const REASONS: Record<string, string> = { user: 'by an operator', quota: 'quota', sync_error: 'sync error' };
const box = () => byId('mailboxes-body');

function stateCell(m: MailboxView): HTMLElement {
  if (m.state === 'enabled') {
    const failing = m.failingSince ? ` · failing since ${ago(m.failingSince)}` : '';
    return h('span', {}, [h('span', { class: 'state delivered', text: 'enabled' }), failing]);
  }
  const why = [REASONS[m.reason ?? 'user'] ?? m.reason, m.errorKind?.replace(/_/g, ' ')].filter(Boolean).join(' · ');
  return h('span', {}, [h('span', { class: 'state dead', text: 'disabled' }), ` ${why}`, m.byCommand ? ' (by command)' : '']);
}

function folderState(f: FolderView): string {
  if (f.state === null) return 'not synced yet';
  if (f.state === 'in_progress') return f.behind === null ? 'in progress' : `in progress · ${f.behind} behind`;
  return 'up to date';
}

function button(m: MailboxView): HTMLElement {
  const enable = m.state === 'disabled';
  const label = `${enable ? 'Enable' : 'Disable'} ${m.mailbox}`;
  return h('button', {
    type: 'button',
    class: enable ? 'small' : 'secondary small',
    'aria-label': label,
    'data-mailbox': m.mailbox,
    text: enable ? 'Enable' : 'Disable',
    onclick: async (ev: Event) => {
      (ev.currentTarget as HTMLButtonElement).disabled = true;
      const r = await post(`/api/mailboxes/${encodeURIComponent(m.mailbox)}/${enable ? 'enable' : 'disable'}`);
      if (r.ok) announce(`${m.mailbox} ${enable ? 'enabled' : 'disabled'}.`);
      else announceUrgent(`${m.mailbox}: ${r.error.message}`);
      await showMailboxes(true);
    },
  });
}

function rows(m: MailboxView): HTMLElement[] {
  const error = m.errorCode ? h('div', { class: 'hint' }, [h('code', { text: m.errorCode }), ` ${m.message ?? ''}`]) : null;
  const head = h('tr', { class: 'mailbox', 'data-mailbox': m.mailbox }, [
    h('th', { scope: 'row' }, [
      h('span', { text: m.mailbox }),
      m.configured ? null : h('span', { class: 'hint', text: ' (not configured)' }),
    ]),
    h('td', {}, [stateCell(m), error]),
    h('td', { text: String(m.filtered) }),
    h('td', {}, [m.configured ? button(m) : null]),
  ]);
  const folders = m.folders.map((f) =>
    h('tr', { class: 'folder' }, [
      h('th', { scope: 'row', class: 'indent', text: f.folder }),
      h('td', {}, [
        folderState(f),
        f.syncedUntil ? ` · synced until ${when(f.syncedUntil)}` : '',
        f.lastSynced ? ` · last synced ${ago(f.lastSynced)}` : '',
      ]),
      h('td', { text: String(f.filtered) }),
      h('td', {}),
    ]),
  );
  return [head, ...folders];
}

/** Loads and renders the view; `quiet`: no announcement (a refresh). */
export async function showMailboxes(quiet = false): Promise<void> {
  const r = await get<{ mailboxes: MailboxView[] }>('/api/mailboxes');
  if (!r.ok) return clear(box(), errorBox(r.error.code, r.error.message));
  const list = r.data.mailboxes;
  if (list.length === 0) return clear(box(), empty('No mailboxes: configure IMAP accounts, Graph or Gmail mailboxes.'));
  const disabled = list.filter((m) => m.state === 'disabled').length;
  clear(
    box(),
    h('p', { class: 'hint', text: `${list.length} mailboxes · ${disabled} disabled` }),
    h('table', { class: 'mailboxes' }, [
      h('caption', { text: 'Mailboxes and their folders' }),
      h('thead', {}, [
        h('tr', {}, [
          h('th', { scope: 'col', text: 'Mailbox / folder' }),
          h('th', { scope: 'col', text: 'State' }),
          h('th', { scope: 'col', text: 'Filtered' }),
          h('th', { scope: 'col', text: '' }),
        ]),
      ]),
      h('tbody', {}, list.flatMap(rows)),
    ]),
  );
  if (!quiet) announce(`${list.length} mailboxes, ${disabled} disabled.`);
}
