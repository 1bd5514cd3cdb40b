/**
 * The loop of one API mailbox (a kind that reads a mailbox over HTTP, woken by the provider's
 * notifications): start under a pacer slot, a round, then wait for a wake-up — a notification to
 * this process, a signal on the wake board from another replica (src/pipeline/wake-board.ts),
 * the renewal of the notifications, or the safety poll (`poll_interval_ms`). A failure is
 * recorded as the mailbox's coded error (kept in the store through MailboxRecord, shown by
 * status and judged by the mailbox guard for `disable_after_ms`) and retried after a backoff:
 * refusals (credentials, permission, existence) wait long, transient failures short. Other
 * mailboxes never wait for it.
 *
 * A kind subclasses it with what differs: how it starts (token, folders or labels), what a round
 * reads (folder targets or a history cursor), how it keeps its notifications, and its folders'
 * sync states.
 */
import type { FilterReason, MessageFilter } from '../controls/filter.js';
import { compileFilter } from '../controls/filter.js';
import type { MailboxControls } from '../controls/schema.js';
import { resolveSince } from '../controls/since.js';
import { isGatewayError, type ErrorCode } from '../errors.js';
import type { Logger } from '../logger.js';
import { backoffDelay, type Backoff } from '../retry.js';
import { MailboxRecord } from './mailbox-record.js';
import { sleep } from './sleep.js';
import type { AdapterHealth, FolderSync, Intake } from './types.js';
import type { WakeWatch } from './wake-board.js';

export type MailboxState = 'starting' | 'syncing' | 'idle' | 'backoff' | 'stopped';

/** Refusals (credentials, permission, existence) wait long; transient failures short. */
const REFUSED: Backoff = { baseMs: 30_000, capMs: 30 * 60_000, jitter: 'equal' };
const TRANSIENT: Backoff = { baseMs: 1_000, capMs: 60_000, jitter: 'full' };

/** What every kind's mailbox reports (its kind adds its own counters). */
export interface MailboxHealth {
  mailbox: string;
  state: MailboxState;
  lastError?: { code: string; message: string; at: string };
  lastSyncAt?: string;
  nextAttemptAt?: string;
  failures: number;
  /** Messages made durable. */
  messages: number;
  requests: number;
  /** Messages left out by the mailbox's controls (participants, skip, since): never handed to intake. */
  filtered: number;
}

/** The kind's constants: its name (the state record `<kind>:<instance>`, filtered reports) and its codes. */
export interface MailboxKind {
  kind: string;
  /** Codes meaning the provider refused (credentials, permission, a folder or label missing): long backoff, logged as errors. */
  refusals: ReadonlySet<ErrorCode>;
  /** The code of a failure that carries none (a network error). */
  unavailable: ErrorCode;
}

export interface MailboxLoopOptions {
  entry: { route: string; poll_interval_ms: number };
  user: string;
  /** The adapter instance (`<name>/<user>`). */
  instance: string;
  log: Logger;
  /** With notifications: signals of notifications another replica received for this mailbox. */
  board?: WakeWatch;
  /** The process-wide pacer (src/pipeline/pacer.ts): a start or a retry holds a slot through its first requests. */
  paced?: (signal: AbortSignal) => Promise<() => void>;
  /** The mailbox's controls (src/controls/): exclusions, participants, skip, since. */
  controls: MailboxControls;
}

export abstract class MailboxLoop<H extends MailboxHealth = MailboxHealth, O extends MailboxLoopOptions = MailboxLoopOptions> {
  readonly health: H;
  /** True while it reads its mailbox in this process. */
  active = false;
  /** Called after each successful start (the first, and after a failure): after-delivery actions deferred meanwhile can run. */
  onReady: (() => void) | undefined;
  protected readonly filter: MessageFilter;
  /** The mailbox's state in the store (`<kind>:<instance>`), written when its error changes. */
  private readonly record: MailboxRecord;
  /** `since` resolved once (a duration counts back from the first sync); null: none. */
  private sinceAt: Date | null | undefined;
  private wakeUp: AbortController | undefined;

  constructor(
    readonly opts: O,
    readonly kind: MailboxKind,
    counters: Omit<H, keyof MailboxHealth>,
  ) {
    this.record = new MailboxRecord(`${kind.kind}:${opts.instance}`);
    this.filter = compileFilter(opts.controls, [opts.user]);
    const base: MailboxHealth = { mailbox: opts.user, state: 'stopped', failures: 0, messages: 0, requests: 0, filtered: 0 };
    this.health = { ...base, ...counters } as H;
  }

  /** A notification for this mailbox (or a signal on the board): a round now. */
  abstract wake(): void;
  /** False until the first start resolved what the mailbox reads (folders, labels). */
  protected abstract get ready(): boolean;
  /** A wake-up came since the last round: the idle wait returns at once. */
  protected abstract get pending(): boolean;
  /** The mailbox's first requests (token, folders or labels), under a pacer slot. */
  protected abstract prepare(signal: AbortSignal): Promise<void>;
  /** One round; `retrying` after a failure (read everything). */
  protected abstract round(sink: Intake, signal: AbortSignal, retrying: boolean): Promise<void>;
  /** After a round: keeps the mailbox's notifications (subscriptions, watch). */
  protected abstract renew(sink: Intake, signal: AbortSignal): Promise<void>;
  /** When the notifications need renewing next, in ms (infinity without them). */
  protected abstract renewalMs(): number;
  /** The folders (labels) and how far each is synced. */
  protected abstract folderSyncs(): FolderSync[];
  /** A failure was recorded (e.g. a vanished folder looked up again). */
  protected failed(_code: ErrorCode): void {}
  /** The run begins (e.g. forget notifications of an earlier run). */
  protected starting(): void {}
  /**
   * The run ends (the signal aborted: the process stops, or the mailbox moves to another
   * replica), before the lease is given up: e.g. end the notifications. Failures are ignored.
   */
  protected async stopped(_sink: Intake): Promise<void> {}

  protected wakeIdle(): void {
    this.wakeUp?.abort();
  }

  async run(sink: Intake, signal: AbortSignal): Promise<void> {
    this.starting();
    this.active = true;
    this.health.state = 'starting';
    await this.opts.board?.baseline();
    let failures = 0;
    try {
      while (!signal.aborted) {
        try {
          if (failures > 0 || !this.ready) await this.start(signal);
          this.health.state = 'syncing';
          await this.round(sink, signal, failures > 0);
          this.health.lastSyncAt = new Date().toISOString();
          failures = 0;
          delete this.health.lastError;
          delete this.health.nextAttemptAt;
          this.health.state = 'idle';
          await this.record.keep(sink, this.health.lastError, this.health.nextAttemptAt);
          await this.renew(sink, signal);
          await this.idle(signal);
        } catch (err) {
          if (signal.aborted) break;
          failures += 1;
          this.fail(err, failures);
          await this.record.keep(sink, this.health.lastError, this.health.nextAttemptAt);
          await sleep(Date.parse(this.health.nextAttemptAt!) - Date.now(), signal);
        }
      }
      await this.stopped(sink).catch(() => undefined);
    } finally {
      this.health.state = 'stopped';
      this.active = false;
    }
  }

  /** `since` of the controls, resolved at the first round (undefined: none). */
  protected async since(sink: Intake): Promise<Date | undefined> {
    this.sinceAt ??= (await resolveSince(this.opts.controls.since, sink, `${this.kind.kind}:${this.opts.instance}`)) ?? null;
    return this.sinceAt ?? undefined;
  }

  /** Counts one message the controls left out and reports it (metrics, the store's per-folder count). */
  protected leftOut(sink: Intake, folder: string, reason: FilterReason): void {
    this.health.filtered += 1;
    sink.filtered?.({ route: this.opts.entry.route, adapter: this.kind.kind, instance: this.opts.instance, folder, reason });
  }

  private async start(signal: AbortSignal): Promise<void> {
    const release = (await this.opts.paced?.(signal)) ?? (() => undefined);
    try {
      await this.prepare(signal);
    } finally {
      release();
    }
    this.onReady?.();
  }

  /** Until the poll is due, a notification arrives, or the notifications need renewing. */
  private async idle(signal: AbortSignal): Promise<void> {
    if (this.pending) return;
    this.wakeUp = new AbortController();
    const wait = Math.min(this.opts.entry.poll_interval_ms, this.renewalMs());
    const woken = AbortSignal.any([signal, this.wakeUp.signal]);
    // A notification received by another replica.
    if (this.opts.board === undefined) await sleep(wait, woken);
    else if (await this.opts.board.sleep(wait, woken)) this.wake();
    this.wakeUp = undefined;
  }

  private fail(err: unknown, failures: number): void {
    const code: ErrorCode = isGatewayError(err) ? err.code : this.kind.unavailable;
    const message = (err as Error).message;
    const refused = this.kind.refusals.has(code);
    const wait = Math.round(backoffDelay(failures - 1, refused ? REFUSED : TRANSIENT));
    this.health.failures += 1;
    this.health.state = 'backoff';
    this.health.lastError = { code, message, at: new Date().toISOString() };
    this.health.nextAttemptAt = new Date(Date.now() + wait).toISOString();
    this.failed(code);
    this.opts.log[refused ? 'error' : 'warn'](
      { code, retryInMs: wait, attempt: failures },
      `mailbox ${this.opts.user}: ${message}; next attempt in ${Math.round(wait / 1000)} s`,
    );
  }

  line(): AdapterHealth {
    const h = this.health;
    return {
      name: this.opts.instance,
      ok: h.state === 'idle' || h.state === 'syncing',
      state: h.state,
      detail: { ...(h as MailboxHealth), lastSyncAt: h.lastSyncAt ?? null } as Record<string, unknown>,
      ...(h.lastError ? { lastError: { code: h.lastError.code, message: h.lastError.message } } : {}),
      folders: this.folderSyncs(),
    };
  }
}
