/** The health of one IMAP account, as `adapter.health()` reports it. */
import type { ImapFlow } from 'imapflow';
import type { ErrorCode } from '../../src/errors.js';
import type { FolderSync } from '../../src/pipeline/types.js';
import type { Failure } from './retry.js';

export type ImapState = 'connecting' | 'idle' | 'syncing' | 'backoff' | 'auth_failed' | 'stopped';

export interface ErrorInfo {
  code: ErrorCode;
  message: string;
  at: string;
}

export interface FolderHealth {
  uidValidity?: number;
  lastUid?: number;
  lastSyncAt?: string;
  /** While a pass reads the folder: when it started, and the messages it has left to read. */
  passStartedAt?: string;
  behind?: number;
  /** The start of the last complete pass: mail received before it was read. */
  syncedUntil?: string;
  /** Messages of this folder left out by the filter. */
  filtered?: number;
  error?: ErrorInfo;
}

export interface ImapHealth {
  account: string;
  state: ImapState;
  lastError?: ErrorInfo;
  /** End of the last complete pass over the folders that were due. */
  lastSyncAt?: string;
  /** While in backoff / auth_failed: when the next connection attempt starts. */
  nextAttemptAt?: string;
  /** Connections that ended in an error (each followed by a backoff). */
  failures: number;
  /** Messages handed to the sink and made durable. */
  messages: number;
  /** Of those, messages whose attachments were replaced by stub parts. */
  stubbed: number;
  /** Messages left out by the account's filter (participants, skip): never handed to intake. */
  filtered: number;
  /** Bytes received from the IMAP server over all connections. */
  bytesReceived: number;
  folders: Record<string, FolderHealth>;
}

export class AccountHealthTracker {
  private readonly h: ImapHealth;
  private bytesDone = 0;

  constructor(account: string) {
    this.h = { account, state: 'stopped', failures: 0, messages: 0, stubbed: 0, filtered: 0, bytesReceived: 0, folders: {} };
  }

  get state(): ImapState {
    return this.h.state;
  }

  set(state: ImapState): void {
    this.h.state = state;
    if (state !== 'backoff' && state !== 'auth_failed') delete this.h.nextAttemptAt;
  }

  noteError(f: Failure): void {
    this.h.lastError = { code: f.code, message: f.message, at: new Date().toISOString() };
  }

  failed(f: Failure, delayMs: number): void {
    this.noteError(f);
    this.h.failures += 1;
    this.set(f.kind === 'auth' ? 'auth_failed' : 'backoff');
    this.h.nextAttemptAt = new Date(Date.now() + delayMs).toISOString();
  }

  counted(messages: number, stubbed: number): void {
    this.h.messages += messages;
    this.h.stubbed += stubbed;
  }

  filtered(folder: string): void {
    this.h.filtered += 1;
    const f = (this.h.folders[folder] ??= {});
    f.filtered = (f.filtered ?? 0) + 1;
  }

  /** A pass over `folder` listed `toRead` messages to read. */
  passStarted(folder: string, toRead: number): void {
    const f = (this.h.folders[folder] ??= {});
    f.passStartedAt = new Date().toISOString();
    f.behind = toRead;
  }

  /** `n` messages of the pass were made durable or filtered out. */
  passRead(folder: string, n: number): void {
    const f = this.h.folders[folder];
    if (f?.behind !== undefined) f.behind = Math.max(0, f.behind - n);
  }

  folderSynced(folder: string, uidValidity: number, lastUid: number): void {
    const prev = this.h.folders[folder];
    const filtered = prev?.filtered;
    const syncedUntil = prev?.passStartedAt ?? prev?.syncedUntil;
    this.h.folders[folder] = {
      uidValidity,
      lastUid,
      lastSyncAt: new Date().toISOString(),
      ...(syncedUntil ? { syncedUntil } : {}),
      ...(filtered ? { filtered } : {}),
    };
  }

  /** The folders in the shape every kind reports (`AdapterHealth.folders`). */
  folderSyncs(): FolderSync[] {
    return Object.entries(this.h.folders).map(([folder, f]) => ({
      folder,
      state: f.passStartedAt === undefined && f.lastSyncAt !== undefined ? 'up_to_date' : 'in_progress',
      ...(f.syncedUntil ? { syncedUntil: f.syncedUntil } : {}),
      ...(f.lastSyncAt ? { lastSynced: f.lastSyncAt } : {}),
      ...(f.behind !== undefined ? { behind: f.behind } : {}),
    }));
  }

  folderFailed(folder: string, f: Failure): void {
    const at = new Date().toISOString();
    this.h.folders[folder] = { ...this.h.folders[folder], error: { code: f.code, message: f.message, at } };
    this.noteError(f);
  }

  synced(): void {
    this.h.lastSyncAt = new Date().toISOString();
  }

  /** Keeps the byte count of a connection that is going away. */
  absorbStats(client: ImapFlow): void {
    this.bytesDone += client.stats().received;
  }

  snapshot(current: ImapFlow | undefined): ImapHealth {
    const live = current === undefined ? 0 : current.stats().received;
    return structuredClone({ ...this.h, bytesReceived: this.bytesDone + live });
  }
}
