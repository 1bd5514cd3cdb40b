/** Row shapes of the controls tables shared by both backends (src/store/contract/controls.ts). */
import { checkCount } from './common.js';
import type { FolderStateRow, MailboxDisableReason, MailboxStateRow, MailboxStateInput } from './contract/controls.js';

export interface MailboxRowIn {
  mailbox: string;
  enabled: boolean | number;
  reason: string | null;
  error_kind: string | null;
  error_code: string | null;
  error_message: string | null;
  by_command: boolean | number;
  failing_since: string | null;
  updated_at: string;
}

export interface FolderRowIn {
  mailbox: string;
  folder: string;
  state: string | null;
  synced_until: string | null;
  last_synced: string | null;
  behind: number | string | null;
  filtered: number | string;
  updated_at: string;
}

/** The columns of a mailbox state row after `patch` is applied to `prev` (undefined fields keep theirs). */
export function mergeMailboxState(prev: MailboxRowIn | undefined, patch: MailboxStateInput) {
  const keep = <T>(v: T | undefined, old: T | null | undefined): T | null => (v === undefined ? (old ?? null) : v);
  return {
    enabled: patch.enabled,
    reason: keep(patch.reason, prev?.reason),
    error_kind: keep(patch.errorKind, prev?.error_kind),
    error_code: keep(patch.errorCode, prev?.error_code),
    error_message: keep(patch.errorMessage, prev?.error_message),
    by_command: patch.byCommand ?? Boolean(prev?.by_command ?? false),
    failing_since: keep(patch.failingSince, prev?.failing_since),
  };
}

export function folderRow(r: FolderRowIn): FolderStateRow {
  return {
    folder: r.folder,
    state: r.state === 'in_progress' || r.state === 'up_to_date' ? r.state : null,
    syncedUntil: r.synced_until,
    lastSynced: r.last_synced,
    behind: r.behind === null ? null : Number(r.behind),
    filtered: Number(r.filtered),
    updatedAt: r.updated_at,
  };
}

/** Mailboxes with their folders, by name; a mailbox known only by its folders is enabled. */
export function mailboxRows(mailboxes: MailboxRowIn[], folders: FolderRowIn[]): MailboxStateRow[] {
  const out = new Map<string, MailboxStateRow>();
  for (const m of mailboxes) {
    out.set(m.mailbox, {
      mailbox: m.mailbox,
      enabled: Boolean(m.enabled),
      reason: m.reason as MailboxDisableReason | null,
      errorKind: m.error_kind,
      errorCode: m.error_code,
      errorMessage: m.error_message,
      byCommand: Boolean(m.by_command),
      failingSince: m.failing_since,
      updatedAt: m.updated_at,
      filtered: 0,
      folders: [],
    });
  }
  for (const f of folders) {
    let m = out.get(f.mailbox);
    if (m === undefined) {
      m = {
        mailbox: f.mailbox,
        enabled: true,
        reason: null,
        errorKind: null,
        errorCode: null,
        errorMessage: null,
        byCommand: false,
        failingSince: null,
        updatedAt: f.updated_at,
        filtered: 0,
        folders: [],
      };
      out.set(f.mailbox, m);
    }
    const row = folderRow(f);
    m.folders.push(row);
    m.filtered += row.filtered;
  }
  return [...out.values()].sort((a, b) => (a.mailbox < b.mailbox ? -1 : a.mailbox > b.mailbox ? 1 : 0));
}

export function checkFilteredCount(n: number): number {
  return checkCount('filtered count', n, 0);
}
