/**
 * The stand-in's tenant data: users (mailboxes), their folders with well-known names, messages,
 * and per folder a change log from which delta rounds are answered.
 */
import { createHash } from 'node:crypto';
import type { MessageSpec, StoredMessage } from './message.js';

/** Well-known folder names the stand-in knows, with their (English) display names. */
export const WELL_KNOWN: Record<string, string> = {
  msgfolderroot: 'Top of Information Store',
  inbox: 'Inbox',
  sentitems: 'Sent Items',
  deleteditems: 'Deleted Items',
  drafts: 'Drafts',
  archive: 'Archive',
  junkemail: 'Junk Email',
  outbox: 'Outbox',
};

export interface Change {
  seq: number;
  id: string;
  kind: 'created' | 'updated' | 'removed';
}

export interface Folder {
  id: string;
  displayName: string;
  wellKnownName?: string;
  parentId?: string;
  /** Messages in insertion order. */
  messages: Map<string, StoredMessage>;
  log: Change[];
  /** Message id → seq of its latest arrival in this folder (the order of an initial delta round). */
  arrived: Map<string, number>;
  /** Delta and skip tokens minted before this epoch are refused (an expired sync state). */
  epoch: number;
  /** How a refused token is answered: 410 Gone, or the `syncStateNotFound` error. */
  expiredAs?: 'gone' | 'syncStateNotFound';
}

export interface Mailbox {
  id: string;
  upn: string;
  folders: Map<string, Folder>;
  /** Answer every request for this mailbox with 403 ErrorAccessDenied (an application access policy). */
  forbidden: boolean;
  /** Ids of messages ever created, for ids that stay unique within the mailbox. */
  created: number;
}

export class Tenant {
  readonly mailboxes = new Map<string, Mailbox>();
  /** Global change sequence (all folders), so that tokens order across folders too. */
  seq = 0;
  /** Called after a message was added to (or changed in) a folder: the subscriptions fire. */
  onChange: (mailbox: Mailbox, folder: Folder, change: Change) => void = () => undefined;

  addMailbox(upn: string, opts: { forbidden?: boolean; displayNames?: Record<string, string> } = {}): Mailbox {
    const id = uuidFrom(`user/${upn}`);
    const mb: Mailbox = { id, upn, folders: new Map(), forbidden: opts.forbidden === true, created: 0 };
    const root = this.newFolder(mb, WELL_KNOWN['msgfolderroot']!, undefined, 'msgfolderroot');
    for (const [wk, name] of Object.entries(WELL_KNOWN)) {
      if (wk !== 'msgfolderroot') this.newFolder(mb, opts.displayNames?.[wk] ?? name, root.id, wk);
    }
    this.mailboxes.set(upn.toLowerCase(), mb);
    return mb;
  }

  /** A mailbox by UPN or id (as `/users/{id | userPrincipalName}`). */
  mailbox(user: string): Mailbox | undefined {
    const key = decodeURIComponent(user).toLowerCase();
    return this.mailboxes.get(key) ?? [...this.mailboxes.values()].find((m) => m.id === key);
  }

  newFolder(mb: Mailbox, displayName: string, parentId: string | undefined, wellKnownName?: string): Folder {
    const f: Folder = {
      id: folderId(mb, wellKnownName ?? `${parentId}/${displayName}`),
      displayName,
      ...(wellKnownName ? { wellKnownName } : {}),
      ...(parentId ? { parentId } : {}),
      messages: new Map(),
      log: [],
      arrived: new Map(),
      epoch: 0,
    };
    mb.folders.set(f.id, f);
    return f;
  }

  /** A folder by id or well-known name. */
  folder(mb: Mailbox, idOrName: string): Folder | undefined {
    const key = decodeURIComponent(idOrName);
    return mb.folders.get(key) ?? [...mb.folders.values()].find((f) => f.wellKnownName === key.toLowerCase());
  }

  children(mb: Mailbox, parent: Folder): Folder[] {
    return [...mb.folders.values()].filter((f) => f.parentId === parent.id);
  }

  /** Creates `path` (`inbox/Support/Tier 2`: a well-known root, then display names) where missing. */
  ensurePath(mb: Mailbox, path: string): Folder {
    const [first, ...rest] = path.split('/');
    let f = this.folder(mb, first!);
    if (f === undefined) throw new Error(`no well-known folder ${first}`);
    for (const name of rest) f = this.children(mb, f).find((c) => c.displayName === name) ?? this.newFolder(mb, name, f.id);
    return f;
  }

  addMessage(mb: Mailbox, folder: Folder, spec: MessageSpec): StoredMessage {
    mb.created += 1;
    const id = messageId(mb, mb.created);
    const m: StoredMessage = { id, spec, isRead: false, categories: [], changeKey: 1 };
    folder.messages.set(id, m);
    this.record(mb, folder, id, 'created');
    return m;
  }

  /** Marks an update (read, categories): the message shows up again in the next delta round. */
  touch(mb: Mailbox, folder: Folder, m: StoredMessage): void {
    m.changeKey += 1;
    this.record(mb, folder, m.id, 'updated');
  }

  move(mb: Mailbox, from: Folder, to: Folder, m: StoredMessage): void {
    from.messages.delete(m.id);
    this.record(mb, from, m.id, 'removed');
    to.messages.set(m.id, m);
    m.changeKey += 1;
    this.record(mb, to, m.id, 'created');
  }

  /** The folder holding message `id`, if any. */
  locate(mb: Mailbox, id: string): { folder: Folder; message: StoredMessage } | undefined {
    for (const folder of mb.folders.values()) {
      const message = folder.messages.get(id);
      if (message) return { folder, message };
    }
    return undefined;
  }

  private record(mb: Mailbox, folder: Folder, id: string, kind: Change['kind']): void {
    this.seq += 1;
    const change = { seq: this.seq, id, kind };
    folder.log.push(change);
    if (kind === 'created') folder.arrived.set(id, this.seq);
    if (kind === 'removed') folder.arrived.delete(id);
    this.onChange(mb, folder, change);
  }
}

function uuidFrom(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** Ids shaped like Exchange's (base64url of an entry id), deterministic per mailbox and number. */
function messageId(mb: Mailbox, n: number): string {
  return `AAkALgAAAAAAHYQDEapmEc2byACqAC-EWg0A${createHash('sha256').update(`${mb.id}/m/${n}`).digest('base64url').slice(0, 40)}AAA=`;
}

function folderId(mb: Mailbox, seed: string): string {
  return `AAMkAD${createHash('sha256').update(`${mb.id}/f/${seed}`).digest('base64url').slice(0, 48)}AAA=`;
}
