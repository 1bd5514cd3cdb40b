/**
 * The mailboxes as /api/status, the admin API and the console show them: every mailbox of the
 * configuration (IMAP accounts, Graph and Gmail mailboxes) and every one the store remembers,
 * with its state (the reason and error kind when disabled), filtered count and folders — live
 * from this replica where it reads the mailbox, else as the store last recorded them.
 */
import { mailboxName, type AdapterEntry } from '../runtime/adapters.js';
import { holdOf } from '../runtime/mailboxes.js';
import type { MailboxStateRow, Store } from '../store/types.js';
import type { MailboxView } from '../server/console-types.js';

function folders(e: AdapterEntry | undefined, row: MailboxStateRow | undefined): MailboxView['folders'] {
  const stored = new Map((row?.folders ?? []).map((f) => [f.folder, f]));
  const live = e?.state === 'running' ? (e.adapter.health?.() ?? []).flatMap((h) => h.folders ?? []) : [];
  const out = new Map<string, MailboxView['folders'][number]>();
  for (const f of stored.values()) {
    const { updatedAt: _u, ...rest } = f;
    out.set(f.folder, rest);
  }
  for (const f of live) {
    out.set(f.folder, {
      folder: f.folder,
      state: f.state,
      syncedUntil: f.syncedUntil ?? null,
      lastSynced: f.lastSynced ?? null,
      behind: f.behind ?? null,
      filtered: stored.get(f.folder)?.filtered ?? 0,
    });
  }
  return [...out.values()];
}

export async function listMailboxes(store: Pick<Store, 'listMailboxStates'>, adapters: readonly AdapterEntry[]): Promise<MailboxView[]> {
  const rows = new Map((await store.listMailboxStates()).map((r) => [r.mailbox, r]));
  const entries = new Map<string, AdapterEntry>();
  for (const e of adapters) {
    const name = mailboxName(e);
    if (name !== undefined) entries.set(name, e);
  }
  const names = [...new Set([...entries.keys(), ...rows.keys()])].sort();
  return names.map((mailbox) => {
    const e = entries.get(mailbox);
    const row = rows.get(mailbox);
    const hold = holdOf(row, e?.adapter.controls?.enabled ?? true);
    return {
      mailbox,
      kind: mailbox.slice(0, mailbox.indexOf(':')),
      configured: e !== undefined,
      state: hold === undefined ? 'enabled' : 'disabled',
      reason: hold?.reason ?? null,
      byCommand: row?.byCommand ?? false,
      errorKind: hold?.errorKind ?? row?.errorKind ?? null,
      errorCode: hold?.errorCode ?? row?.errorCode ?? null,
      message: hold?.message ?? row?.errorMessage ?? null,
      failingSince: row?.failingSince ?? null,
      run: e?.state ?? null,
      filtered: row?.filtered ?? 0,
      folders: folders(e, row),
    };
  });
}

/** `mailgate mailboxes enable|disable` and the admin API: a command that wins over the configuration until the next. */
export async function setMailboxEnabled(store: Pick<Store, 'putMailboxState'>, mailbox: string, enabled: boolean): Promise<void> {
  await store.putMailboxState(
    mailbox,
    enabled
      ? { enabled: true, byCommand: true, reason: null, errorKind: null, errorCode: null, errorMessage: null, failingSince: null }
      : { enabled: false, byCommand: true, reason: 'user' },
  );
}
