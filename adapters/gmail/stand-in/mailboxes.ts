/**
 * The Gmail stand-in's mailboxes: labels (system labels and user labels), messages with their
 * label ids, and the history of each mailbox (developers.google.com/workspace/gmail/api/guides/
 * sync): every change gets the next history id; `history.list` answers the records after a start
 * id, and 404 for a start id older than the oldest record kept (`expire`). `messages.list` answers
 * newest first, with the search operators mailgate uses (`larger:`, `has:attachment`, `after:`).
 */
import { buildMessage, type MessageSpec, type PartTree } from './message.js';

export interface StoredMessage {
  id: string;
  threadId: string;
  labelIds: Set<string>;
  internalDate: number;
  raw: Buffer;
  payload: PartTree;
  hasAttachment: boolean;
  historyId: number;
}

export interface HistoryRecord {
  id: number;
  messagesAdded?: Array<{ message: MessageRef }>;
  labelsAdded?: Array<{ message: MessageRef; labelIds: string[] }>;
  labelsRemoved?: Array<{ message: MessageRef; labelIds: string[] }>;
}

interface MessageRef {
  id: string;
  threadId: string;
  labelIds: string[];
}

const SYSTEM = ['INBOX', 'SENT', 'DRAFT', 'SPAM', 'TRASH', 'UNREAD', 'STARRED', 'IMPORTANT', 'CATEGORY_PERSONAL', 'CATEGORY_UPDATES'];

export class Mailbox {
  readonly labels = new Map<string, { id: string; name: string; type: 'system' | 'user' }>();
  readonly messages = new Map<string, StoredMessage>();
  readonly history: HistoryRecord[] = [];
  historyId = 1000;
  /** The mailbox's users.watch, if any. */
  watch?: { topic: string; labelIds: string[]; expiration: number };
  /** history.list with a start id below this answers 404. */
  oldestKept = 0;
  private nextLabel = 1;

  constructor(
    readonly address: string,
    readonly opts: { delegated: boolean; forbidden: boolean },
    private readonly ids: () => string,
  ) {
    for (const l of SYSTEM) this.labels.set(l, { id: l, name: l, type: 'system' });
  }

  label(nameOrId: string): string {
    const found = [...this.labels.values()].find((l) => l.id === nameOrId || l.name === nameOrId);
    if (found) return found.id;
    return this.createLabel(nameOrId).id;
  }

  createLabel(name: string): { id: string; name: string; type: 'user' } {
    const l = { id: `Label_${this.nextLabel++}`, name, type: 'user' as const };
    this.labels.set(l.id, l);
    return l;
  }

  add(spec: MessageSpec, labels: string[], seed: number): StoredMessage {
    const built = buildMessage(spec, seed);
    const id = this.ids();
    const m: StoredMessage = {
      id,
      threadId: id,
      labelIds: new Set([...labels.map((l) => this.label(l)), 'UNREAD']),
      internalDate: spec.receivedAt?.getTime() ?? Date.now(),
      ...built,
      historyId: ++this.historyId,
    };
    this.messages.set(id, m);
    this.history.push({ id: m.historyId, messagesAdded: [{ message: ref(m) }] });
    return m;
  }

  /** Adds and removes labels; records the change. */
  modify(m: StoredMessage, add: string[], remove: string[]): void {
    const added = add.filter((l) => !m.labelIds.has(l));
    const removed = remove.filter((l) => m.labelIds.has(l));
    for (const l of added) m.labelIds.add(l);
    for (const l of removed) m.labelIds.delete(l);
    if (added.length === 0 && removed.length === 0) return;
    m.historyId = ++this.historyId;
    const rec: HistoryRecord = { id: m.historyId };
    if (added.length > 0) rec.labelsAdded = [{ message: ref(m), labelIds: added }];
    if (removed.length > 0) rec.labelsRemoved = [{ message: ref(m), labelIds: removed }];
    this.history.push(rec);
  }

  /** Every history record so far is dropped: a start id before now answers 404. */
  expire(): void {
    this.oldestKept = this.historyId + 1;
    this.history.length = 0;
  }

  list(labelIds: string[], q: string): StoredMessage[] {
    const f = parseQuery(q);
    return [...this.messages.values()]
      .filter((m) => labelIds.every((l) => m.labelIds.has(l)))
      .filter((m) => (f.larger === undefined || m.raw.length > f.larger) && (!f.hasAttachment || m.hasAttachment))
      .filter((m) => f.afterS === undefined || m.internalDate >= f.afterS * 1000)
      .reverse();
  }
}

function ref(m: StoredMessage): MessageRef {
  return { id: m.id, threadId: m.threadId, labelIds: [...m.labelIds] };
}

/** The search operators the stand-in knows; any other term is refused by the server. */
export function parseQuery(q: string): { larger?: number; hasAttachment: boolean; afterS?: number; unknown?: string } {
  const out: { larger?: number; hasAttachment: boolean; afterS?: number; unknown?: string } = { hasAttachment: false };
  for (const term of q.split(/\s+/).filter(Boolean)) {
    let m: RegExpExecArray | null;
    if ((m = /^larger:(\d+)([KkMm]?)$/.exec(term))) out.larger = Number(m[1]) * (m[2] === '' ? 1 : /k/i.test(m[2]!) ? 1024 : 1024 * 1024);
    else if (term === 'has:attachment') out.hasAttachment = true;
    else if ((m = /^after:(\d+)$/.exec(term))) out.afterS = Number(m[1]);
    else out.unknown = term;
  }
  return out;
}
