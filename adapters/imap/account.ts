/**
 * One IMAP account: one connection, rebuilt with jittered backoff after any close or error;
 * folders synced on connect, then IDLE on the first folder (a watchdog NOOP proves the
 * connection alive and re-checks the folder) or polling, and a periodic resync of the others.
 */
import { ImapFlow } from 'imapflow';
import { GatewayError } from '../../src/errors.js';
import type { IntakeSink } from '../../src/pipeline/types.js';
import { parseAfterDelivery, type AfterDeliveryAction, type ImapAccountConfig } from './config.js';
import { listFolders } from './folders.js';
import { AccountHealthTracker, type ImapHealth } from './health.js';
import { createTokenProvider, staticTokenProvider, type TokenProvider, type TokenProviderOptions } from './oauth.js';
import { BACKOFF, backoffDelay, classify, sleep, withDeadline } from './retry.js';
import { syncFolder } from './sync.js';

export interface AccountOptions {
  tokens?: TokenProviderOptions;
  /** Random source for backoff jitter (tests). */
  random?: () => number;
  /** Backoff bases and ceilings per failure kind (default BACKOFF in retry.ts). */
  backoff?: Partial<typeof BACKOFF>;
}

interface Session {
  client: ImapFlow;
  idleFolder: string | undefined;
}

/** imapflow starts IDLE after this much inactivity on a selected folder. */
const AUTO_IDLE_DELAY_MS = 1000;
/** The settling NOOP comes this long after IDLE started. */
const SETTLE_AFTER_IDLE_MS = 1000;
/** Deadline of the watchdog's NOOP (at most the watchdog interval): a live server answers within seconds. */
const WATCHDOG_NOOP_MS = 30_000;

export class AccountRunner {
  readonly action: AfterDeliveryAction;
  private readonly tokens: TokenProvider | undefined;
  private readonly tracker: AccountHealthTracker;
  private session: Session | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private attempt = 0;
  private readonly lastSocketError = new WeakMap<ImapFlow, Error>();

  constructor(
    readonly config: ImapAccountConfig,
    private readonly opts: AccountOptions = {},
  ) {
    this.action = parseAfterDelivery(config.after_delivery);
    const auth = config.auth;
    this.tokens = 'oauth2' in auth ? createTokenProvider(auth.oauth2, opts.tokens) : 'accessToken' in auth ? staticTokenProvider(auth.accessToken) : undefined;
    this.tracker = new AccountHealthTracker(config.name);
  }

  health(): ImapHealth {
    return this.tracker.snapshot(this.session?.client);
  }

  /** Runs `fn` alone on the connection (sync steps and after-delivery actions never interleave). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Waits (bounded) for a usable session, then runs `fn` on it exclusively. */
  async withSession<T>(timeoutMs: number, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    const until = Date.now() + timeoutMs;
    while (this.session === undefined || !this.session.client.usable) {
      if (Date.now() >= until) throw new GatewayError('MAILGATE_ERR_IMAP_UNAVAILABLE', `account ${this.config.name} has no usable IMAP connection`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const { client, idleFolder } = this.session;
    return this.exclusive(async () => {
      const out = await withDeadline(fn(client), this.config.command_timeout_ms, 'after-delivery action', () => client.close());
      if (idleFolder !== undefined && client.usable && (client.mailbox === false || client.mailbox.path !== idleFolder)) {
        await client.mailboxOpen(idleFolder, { readOnly: true });
      }
      return out;
    });
  }

  async run(sink: IntakeSink, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let client: ImapFlow | undefined;
      try {
        this.tracker.set('connecting');
        client = await this.connect();
        await this.serve(client, sink, signal);
      } catch (err) {
        if (signal.aborted) break;
        const failure = classify(err);
        const delay = backoffDelay(this.attempt++, failure, this.opts.random, { ...BACKOFF, ...this.opts.backoff });
        this.tracker.failed(failure, delay);
        this.drop(client);
        await sleep(delay, signal);
        continue;
      }
      this.drop(client);
    }
    this.tracker.set('stopped');
  }

  private drop(client: ImapFlow | undefined): void {
    if (client === undefined) return;
    if (this.session?.client === client) this.session = undefined;
    this.tracker.absorbStats(client);
    client.close();
  }

  private async credentials(): Promise<{ user: string; pass: string } | { user: string; accessToken: string }> {
    const auth = this.config.auth;
    if ('pass' in auth) return { user: auth.user, pass: auth.pass };
    return { user: auth.user, accessToken: await (this.tokens as TokenProvider).getToken() };
  }

  private async connect(): Promise<ImapFlow> {
    const cfg = this.config;
    for (let retry = 0; ; retry++) {
      const client = new ImapFlow({
        host: cfg.host,
        port: cfg.port,
        secure: cfg.secure,
        auth: await this.credentials(),
        logger: false,
        clientInfo: { name: 'mailgate' },
        disableAutoIdle: !cfg.idle,
        autoIdleDelay: AUTO_IDLE_DELAY_MS,
        maxIdleTime: Math.min(cfg.idle_watchdog_ms * 2, 1_500_000),
        connectionTimeout: Math.min(cfg.command_timeout_ms, 90_000),
      });
      // An 'error' without a listener would crash the process. Errors also surface as a
      // rejected command or a 'close', which is where they are handled; the last one is kept
      // as the cause of a close that no command saw.
      client.on('error', (err: Error) => this.lastSocketError.set(client, err));
      try {
        await withDeadline(client.connect(), cfg.command_timeout_ms, 'connect', () => client.close());
        return client;
      } catch (err) {
        client.close();
        const failure = classify(err, client.byeReason);
        // An OAuth2 token the server refuses may be revoked or expired early: get a new one, once.
        if (failure.kind === 'auth' && this.tokens !== undefined && retry === 0 && !(err instanceof GatewayError)) {
          this.tokens.invalidate();
          continue;
        }
        if (err instanceof GatewayError) throw err;
        const message = failure.kind === 'auth' ? `IMAP login refused for ${cfg.auth.user}: ${failure.message}` : `IMAP connect to ${cfg.host}:${cfg.port} failed: ${failure.message}${client.byeReason ? ` (${client.byeReason})` : ''}`;
        throw new GatewayError(failure.code, message, { cause: err, ...(failure.hintMs === undefined ? {} : { details: { hintMs: failure.hintMs } }) });
      }
    }
  }

  private async serve(client: ImapFlow, sink: IntakeSink, signal: AbortSignal): Promise<void> {
    const cfg = this.config;
    const folders = await withDeadline(listFolders(client, cfg.folders, this.action), cfg.command_timeout_ms, 'LIST', () => client.close());
    const idleFolder = cfg.idle && client.capabilities.has('IDLE') ? folders[0] : undefined;
    const dirty = new Set(folders);
    let closed = false;
    let wake = (): void => undefined;
    const onExists = (ev: { path: string }): void => {
      if (!folders.includes(ev.path)) return;
      dirty.add(ev.path);
      wake();
    };
    const onClose = (): void => {
      closed = true;
      wake();
    };
    const onAbort = (): void => client.close();
    client.on('exists', onExists);
    client.on('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
    this.session = { client, idleFolder };
    const tick = idleFolder === undefined ? cfg.poll_interval_ms : cfg.idle_watchdog_ms;
    let nextTick = Date.now() + tick;
    let nextResync = Date.now() + cfg.resync_interval_ms;
    let nextSettle = Infinity;
    try {
      while (!signal.aborted) {
        if (closed || !client.usable) {
          const cause = this.lastSocketError.get(client);
          const why = client.byeReason ?? cause?.message ?? 'closed by the server';
          const failure = classify(cause ?? new Error(why), why);
          throw new GatewayError(failure.kind === 'throttle' ? failure.code : 'MAILGATE_ERR_IMAP_CONNECTION', `connection to ${cfg.host} closed: ${why}`, { cause });
        }
        if (dirty.size > 0) {
          await this.syncDirty(client, dirty, sink, signal);
          // Mail committed between the last SEARCH and the start of IDLE is not announced by
          // every server (Dovecot waits for its next idle check): one NOOP once IDLE runs.
          if (idleFolder !== undefined) nextSettle = Date.now() + AUTO_IDLE_DELAY_MS + SETTLE_AFTER_IDLE_MS;
          continue; // mail that arrived meanwhile is synced before waiting
        }
        this.attempt = 0;
        if (idleFolder !== undefined && (client.mailbox === false || client.mailbox.path !== idleFolder)) {
          await this.exclusive(() => withDeadline(client.mailboxOpen(idleFolder, { readOnly: true }), cfg.command_timeout_ms, 'EXAMINE', () => client.close()));
        }
        this.tracker.set('idle');
        const wait = Math.min(nextTick, nextResync, nextSettle) - Date.now();
        if (wait > 0) await new Promise<void>((resolve) => {
          const timer = setTimeout(done, wait);
          function done(): void {
            clearTimeout(timer);
            resolve();
          }
          wake = done;
        });
        wake = () => undefined;
        const now = Date.now();
        if (now >= nextSettle && now < nextTick && !closed && !signal.aborted) {
          nextSettle = Infinity;
          await this.exclusive(() => withDeadline(client.noop(), WATCHDOG_NOOP_MS, 'NOOP', () => client.close()));
        }
        if (now >= nextTick && !closed && !signal.aborted) {
          nextSettle = Infinity;
          if (idleFolder !== undefined) {
            // Silent IDLE death: a NOOP that gets no answer in time drops the connection.
            const noopMs = Math.min(WATCHDOG_NOOP_MS, cfg.idle_watchdog_ms);
            await this.exclusive(() => withDeadline(client.noop(), noopMs, 'NOOP', () => client.close()));
            dirty.add(idleFolder);
          } else folders.forEach((f) => dirty.add(f));
          nextTick = now + tick;
        }
        if (now >= nextResync) {
          folders.forEach((f) => dirty.add(f));
          nextResync = now + cfg.resync_interval_ms;
        }
      }
    } finally {
      client.off('exists', onExists);
      client.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
    }
  }

  private async syncDirty(client: ImapFlow, dirty: Set<string>, sink: IntakeSink, signal: AbortSignal): Promise<void> {
    this.tracker.set('syncing');
    for (const folder of [...dirty]) {
      if (signal.aborted) return;
      dirty.delete(folder);
      try {
        const res = await syncFolder(
          client,
          { config: this.config, sink, signal, exclusive: (fn) => this.exclusive(fn), onChunk: (_f, n, s) => this.tracker.counted(n, s) },
          folder,
        );
        this.tracker.folderSynced(folder, res.uidValidity, res.lastUid);
      } catch (err) {
        const failure = classify(err);
        if (failure.code !== 'MAILGATE_ERR_IMAP_FOLDER_NOT_FOUND') throw err;
        this.tracker.folderFailed(folder, failure);
      }
    }
    this.tracker.synced();
  }
}
