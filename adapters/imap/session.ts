/**
 * One connected session of an account: syncs the folders that are due, then waits — in IDLE on
 * the first folder (a watchdog NOOP proves the connection alive) or until the next poll — and
 * resyncs the other folders periodically. Throws when the connection closes; returns once the
 * signal aborted.
 */
import type { ImapFlow } from 'imapflow';
import type { FilterReason, MessageFilter } from '../../src/controls/filter.js';
import { GatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Intake } from '../../src/pipeline/types.js';
import type { AfterDeliveryAction, ImapAccountConfig } from './config.js';
import { listFolders } from './folders.js';
import type { AccountHealthTracker } from './health.js';
import { classify, withDeadline } from './retry.js';
import { syncFolder } from './sync.js';

/** The settling NOOP comes this long after the session started to wait in IDLE. */
const SETTLE_AFTER_IDLE_MS = 1000;
/** Deadline of the watchdog's NOOP (at most the watchdog interval): a live server answers within seconds. */
const WATCHDOG_NOOP_MS = 30_000;

export interface SessionContext {
  config: ImapAccountConfig;
  action: AfterDeliveryAction;
  tracker: AccountHealthTracker;
  sink: Intake;
  signal: AbortSignal;
  /** The last socket error of this client, if any (the cause of a close no command saw). */
  socketError: (client: ImapFlow) => Error | undefined;
  /** The folders are synced and the session waits: the connection has proved itself. */
  onSettled: () => void;
  log: Logger;
  /** `since` resolved for this account, the filter of its controls, and where left-out messages are counted. */
  since?: Date | undefined;
  filter?: MessageFilter;
  onFiltered?: (folder: string, reason: FilterReason) => void;
}

export class Session {
  idleFolder: string | undefined;
  private folders: string[] = [];
  private readonly dirty = new Set<string>();
  /** Folders the server said do not exist, at their last sync. */
  private readonly missing = new Set<string>();
  private closed = false;
  /** This connection's steps and actions, one at a time (exclusive). */
  private queue: Promise<unknown> = Promise.resolve();
  private wakeUp = (): void => undefined;
  private nextTick = Infinity;
  private nextResync = Infinity;
  private nextSettle = Infinity;

  constructor(
    readonly client: ImapFlow,
    private readonly ctx: SessionContext,
  ) {}

  /**
   * Runs `fn` alone on this connection: sync steps and after-delivery actions never interleave.
   * The queue is the connection's own, so an operation of a connection that has ended (imapflow
   * may leave a command's promise unsettled when the socket closes under it) holds up nothing of
   * the next connection's; it ends at its own deadline.
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * `work` (an operation on this connection), or a MAILGATE_ERR_IMAP_CONNECTION failure as soon
   * as the connection closes under it: its caller learns at once rather than at the deadline.
   */
  whileOpen<T>(work: Promise<T>, what: string): Promise<T> {
    if (this.closed || !this.client.usable) {
      work.catch(() => undefined);
      return Promise.reject(this.lost(what));
    }
    let onClose = (): void => undefined;
    const closed = new Promise<never>((_, reject) => {
      onClose = () => reject(this.lost(what));
      this.client.once('close', onClose);
    });
    return Promise.race([work, closed]).finally(() => {
      this.client.off('close', onClose);
      work.catch(() => undefined);
    });
  }

  private lost(what: string): GatewayError {
    return new GatewayError('MAILGATE_ERR_IMAP_CONNECTION', `connection to ${this.ctx.config.host} closed during ${what}`);
  }

  /** Ends a wait at once (a notification, shutdown). */
  wake(): void {
    this.wakeUp();
  }

  /** Syncs `folder` at the next step (a notification, or the folder was left for a while). */
  markDirty(folder: string): void {
    if (!this.folders.includes(folder)) return;
    this.dirty.add(folder);
    this.wakeUp();
  }

  async run(): Promise<void> {
    const onExists = (ev: { path: string }): void => this.markDirty(ev.path);
    const onClose = (): void => {
      this.closed = true;
      this.wakeUp();
    };
    this.client.on('exists', onExists);
    this.client.on('close', onClose);
    try {
      await this.start();
      while (!this.ctx.signal.aborted) await this.step();
    } finally {
      this.client.off('exists', onExists);
      this.client.off('close', onClose);
    }
  }

  private deadline<T>(work: Promise<T>, what: string, ms = this.ctx.config.command_timeout_ms): Promise<T> {
    return withDeadline(work, ms, what, () => this.client.close());
  }

  private tick(): number {
    return this.idleFolder === undefined ? this.ctx.config.poll_interval_ms : this.ctx.config.idle_watchdog_ms;
  }

  private async start(): Promise<void> {
    const { config, action } = this.ctx;
    this.folders = await this.deadline(listFolders(this.client, config.folders, action, this.include()), 'LIST');
    this.idleFolder = config.idle && this.client.capabilities.has('IDLE') ? this.folders[0] : undefined;
    this.folders.forEach((f) => this.dirty.add(f));
    this.nextTick = Date.now() + this.tick();
    this.nextResync = Date.now() + config.resync_interval_ms;
  }

  /** The `exclude_folders` test, when the account has one. */
  private include(): ((path: string, separator: string) => boolean) | undefined {
    const { filter, config } = this.ctx;
    return filter === undefined || config.exclude_folders.length === 0 ? undefined : (p, sep) => filter.folder(p, sep);
  }

  /** One step: sync what is due, or wait for a notification or a timer and act on it. */
  private async step(): Promise<void> {
    this.assertOpen();
    if (this.dirty.size > 0) return this.syncDue();
    const idle = this.idleFolder;
    if (idle !== undefined && !this.missing.has(idle) && (this.client.mailbox === false || this.client.mailbox.path !== idle)) {
      // The idle folder was left (another folder synced, an action ran): what arrived meanwhile
      // was announced to no one. A fresh EXAMINE of it finds that mail and selects it for IDLE.
      this.dirty.add(idle);
      return;
    }
    this.ctx.onSettled();
    this.ctx.tracker.set('idle');
    if (idle !== undefined) this.idleNow();
    await this.sleep(Math.min(this.nextTick, this.nextResync, this.nextSettle) - Date.now());
    await this.timers();
  }

  /**
   * IDLE from the moment the session waits, not after imapflow's auto-IDLE delay: mail arriving
   * while the selected folder is not in IDLE is announced to no one until IDLE starts (the
   * delay cost every message that arrived within a second of the last sync up to that second).
   * The auto-IDLE delay stays for the gaps between the steps of a sync, where an IDLE would
   * only add a DONE round trip. A command (a NOOP, an after-delivery action, the next sync)
   * ends this IDLE as it ends imapflow's own; a failed IDLE shows as a closed connection.
   */
  private idleNow(): void {
    if (this.closed || this.ctx.signal.aborted || !this.client.usable || this.client.idling) return;
    this.client.idle({ whenFree: true }).catch(() => undefined);
  }

  private assertOpen(): void {
    if (!this.closed && this.client.usable) return;
    const cause = this.ctx.socketError(this.client);
    const why = this.client.byeReason ?? cause?.message ?? 'closed by the server';
    const failure = classify(cause ?? new Error(why), why);
    throw new GatewayError(
      failure.kind === 'throttle' ? failure.code : 'MAILGATE_ERR_IMAP_CONNECTION',
      `connection to ${this.ctx.config.host} closed: ${why}`,
      { cause },
    );
  }

  /** Waits `ms`, or less when woken; not at all when something is due already. */
  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.dirty.size > 0 || this.closed || this.ctx.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wakeUp = () => undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private async timers(): Promise<void> {
    if (this.closed || this.ctx.signal.aborted) return;
    const now = Date.now();
    if (now >= this.nextSettle && now < this.nextTick) {
      this.nextSettle = Infinity;
      await this.exclusive(() => this.deadline(this.client.noop(), 'NOOP', WATCHDOG_NOOP_MS));
    }
    if (now >= this.nextTick) {
      this.nextSettle = Infinity;
      this.nextTick = now + this.tick();
      if (this.idleFolder === undefined) this.folders.forEach((f) => this.dirty.add(f));
      else {
        await this.watchdog();
        this.dirty.add(this.idleFolder);
      }
    }
    if (now >= this.nextResync) {
      this.folders.forEach((f) => this.dirty.add(f));
      this.nextResync = now + this.ctx.config.resync_interval_ms;
    }
  }

  /** Silent IDLE death: a NOOP that gets no answer in time drops the connection. */
  private async watchdog(): Promise<void> {
    const ms = Math.min(WATCHDOG_NOOP_MS, this.ctx.config.idle_watchdog_ms);
    try {
      await this.exclusive(() => this.deadline(this.client.noop(), 'NOOP', ms));
    } catch (err) {
      const { code } = classify(err);
      this.ctx.log.warn({ code, noopMs: ms }, `watchdog: no answer to NOOP within ${ms} ms; the connection is dead and is replaced`);
      throw err;
    }
  }

  private async syncDue(): Promise<void> {
    this.ctx.tracker.set('syncing');
    for (const folder of [...this.dirty]) {
      if (this.ctx.signal.aborted) return;
      this.dirty.delete(folder);
      await this.syncOne(folder);
    }
    this.ctx.tracker.synced();
    // Mail committed between the last SEARCH and the start of IDLE is not announced by every
    // server (Dovecot waits for its next idle check): one NOOP once IDLE runs (it starts as
    // soon as the session waits, see idleNow).
    if (this.idleFolder !== undefined) this.nextSettle = Date.now() + SETTLE_AFTER_IDLE_MS;
  }

  private async syncOne(folder: string): Promise<void> {
    const { config, sink, signal, tracker, log } = this.ctx;
    const onReset = (previous: number, now: number): void =>
      log.warn(
        { folder, previousUidValidity: previous, uidValidity: now },
        `UIDVALIDITY of "${folder}" changed (${previous} -> ${now}): reading the folder again; comment ids and the ledger keep it from billing twice`,
      );
    try {
      const res = await syncFolder(
        this.client,
        {
          config,
          sink,
          signal,
          exclusive: (fn) => this.exclusive(fn),
          onReset,
          onChunk: (f, n, s) => {
            tracker.counted(n, s);
            tracker.passRead(f, n);
          },
          onPassStart: (f, n) => tracker.passStarted(f, n),
          since: this.ctx.since,
          ...(this.ctx.filter ? { filter: this.ctx.filter } : {}),
          ...(this.ctx.onFiltered ? { onFiltered: this.ctx.onFiltered } : {}),
        },
        folder,
      );
      this.missing.delete(folder);
      tracker.folderSynced(folder, res.uidValidity, res.lastUid);
    } catch (err) {
      const failure = classify(err);
      if (failure.code !== 'MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND') throw err;
      // The service is stopping: the pass is abandoned, and its answer arriving after the
      // connection's last line ("disconnected: the service is stopping") says nothing new.
      if (signal.aborted) return;
      if (!this.missing.has(folder))
        log.warn({ folder, code: failure.code }, `folder "${folder}" does not exist; tried again at the next resync`);
      this.missing.add(folder);
      tracker.folderFailed(folder, failure);
    }
  }
}
