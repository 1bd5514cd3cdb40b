/**
 * Change notifications as wake-ups (learn.microsoft.com/graph/change-notifications-delivery-
 * webhooks): one subscription per folder on `created` messages, renewed when a third of its
 * lifetime is left, recreated when Graph removed it. The receiver — an endpoint at the path of
 * `notifications.url`, served by mailgate's HTTP server and its public listener — answers the validation handshake by
 * echoing `validationToken` as text/plain, checks `clientState` on every notification (others are
 * refused and logged), and answers 202 at once; the folder's mailbox then runs a delta round.
 * Lifecycle events: `reauthorizationRequired` renews, `subscriptionRemoved` recreates, `missed`
 * wakes the folder; for a subscription another replica made, they are passed on to it through the
 * wake board with the signal. Notifications are lossy, so the safety poll runs whether or not they come.
 */
import { timingSafeEqual } from 'node:crypto';
import { isGatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Intake, PushEndpoint, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import type { WakeBoard, WakeNote } from '../../src/pipeline/wake-board.js';
import type { GraphEntry } from './config.js';
import { notificationOperation } from './openapi.js';
import type { MailboxClient } from './client.js';
import type { FolderTarget } from './sync.js';

/** What the subscriber needs of a mailbox's runner (mailbox.ts), named here so the two files do not import each other. */
export interface MailboxRunner {
  readonly opts: { readonly client: MailboxClient; readonly log: Logger; readonly instance: string };
  /** True while it reads its mailbox in this process. */
  readonly active: boolean;
  /** A delta round of one folder, or of every folder. */
  wake(folderId?: string): void;
}

/** Largest notification body accepted (Graph sends a few kB; bound before trust). */
const BODY_LIMIT = 1024 * 1024;

interface Sub {
  id: string;
  runner: MailboxRunner;
  folderId: string;
  expiresAt: number;
}

/** Where a mailbox keeps its subscriptions (its sink: written under the mailbox's lease). */
export type SubscriptionStore = Pick<Intake, 'accept' | 'checkpoint'>;

/** The record of a mailbox's subscriptions in the store, beside its folders' checkpoints. */
interface SavedSubscriptions {
  subscriptions: Array<{ id: string; folderId: string; expiresAt: number }>;
}

const storeKey = (runner: MailboxRunner) => `graph:${runner.opts.instance}:subscriptions`;

interface NotificationItem {
  subscriptionId?: string;
  clientState?: string | null;
  lifecycleEvent?: string;
}

export class Subscriber {
  /** By folder id. */
  private readonly byFolder = new Map<string, Sub>();
  private readonly byId = new Map<string, Sub>();
  private readonly runners = new Set<MailboxRunner>();
  /** Runners whose saved subscriptions were read since they started reading their mailbox. */
  private readonly restored = new Set<MailboxRunner>();
  /** Notifications refused for their clientState. */
  refused = 0;
  received = 0;

  constructor(
    private readonly entry: GraphEntry & { notifications: NonNullable<GraphEntry['notifications']> },
    private readonly log: Logger,
    /** Where a notification for a mailbox read by another replica is passed on (src/pipeline/wake-board.ts). */
    private readonly board?: WakeBoard,
  ) {}

  private get lifetimeMs(): number {
    return this.entry.subscription_minutes * 60_000;
  }

  /**
   * A runner (re)starts reading its mailbox: what this process remembers of its subscriptions
   * may be stale (another replica read it meanwhile); the saved record is read again at its next ensure().
   */
  reset(runner: MailboxRunner): void {
    for (const sub of [...this.byId.values()]) if (sub.runner === runner) this.forget(sub);
    this.restored.delete(runner);
  }

  /**
   * Creates the missing subscriptions of a mailbox's folders and renews those due; failures are
   * logged, polling goes on. With `store`, the subscriptions are kept in the mailbox's record: a
   * restart (or the replica taking the mailbox over) renews them instead of making new ones.
   */
  async ensure(
    runner: MailboxRunner,
    targets: FolderTarget[],
    signal: AbortSignal,
    store?: SubscriptionStore,
    /** Lifecycle events another replica received for this mailbox's subscriptions (the wake board's notes). */
    notes: WakeNote[] = [],
  ): Promise<void> {
    this.runners.add(runner);
    if (store !== undefined && !this.restored.has(runner)) await this.restore(runner, targets, store);
    for (const note of notes) {
      const sub = this.byId.get(note.subscription);
      if (sub?.runner === runner) this.lifecycle(sub, note.event);
    }
    let changed = false;
    for (const t of targets) {
      const sub = this.byFolder.get(t.id);
      try {
        if (sub === undefined) {
          changed = true;
          await this.create(runner, t, signal);
        } else if (sub.expiresAt - Date.now() < this.lifetimeMs / 3) {
          changed = true;
          await this.renew(sub, signal);
        }
      } catch (err) {
        if (signal.aborted) return;
        const code = isGatewayError(err) ? err.code : 'MAILGATE_ERR_GRAPH_SUBSCRIPTION';
        this.log.warn(
          { code: 'MAILGATE_ERR_GRAPH_SUBSCRIPTION', cause: code, folder: t.path },
          `no change notifications for "${t.path}" (${(err as Error).message}); it is read every ${this.entry.poll_interval_ms} ms`,
        );
      }
    }
    if (store !== undefined && changed) await this.save(runner, store);
  }

  /** The mailbox's saved subscriptions for its current folders that have not expired. Best effort: unreadable, they are made anew. */
  private async restore(runner: MailboxRunner, targets: FolderTarget[], store: SubscriptionStore): Promise<void> {
    let saved: SavedSubscriptions | undefined;
    try {
      saved = (await store.checkpoint(storeKey(runner))) as SavedSubscriptions | undefined;
    } catch {
      return;
    }
    this.restored.add(runner);
    const folders = new Set(targets.map((t) => t.id));
    for (const s of saved?.subscriptions ?? []) {
      if (!folders.has(s.folderId) || s.expiresAt <= Date.now() || this.byFolder.has(s.folderId)) continue;
      const sub: Sub = { id: s.id, runner, folderId: s.folderId, expiresAt: s.expiresAt };
      this.byFolder.set(sub.folderId, sub);
      this.byId.set(sub.id, sub);
    }
  }

  private async save(runner: MailboxRunner, store: SubscriptionStore): Promise<void> {
    const subscriptions = [...this.byId.values()]
      .filter((s) => s.runner === runner)
      .map(({ id, folderId, expiresAt }) => ({ id, folderId, expiresAt }));
    try {
      await store.accept([], { checkpoint: { key: storeKey(runner), value: { subscriptions } satisfies SavedSubscriptions } });
    } catch {
      // Written at the next change; until then a restart makes new subscriptions (the old expire).
    }
  }

  /** When the mailbox's next renewal is due, in ms from now. */
  nextRenewalMs(runner: MailboxRunner): number {
    let next = Number.POSITIVE_INFINITY;
    for (const s of this.byId.values()) if (s.runner === runner) next = Math.min(next, s.expiresAt - this.lifetimeMs / 3 - Date.now());
    return Math.max(1000, next);
  }

  private async create(runner: MailboxRunner, t: FolderTarget, signal: AbortSignal): Promise<void> {
    const { client } = runner.opts;
    const expiresAt = Date.now() + this.lifetimeMs;
    const res = await client.request(`${client.graphUrl}/subscriptions`, {
      method: 'POST',
      json: {
        changeType: 'created',
        notificationUrl: this.entry.notifications.url,
        lifecycleNotificationUrl: this.entry.notifications.url,
        resource: `/users/${client.user}/mailFolders('${t.id}')/messages`,
        expirationDateTime: new Date(expiresAt).toISOString(),
        clientState: this.entry.notifications.client_state,
      },
      signal,
    });
    const body = JSON.parse(res.body.toString('utf8')) as { id: string; expirationDateTime?: string };
    const sub: Sub = { id: body.id, runner, folderId: t.id, expiresAt: Date.parse(body.expirationDateTime ?? '') || expiresAt };
    this.byFolder.set(t.id, sub);
    this.byId.set(sub.id, sub);
    runner.opts.log.info({ subscription: sub.id, folder: t.path }, `change notifications on for "${t.path}"`);
  }

  private async renew(sub: Sub, signal: AbortSignal): Promise<void> {
    const { client } = sub.runner.opts;
    const expiresAt = Date.now() + this.lifetimeMs;
    try {
      await client.request(`${client.graphUrl}/subscriptions/${sub.id}`, {
        method: 'PATCH',
        json: { expirationDateTime: new Date(expiresAt).toISOString() },
        signal,
      });
      sub.expiresAt = expiresAt;
    } catch (err) {
      // Gone at Graph: recreated at the mailbox's next pass.
      this.forget(sub);
      throw err;
    }
  }

  private forget(sub: Sub): void {
    this.byId.delete(sub.id);
    if (this.byFolder.get(sub.folderId) === sub) this.byFolder.delete(sub.folderId);
  }

  /** The receiver, mounted by the server at the path of `notifications.url`. */
  endpoint(): PushEndpoint {
    return {
      method: 'POST',
      path: new URL(this.entry.notifications.url).pathname,
      bodyLimit: BODY_LIMIT,
      // Graph must reach it: served on `server.public_listen` too. Its proof is the clientState in the body.
      public: true,
      handle: async (req) => this.receive(req),
      openapi: notificationOperation(this.entry.name),
    };
  }

  private receive(req: PushRequest): PushResponse {
    const token = new URL(req.url, 'http://receiver').searchParams.get('validationToken');
    if (token !== null) return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: token };
    let items: NotificationItem[];
    try {
      const v = (JSON.parse(req.body.toString('utf8')) as { value?: unknown }).value;
      items = Array.isArray(v) ? (v as NotificationItem[]) : [];
    } catch {
      return {
        status: 400,
        body: { error: { code: 'MAILGATE_ERR_GRAPH_NOTIFICATION', message: 'the body is not a notification collection' } },
      };
    }
    for (const item of items) this.dispatch(item);
    return { status: 202 };
  }

  private dispatch(item: NotificationItem): void {
    if (!sameSecret(item.clientState, this.entry.notifications.client_state)) {
      this.refused += 1;
      this.log.warn(
        { code: 'MAILGATE_ERR_GRAPH_NOTIFICATION', subscription: item.subscriptionId },
        'change notification refused: its clientState is not the configured one',
      );
      return;
    }
    this.received += 1;
    const sub = item.subscriptionId === undefined ? undefined : this.byId.get(item.subscriptionId);
    if (item.lifecycleEvent === 'subscriptionRemoved' || item.lifecycleEvent === 'reauthorizationRequired') {
      if (sub !== undefined) {
        this.lifecycle(sub, item.lifecycleEvent);
        sub.runner.wake(sub.folderId);
      } else if (this.board !== undefined && item.subscriptionId !== undefined) {
        // Made by the replica reading the mailbox: it recreates or renews it at its wake-up.
        const note = { subscription: item.subscriptionId, event: item.lifecycleEvent };
        void this.passOn(this.board, item.subscriptionId, note);
      }
      return;
    }
    // A change or `missed`: a delta round of the folder. A subscription this process does not
    // know (made before a restart, or by another replica) wakes every mailbox it reads here, and
    // is passed on to the replica reading the mailbox whose saved subscriptions name it.
    if (sub !== undefined) sub.runner.wake(sub.folderId);
    else {
      for (const r of this.runners) if (r.active) r.wake();
      if (this.board !== undefined && item.subscriptionId !== undefined) void this.passOn(this.board, item.subscriptionId);
    }
  }

  /** Removed: forgotten (recreated at the next pass); reauthorization: renewed at the next pass. */
  private lifecycle(sub: Sub, event: string): void {
    if (event === 'subscriptionRemoved') this.forget(sub);
    else if (event === 'reauthorizationRequired') sub.expiresAt = 0;
  }

  /**
   * Signals the mailbox read elsewhere whose saved record names the subscription; when none
   * does (not saved yet, or unreadable), every mailbox of the entry not read here (a note for a
   * subscription a reader does not hold is ignored there). Best effort: the safety poll reads
   * what a lost signal would have woken, and the reader's renewal finds a subscription gone.
   */
  private async passOn(board: WakeBoard, subscriptionId: string, note?: WakeNote): Promise<void> {
    const here = new Set([...this.runners].filter((r) => r.active).map((r) => r.opts.instance));
    const elsewhere = this.entry.mailboxes.map((m) => `${this.entry.name}/${m.user}`).filter((i) => !here.has(i));
    try {
      let named: string[] = elsewhere;
      for (const instance of elsewhere) {
        const saved = (await board.record(`graph:${instance}:subscriptions`)) as SavedSubscriptions | undefined;
        if (saved?.subscriptions?.some((s) => s.id === subscriptionId) === true) named = [instance];
      }
      for (const instance of named) await board.signal(`graph:${instance}`, note);
    } catch (err) {
      this.log.warn(
        { code: 'MAILGATE_ERR_GRAPH_NOTIFICATION', subscription: subscriptionId },
        `change notification not passed on: ${(err as Error).message}`,
      );
    }
  }
}

function sameSecret(given: string | null | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
