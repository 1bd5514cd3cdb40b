/** The health of one IMAP account, as `adapter.health()` reports it. */
import type { ImapFlow } from 'imapflow';
import type { ErrorCode } from '../../src/errors.js';
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
  /** Bytes received from the IMAP server over all connections. */
  bytesReceived: number;
  folders: Record<string, FolderHealth>;
}

export class AccountHealthTracker {
  private readonly h: ImapHealth;
  private bytesDone = 0;

  constructor(account: string) {
    this.h = { account, state: 'stopped', failures: 0, messages: 0, stubbed: 0, bytesReceived: 0, folders: {} };
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

  folderSynced(folder: string, uidValidity: number, lastUid: number): void {
    this.h.folders[folder] = { uidValidity, lastUid, lastSyncAt: new Date().toISOString() };
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
