/**
 * One IMAP account: one connection at a time (session.ts), rebuilt with jittered backoff after
 * any close or error. Connecting, logging in and the OAuth2 token request end at once when the
 * service stops; a connected session logs out within a short bound.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { ImapFlow } from 'imapflow';
import { GatewayError } from '../../src/errors.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { sleep } from '../../src/pipeline/sleep.js';
import { compileFilter, type MessageFilter } from '../../src/controls/filter.js';
import { controlsOf } from '../../src/controls/schema.js';
import { resolveSince } from '../../src/controls/since.js';
import type { FolderSync, Intake } from '../../src/pipeline/types.js';
import { parseAfterDelivery, type AfterDeliveryAction, type ImapAccountConfig } from './config.js';
import { endConnection, openConnection } from './connection.js';
import { AccountHealthTracker, type ImapHealth } from './health.js';
import { processPacer, type ConnectionPacer } from '../../src/pipeline/pacer.js';
import { createTokenProvider, staticTokenProvider, type TokenProvider, type TokenProviderOptions } from './oauth.js';
import { BACKOFF, backoffDelay, classify, withDeadline, type Failure } from './retry.js';
import { Session } from './session.js';

export interface AccountOptions {
  tokens?: TokenProviderOptions;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
  /** Backoff bases and ceilings per failure kind (default BACKOFF in retry.ts). */
  backoff?: Partial<typeof BACKOFF>;
  /** Paces connection attempts; default: the process-wide pacer (pacer.ts), shared by every account. */
  pacer?: ConnectionPacer;
  /** imapflow's auto-IDLE delay between the steps of a sync (default AUTO_IDLE_DELAY_MS; tests). */
  autoIdleDelayMs?: number;
  /** Each account logs through `logger.child({ adapter: 'imap', instance, account })` (`account` as before). Default: silent. */
  logger?: Logger;
}

/** One silent logger for every account built without one (a pino instance each would cost memory per account). */
let silent: Logger | undefined;

export class AccountRunner {
  readonly action: AfterDeliveryAction;
  readonly log: Logger;
  private readonly tokens: TokenProvider | undefined;
  private readonly tracker: AccountHealthTracker;
  private session: Session | undefined;
  /** Failed connections in a row (the backoff exponent). */
  private failures = 0;
  /** The LOGOUT under way at shutdown. */
  private ending: Promise<void> = Promise.resolve();
  private endingClient: ImapFlow | undefined;
  /** run() has returned: the account stays disconnected. */
  private ran = false;
  /** run() is under way (not before it is called, nor after it returned). */
  active = false;
  /** Called each time a connection is established (after-delivery actions deferred meanwhile can run). */
  onConnected: (() => void) | undefined;
  private readonly lastSocketError = new WeakMap<ImapFlow, Error>();
  /** The account's filter (participants, skip, exclude_folders). */
  readonly filter: MessageFilter;
  /** `since` resolved (a duration counts back from the first sync, kept in the store); null: none. */
  private since: Date | null | undefined;

  constructor(
    readonly config: ImapAccountConfig,
    private readonly opts: AccountOptions = {},
  ) {
    this.action = parseAfterDelivery(config.after_delivery);
    const auth = config.auth;
    this.tokens =
      'oauth2' in auth
        ? createTokenProvider(auth.oauth2, opts.tokens)
        : 'accessToken' in auth
          ? staticTokenProvider(auth.accessToken)
          : undefined;
    this.tracker = new AccountHealthTracker(config.name);
    this.filter = compileFilter(controlsOf(config), [auth.user]);
    this.log = (opts.logger ?? (silent ??= createLogger(false))).child({ adapter: 'imap', instance: config.name, account: config.name });
  }

  health(): ImapHealth {
    return this.tracker.snapshot(this.session?.client);
  }

  folderSyncs(): FolderSync[] {
    return this.tracker.folderSyncs();
  }

  /**
   * Waits (bounded) for a usable session, then runs `fn` on it exclusively. Does not wait while
   * the account is known to be down (backoff, auth_failed, or stopped after running): nothing
   * would change meanwhile. Fails as soon as that connection closes under `fn`.
   */
  async withSession<T>(timeoutMs: number, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    const until = Date.now() + timeoutMs;
    while (this.session === undefined || !this.session.client.usable) {
      const state = this.tracker.state;
      const down = state === 'backoff' || state === 'auth_failed' || (state === 'stopped' && this.ran);
      if (down || Date.now() >= until) {
        const why = down ? `it is ${state.replace('_', ' ')}` : `none within ${timeoutMs} ms`;
        throw new GatewayError('MAILGATE_ERR_IMAP_UNAVAILABLE', `account ${this.config.name} has no usable IMAP connection (${why})`);
      }
      await delay(100);
    }
    const session = this.session;
    return session.exclusive(async () => {
      try {
        return await withDeadline(
          session.whileOpen(fn(session.client), 'an after-delivery action'),
          this.config.command_timeout_ms,
          'after-delivery action',
          () => session.client.close(),
        );
      } finally {
        // The action selected other folders: the idle folder is examined afresh before IDLE.
        if (session.idleFolder !== undefined) session.markDirty(session.idleFolder);
      }
    });
  }

  /** Connects, syncs and idles until `signal` aborts; then logs out (bounded) and resolves. */
  async run(sink: Intake, signal: AbortSignal): Promise<void> {
    this.active = true;
    try {
      while (!signal.aborted) {
        const delay = await this.attempt(sink, signal);
        if (delay !== undefined) await sleep(delay, signal);
      }
      await this.ending;
    } finally {
      this.active = false;
      this.ran = true;
      this.tracker.set('stopped');
    }
  }

  /** One connection's life; resolves with the backoff before the next one, if it failed. */
  private async attempt(sink: Intake, signal: AbortSignal): Promise<number | undefined> {
    let client: ImapFlow | undefined;
    try {
      this.tracker.set('connecting');
      client = await openConnection({
        config: this.config,
        tokens: this.tokens,
        signal,
        pacer: this.opts.pacer ?? processPacer(),
        ...(this.opts.autoIdleDelayMs === undefined ? {} : { autoIdleDelayMs: this.opts.autoIdleDelayMs }),
        onSocketError: (c, err) => this.lastSocketError.set(c, err),
      });
      this.log.info(
        { host: this.config.host, port: this.config.port, secure: this.config.secure },
        `connected to ${this.config.host}:${this.config.port}`,
      );
      this.onConnected?.();
      await this.serve(client, sink, signal);
      return undefined;
    } catch (err) {
      if (signal.aborted) return undefined;
      const failure = classify(err);
      const delay = backoffDelay(this.failures++, failure, this.opts.random, { ...BACKOFF, ...this.opts.backoff });
      this.tracker.failed(failure, delay);
      this.logFailure(failure, delay, client === undefined ? undefined : (this.lastSocketError.get(client) ?? false));
      return delay;
    } finally {
      if (client !== undefined) this.release(client, signal.aborted);
    }
  }

  private async serve(client: ImapFlow, sink: Intake, signal: AbortSignal): Promise<void> {
    this.since ??= (await resolveSince(this.config.since, sink, `imap:${this.config.name}`)) ?? null;
    const report = sink.filtered?.bind(sink);
    const session = new Session(client, {
      since: this.since ?? undefined,
      filter: this.filter,
      onFiltered: (folder, reason) => {
        this.tracker.filtered(folder);
        this.tracker.passRead(folder, 1);
        report?.({ route: this.config.route, adapter: 'imap', instance: this.config.name, folder, reason });
      },
      config: this.config,
      action: this.action,
      tracker: this.tracker,
      sink,
      signal,
      socketError: (c) => this.lastSocketError.get(c),
      onSettled: () => (this.failures = 0),
      log: this.log,
    });
    const onAbort = (): void => {
      this.end(client);
      session.wake();
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    this.session = session;
    try {
      await session.run();
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Forgets a connection: closes it, or at shutdown lets its LOGOUT close it. */
  private release(client: ImapFlow, stopping: boolean): void {
    if (this.session?.client === client) this.session = undefined;
    this.tracker.absorbStats(client);
    if (stopping) this.end(client);
    else client.close();
  }

  /** Starts the bounded LOGOUT of `client` (once); run() waits for it before resolving. */
  private end(client: ImapFlow): void {
    if (this.endingClient === client) return;
    this.endingClient = client;
    this.ending = endConnection(client).then((out) =>
      this.log.info({ loggedOut: out }, `disconnected: the service is stopping${out ? ' (logged out)' : ''}`),
    );
  }

  /** One line for the end of a connection, one for the wait before the next attempt. */
  private logFailure(failure: Failure, delayMs: number, connected: Error | false | undefined): void {
    const { code, message } = failure;
    const wasConnected = connected !== undefined;
    const socket = connected instanceof Error ? ` (socket: ${connected.message})` : '';
    if (wasConnected) this.log.warn({ code, reason: message + socket }, `disconnected: ${message}${socket}`);
    const next = { code, retryInMs: delayMs, attempt: this.failures };
    if (failure.kind === 'auth') this.log.error(next, `IMAP login refused (${message}); next attempt in ${Math.round(delayMs / 1000)} s`);
    else if (failure.kind === 'throttle')
      this.log.warn(
        { ...next, hintMs: failure.hintMs },
        `throttled by the IMAP server (${message}); waiting ${Math.round(delayMs / 1000)} s`,
      );
    else if (wasConnected) this.log.warn(next, `reconnecting in ${delayMs} ms`);
    else this.log.warn(next, `cannot connect (${message}); retrying in ${delayMs} ms`);
  }
}
