/**
 * The IMAP adapter: reads one or more accounts (one connection each) into the intake sink,
 * reports a health state per account, and runs the opt-in after-delivery actions.
 * docs/imap.md describes the behaviour and every option.
 */
import { GatewayError } from '../../src/errors.js';
import type { Adapter, IntakeSink, Origin } from '../../src/pipeline/types.js';
import { AccountRunner, type AccountOptions } from './account.js';
import { groupOrigins, runAfterDelivery, type AfterDeliveryResult } from './actions.js';
import { parseImapAccount, type ImapAccountConfig } from './config.js';
import type { ImapHealth } from './health.js';

export type { AfterDeliveryResult } from './actions.js';
export { OMITTED_SIZE_HEADER } from './assemble.js';
export { imapAccountSchema, parseImapAccount, type ImapAccountConfig, type ImapAccountInput } from './config.js';
export type { ErrorInfo, FolderHealth, ImapHealth, ImapState } from './health.js';
export { createTokenProvider, type TokenProvider } from './oauth.js';
export { checkpointKey, type FolderCheckpoint } from './sync.js';

export interface ImapAdapterOptions extends AccountOptions {
  /** How long afterDelivery() waits for an account to be connected. Default 60000 ms. */
  actionWaitMs?: number;
}

export class ImapAdapter implements Adapter {
  readonly kind = 'imap';
  private readonly runners: AccountRunner[];
  private readonly actionWaitMs: number;

  constructor(accounts: readonly unknown[], opts: ImapAdapterOptions = {}) {
    const configs: ImapAccountConfig[] = accounts.map(parseImapAccount);
    const names = new Set<string>();
    for (const c of configs) {
      if (names.has(c.name)) throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `adapters.imap: account name "${c.name}" is used twice; names must be unique`);
      names.add(c.name);
    }
    this.runners = configs.map((c) => new AccountRunner(c, opts));
    this.actionWaitMs = opts.actionWaitMs ?? 60_000;
  }

  /** Runs every account until the signal aborts. Never rejects because of a server or socket error. */
  async start(sink: IntakeSink, signal: AbortSignal): Promise<void> {
    await Promise.all(this.runners.map((r) => r.run(sink, signal)));
  }

  health(): ImapHealth[] {
    return this.runners.map((r) => r.health());
  }

  /**
   * Applies each account's `after_delivery` action to the given origins (messages the API has
   * accepted). Origins of other adapters or accounts, or read under another UIDVALIDITY, are
   * returned as skipped. Rejects with MAILGATE_ERR_IMAP_UNAVAILABLE when an account stays
   * disconnected longer than `actionWaitMs` (the caller retries later).
   */
  async afterDelivery(origins: Origin[]): Promise<AfterDeliveryResult> {
    const applied: Origin[] = [];
    for (const runner of this.runners) {
      const { groups } = groupOrigins(runner.config.name, origins);
      if (groups.length === 0) continue;
      if (runner.action.kind === 'none') {
        groups.forEach((g) => applied.push(...g.origins));
        continue;
      }
      const res = await runner.withSession(this.actionWaitMs, (client) => runAfterDelivery(client, runner.action, groups));
      applied.push(...res.applied);
    }
    const done = new Set(applied);
    return { applied, skipped: origins.filter((o) => !done.has(o)) };
  }
}

export function createImapAdapter(accounts: readonly unknown[], opts: ImapAdapterOptions = {}): ImapAdapter {
  return new ImapAdapter(accounts, opts);
}
