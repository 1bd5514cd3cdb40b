/**
 * The IMAP adapter: reads one or more accounts (one connection each) into the intake sink,
 * reports a health state per account, and runs the opt-in after-delivery actions.
 * docs/imap.md describes the behaviour and every option.
 */
import { GatewayError } from '../../src/errors.js';
import { fanOut } from '../../src/pipeline/fan-out.js';
import type { KindContext, KindImplementation } from '../../src/pipeline/kind.js';
import type { Adapter, AdapterHealth, Intake, Origin } from '../../src/pipeline/types.js';
import { AccountRunner, type AccountOptions } from './account.js';
import { groupOrigins, runAfterDelivery, type AfterDeliveryResult } from './actions.js';
import { parseImapAccount, type ImapAccountConfig } from './config.js';
import { duplicateAccount } from './kind.js';
import type { ImapHealth } from './health.js';
import { classify } from './retry.js';

export type { AfterDeliveryResult } from './actions.js';
export { OMITTED_SIZE_HEADER } from './assemble.js';
export { imapAccountSchema, parseImapAccount, type ImapAccountConfig, type ImapAccountInput } from './config.js';
export { duplicateAccount } from './kind.js';
export type { ErrorInfo, FolderHealth, ImapHealth, ImapState } from './health.js';
export { createTokenProvider, type TokenProvider } from './oauth.js';
export { checkpointKey, type FolderCheckpoint } from './checkpoint.js';
export { ConnectionPacer, PACING, processPacer, setProcessPacing, type PacerLimits } from '../../src/pipeline/pacer.js';

export interface ImapAdapterOptions extends AccountOptions {
  /** How long afterDelivery() waits for an account that is connecting. Default 60000 ms. */
  actionWaitMs?: number;
}

export class ImapAdapter implements Adapter {
  readonly kind = 'imap';
  /** The account's name when built from one configuration entry (the registry does), else `imap`. */
  readonly name: string;
  readonly mode = 'pull';
  private readonly runners: AccountRunner[];
  private readonly actionWaitMs: number;
  readonly controls?: { enabled: boolean; disableAfterMs: number };

  constructor(accounts: readonly unknown[], opts: ImapAdapterOptions = {}) {
    const configs: ImapAccountConfig[] = accounts.map((a, i) => parseImapAccount(a, i));
    const duplicate = duplicateAccount(configs);
    if (duplicate !== undefined)
      throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `adapters.imap[${duplicate.index}].name: ${duplicate.message}`);
    this.runners = configs.map((c) => new AccountRunner(c, opts));
    this.name = configs.length === 1 ? configs[0]!.name : 'imap';
    if (configs.length === 1) this.controls = { enabled: configs[0]!.enabled, disableAfterMs: configs[0]!.disable_after_ms };
    this.actionWaitMs = opts.actionWaitMs ?? 60_000;
  }

  /** Runs every account until the signal aborts. Never rejects because of a server or socket error. */
  async start(sink: Intake, signal: AbortSignal): Promise<void> {
    // One listener on the caller's signal, fanned out: accounts listen on their own signals.
    const fanned = fanOut(signal, this.runners.length);
    try {
      await Promise.all(this.runners.map((r, i) => r.run(sink, fanned.signals[i]!)));
    } finally {
      fanned.dispose();
    }
  }

  accountHealth(): ImapHealth[] {
    return this.runners.map((r) => r.health());
  }

  /**
   * One line per account for readiness, status and the connection-state metric: healthy while
   * connected (idling between passes, or syncing); the detail is the account's full health.
   */
  health(): AdapterHealth[] {
    return this.runners
      .map((r) => ({ r, h: r.health() }))
      .map(({ r, h }) => ({
        name: h.account,
        ok: h.state === 'idle' || h.state === 'syncing',
        state: h.state,
        // lastSyncAt (end of the last complete pass) is always shown, null when unknown.
        detail: { ...h, lastSyncAt: h.lastSyncAt ?? null },
        folders: r.folderSyncs(),
        ...(h.lastError ? { lastError: h.lastError } : {}),
      }));
  }

  /**
   * Applies each account's `after_delivery` action to the given origins (messages the API has
   * accepted), every account on its own connection at the same time. Origins of other adapters
   * or accounts, or read under another UIDVALIDITY, are returned as skipped. An account that
   * cannot apply its action now (no connection within `actionWaitMs`, or at once while it is in
   * backoff; a failed command) returns its origins as deferred: they stay due for the caller
   * to retry, and the other accounts' actions are applied all the same. Never rejects.
   */
  async afterDelivery(origins: Origin[]): Promise<AfterDeliveryResult> {
    const results = await Promise.all(this.runners.map((r) => this.applyFor(r, origins)));
    const applied = results.flatMap((r) => r.applied);
    const deferred = results.flatMap((r) => r.deferred);
    const settled = new Set([...applied, ...deferred]);
    return { applied, deferred, skipped: origins.filter((o) => !settled.has(o)) };
  }

  onActionsReady(listener: () => void): void {
    for (const r of this.runners) r.onConnected = listener;
  }

  private async applyFor(runner: AccountRunner, origins: Origin[]): Promise<{ applied: Origin[]; deferred: Origin[] }> {
    const { groups } = groupOrigins(runner.config.name, origins);
    const mine = groups.flatMap((g) => g.origins);
    if (mine.length === 0 || runner.action.kind === 'none') return { applied: mine, deferred: [] };
    // Not read by this process (another replica holds its mailbox lease, or it has stopped): that one applies them.
    if (!runner.active) return { applied: [], deferred: mine };
    try {
      const res = await runner.withSession(this.actionWaitMs, (client) => runAfterDelivery(client, runner.action, groups));
      return { applied: res.applied, deferred: [] };
    } catch (err) {
      const { code, message } = classify(err);
      runner.log.warn({ code, count: mine.length }, `after-delivery ${runner.action.kind} failed: ${message}; the actions stay due`);
      return { applied: [], deferred: mine };
    }
  }
}

export function createImapAdapter(accounts: readonly unknown[], opts: ImapAdapterOptions = {}): ImapAdapter {
  return new ImapAdapter(accounts, opts);
}

/** The registry's factory: one account of `adapters.imap[]`, one connection. */
export function create(entry: ImapAccountConfig, ctx: KindContext): ImapAdapter {
  return new ImapAdapter([entry], { logger: ctx.logger, pacer: ctx.pacer });
}

/** The kind's implementation (adapters/imap/kind.ts). */
export const implementation: KindImplementation<ImapAccountConfig> = { create };
