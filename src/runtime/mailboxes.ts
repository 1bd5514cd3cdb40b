/**
 * Mailbox states (src/controls/): each pull adapter with controls is a mailbox whose state the
 * store keeps under its lease name (`imap:<account>`, `graph:<entry>/<user>`). A mailbox runs
 * while it is enabled; it stops when disabled — by command (`mailgate mailboxes disable`, the
 * admin API: wins over the configuration until enabled again), by its configuration
 * (`enabled: false`), or on its own after failing for `disable_after_ms` without a success
 * (reason `sync_error`, or `quota` when the provider refused for quota; the adapter's own backoff
 * runs until then). Enabling starts it again, from its checkpoints. Every replica reads the
 * states every `checkMs`, so a command reaches whichever replica reads the mailbox.
 */
import { mailboxErrorKind } from '../controls/errors.js';
import type { Logger } from '../logger.js';
import type { AdapterState, RuntimeEvents } from '../pipeline/events.js';
import { sleep } from '../pipeline/sleep.js';
import type { Adapter, AdapterHealth, FilteredReport } from '../pipeline/types.js';
import type { ControlStore, MailboxStateRow } from '../store/types.js';

/** What the guard needs of a running adapter (the runtime's AdapterEntry). */
export interface GuardedEntry {
  kind: string;
  name: string;
  adapter: Adapter;
  state: AdapterState;
  disabled?: MailboxHold;
}

export interface MailboxGuardOptions {
  store: ControlStore;
  events?: RuntimeEvents | undefined;
  logger: Logger;
  /** How often states are read and failing mailboxes checked, in ms. */
  checkMs: number;
}

/** Why a mailbox does not run, as status and the console show it. */
export interface MailboxHold {
  reason: 'user' | 'quota' | 'sync_error';
  byCommand: boolean;
  errorKind?: string;
  errorCode?: string;
  message?: string;
}

/** Whether a mailbox runs: a command wins, then the configuration, then a disable of its own. */
export function holdOf(row: MailboxStateRow | undefined, configured: boolean): MailboxHold | undefined {
  if (row?.byCommand === true) return row.enabled ? undefined : { reason: row.reason ?? 'user', byCommand: true };
  if (!configured) return { reason: 'user', byCommand: false, message: 'enabled: false in the configuration' };
  if (row !== undefined && !row.enabled) {
    return {
      reason: row.reason ?? 'sync_error',
      byCommand: false,
      ...(row.errorKind ? { errorKind: row.errorKind } : {}),
      ...(row.errorCode ? { errorCode: row.errorCode } : {}),
      ...(row.errorMessage ? { message: row.errorMessage } : {}),
    };
  }
  return undefined;
}

/** The first failing health line (not ok, with an error): the mailbox's current failure. */
function failure(lines: readonly AdapterHealth[]): { code: string; message: string } | undefined {
  const bad = lines.find((h) => !h.ok && h.lastError !== undefined);
  return bad?.lastError;
}

export class MailboxGuard {
  private rows = new Map<string, MailboxStateRow>();
  private readonly opts: MailboxGuardOptions;
  /** Filtered counts not yet written, per mailbox and folder. */
  private readonly pending = new Map<string, Map<string, number>>();
  private flushing: Promise<void> = Promise.resolve();
  /** The folder states last written, per mailbox and folder (JSON): written again only when changed. */
  private readonly written = new Map<string, string>();

  constructor(opts: MailboxGuardOptions) {
    this.opts = opts;
  }

  /** The state row of a mailbox as last read. */
  row(mailbox: string): MailboxStateRow | undefined {
    return this.rows.get(mailbox);
  }

  private async refresh(): Promise<void> {
    const rows = await this.opts.store.listMailboxStates();
    this.rows = new Map(rows.map((r) => [r.mailbox, r]));
  }

  /** A message the mailbox's filter left out: reported at once, counted in the store in the next flush. */
  filtered(report: FilteredReport): void {
    this.opts.events?.emit('item:filtered', report);
    const mailbox = `${report.adapter}:${report.instance}`;
    let folders = this.pending.get(mailbox);
    if (folders === undefined) this.pending.set(mailbox, (folders = new Map()));
    folders.set(report.folder, (folders.get(report.folder) ?? 0) + 1);
  }

  /** Writes the filtered counts gathered so far (each check, and at the end). */
  flush(): Promise<void> {
    const batch = [...this.pending.entries()].flatMap(([m, f]) => [...f.entries()].map(([folder, n]) => ({ m, folder, n })));
    this.pending.clear();
    this.flushing = this.flushing.then(async () => {
      for (const { m, folder, n } of batch) await this.opts.store.countFiltered(m, folder, n);
    });
    return this.flushing.catch((err: unknown) => this.opts.logger.warn({ err }, 'counting filtered messages failed'));
  }

  /**
   * Runs `run` (the adapter) while the mailbox is enabled; stops it when it is disabled and
   * starts it again once enabled. Resolves when the signal aborts or the adapter finished by itself.
   */
  async run(e: GuardedEntry, name: string, run: (signal: AbortSignal) => Promise<void>, signal: AbortSignal): Promise<void> {
    const controls = e.adapter.controls ?? { enabled: true, disableAfterMs: Number.POSITIVE_INFINITY };
    const log = this.opts.logger.child({ mailbox: name });
    while (!signal.aborted) {
      await this.refresh().catch((err: unknown) => log.warn({ err }, 'reading the mailbox state failed'));
      const hold = holdOf(this.rows.get(name), controls.enabled);
      if (hold !== undefined) {
        e.disabled = hold;
        if (e.state !== 'disabled') {
          e.state = 'disabled';
          this.opts.events?.emit('adapter:state', { kind: e.kind, name: e.name, state: 'disabled' });
          log.warn({ reason: hold.reason, errorKind: hold.errorKind }, `mailbox ${name} is disabled (${hold.reason})`);
        }
        await sleep(this.opts.checkMs, signal);
        continue;
      }
      delete e.disabled;
      const child = new AbortController();
      const stop = (): void => child.abort();
      signal.addEventListener('abort', stop, { once: true });
      const watching = this.watch(e, name, controls.disableAfterMs, child, log);
      try {
        await run(child.signal);
      } finally {
        signal.removeEventListener('abort', stop);
        child.abort();
        await watching;
        await this.flush();
        await this.saveFolders(name, e).catch((err: unknown) => log.warn({ err }, 'saving the folder states failed'));
      }
      // Ended by itself (a files drop read to its end, or failed): not a disable.
      if (!signal.aborted && e.state !== 'stopped') return;
    }
  }

  /** While the adapter runs: stops it once its mailbox is disabled, and disables one that fails too long. */
  private async watch(e: GuardedEntry, name: string, disableAfterMs: number, child: AbortController, log: Logger): Promise<void> {
    while (!child.signal.aborted) {
      await sleep(this.opts.checkMs, child.signal);
      if (child.signal.aborted) return;
      try {
        await this.flush();
        await this.saveFolders(name, e);
        await this.refresh();
        const row = this.rows.get(name);
        if (holdOf(row, e.adapter.controls?.enabled ?? true) !== undefined) return child.abort();
        if (await this.track(name, row, failure(e.adapter.health?.() ?? []), disableAfterMs, log)) return child.abort();
      } catch (err) {
        log.warn({ err }, 'checking the mailbox state failed');
      }
    }
  }

  /** Writes the folders' sync states the adapter reports, those that changed since the last write. */
  private async saveFolders(name: string, e: GuardedEntry): Promise<void> {
    for (const line of e.adapter.health?.() ?? []) {
      for (const f of line.folders ?? []) {
        const state = { state: f.state, syncedUntil: f.syncedUntil ?? null, lastSynced: f.lastSynced ?? null, behind: f.behind ?? null };
        const key = `${name}\u0000${f.folder}`;
        const json = JSON.stringify(state);
        if (this.written.get(key) === json) continue;
        await this.opts.store.putFolderState(name, f.folder, state);
        this.written.set(key, json);
      }
    }
  }

  /** Records the start and end of a run of failures; true when the mailbox was disabled for it. */
  private async track(
    name: string,
    row: MailboxStateRow | undefined,
    failing: { code: string; message: string } | undefined,
    disableAfterMs: number,
    log: Logger,
  ): Promise<boolean> {
    const { store, events } = this.opts;
    if (failing === undefined) {
      if (row?.failingSince)
        await store.putMailboxState(name, { enabled: true, failingSince: null, errorCode: null, errorKind: null, errorMessage: null });
      return false;
    }
    const errorKind = mailboxErrorKind(failing.code);
    const error = { errorCode: failing.code, errorKind, errorMessage: failing.message };
    if (!row?.failingSince) {
      await store.putMailboxState(name, { enabled: true, failingSince: new Date().toISOString(), ...error });
      return false;
    }
    if (Date.now() - Date.parse(row.failingSince) < disableAfterMs) {
      if (row.errorCode !== failing.code) await store.putMailboxState(name, { enabled: true, ...error });
      return false;
    }
    const reason = errorKind === 'quota' ? 'quota' : 'sync_error';
    await store.putMailboxState(name, { enabled: false, reason, byCommand: false, ...error });
    log.error(
      { code: failing.code, errorKind, reason, failingSince: row.failingSince },
      `mailbox ${name} disabled: failing since ${row.failingSince} (${failing.code}: ${failing.message}); enable it with \`mailgate mailboxes enable ${name}\``,
    );
    events?.emit('mailbox:state', { mailbox: name, enabled: false, reason, errorKind, errorCode: failing.code, message: failing.message });
    return true;
  }
}
