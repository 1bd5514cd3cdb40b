/**
 * Pub/Sub push as wake-ups (developers.google.com/workspace/gmail/api/guides/push): each mailbox
 * calls `users.watch` on the configured topic for its labels, again every `watch_renew_ms` (a
 * watch lapses after 7 days; Google advises renewing daily). Pub/Sub posts each notification to
 * mailgate's push endpoint with an OIDC token in `Authorization: Bearer`; the endpoint verifies it
 * before anything else — signed by Google (keys from `certs_url`, the configured URL only),
 * issued by accounts.google.com, for the configured audience, naming the configured service
 * account with a verified email, not expired — and only then reads the notification
 * (`{ emailAddress, historyId }`) and wakes that mailbox's runner. A refused push is answered 401
 * and fetches nothing. Pushes are lossy, so the poll runs whether or not they come.
 */
import { OAuth2Client } from 'google-auth-library';
import { isGatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Intake, PushEndpoint, PushRequest, PushResponse } from '../../src/pipeline/types.js';
import type { WakeBoard } from '../../src/pipeline/wake-board.js';
import type { GmailEntry } from './config.js';
import type { GmailClient } from './client.js';

/** What the watcher needs of a mailbox's runner (mailbox.ts), named here so the two files do not import each other. */
export interface MailboxRunner {
  readonly opts: { readonly user: string; readonly instance: string; readonly client: GmailClient; readonly log: Logger };
  /** The labels it reads (users.watch watches those). */
  readonly labelIds: string[];
  /** True while it reads its mailbox in this process. */
  readonly active: boolean;
  /** A history round now. */
  wake(): void;
}

/** Pub/Sub push bodies are a few hundred bytes (the notification is two fields): bound before trust. */
const BODY_LIMIT = 64 * 1024;
/** A bearer token longer than this is not looked at (Google's are about 1 kB). */
const TOKEN_LIMIT = 8 * 1024;

type Notifications = NonNullable<GmailEntry['notifications']>;

export class Watcher {
  private readonly runners = new Map<string, MailboxRunner>();
  private readonly watchedAt = new Map<MailboxRunner, number>();
  private readonly verifier: OAuth2Client;
  refused = 0;
  received = 0;

  constructor(
    private readonly entry: GmailEntry & { notifications: Notifications },
    private readonly log: Logger,
    /** Where a push for a mailbox read by another replica is passed on (src/pipeline/wake-board.ts). */
    private readonly board?: WakeBoard,
  ) {
    this.verifier = new OAuth2Client({ endpoints: { oauth2FederatedSignonPemCertsUrl: entry.notifications.certs_url } });
  }

  /** Starts or renews the mailbox's watch when due; a failure is logged and retried at the next pass (polling goes on). */
  async ensure(runner: MailboxRunner, signal: AbortSignal): Promise<void> {
    this.runners.set(runner.opts.user.toLowerCase(), runner);
    if (this.nextRenewalMs(runner) > 1000) return;
    try {
      const res = await runner.opts.client.call<{ historyId?: string; expiration?: string }>('watch', '/watch', {
        method: 'POST',
        json: { topicName: this.entry.notifications.topic, labelIds: runner.labelIds, labelFilterBehavior: 'INCLUDE' },
        signal,
      });
      this.watchedAt.set(runner, Date.now());
      runner.opts.log.info({ expiration: res.expiration }, `users.watch on ${this.entry.notifications.topic}`);
    } catch (err) {
      // Stopping while users.watch was in flight: Gmail may have made the watch all the same, so
      // `stop` ends it as it would one whose answer came (users.stop on a mailbox without a
      // watch changes nothing).
      if (signal.aborted) return void this.watchedAt.set(runner, Date.now());
      // Tried again at the next round rather than at once.
      this.watchedAt.set(runner, Date.now() - this.entry.watch_renew_ms + this.entry.poll_interval_ms);
      runner.opts.log.warn(
        { code: 'MAILGATE_ERR_GMAIL_WATCH', cause: isGatewayError(err) ? err.code : undefined },
        `users.watch failed (${(err as Error).message}); the mailbox is read every ${this.entry.poll_interval_ms} ms`,
      );
    }
  }

  /**
   * The mailbox stops being read here: its watch ends (users.stop), so that Pub/Sub stops pushing
   * for it until a replica reads it again and watches anew. Only while this replica still holds the
   * mailbox — proved by a fenced write of the mailbox's watch record through `sink` — so that a
   * replica that lost the mailbox never stops the watch of the one that took it. Best effort: an
   * unstopped watch lapses by itself after 7 days, and pushes for a mailbox read nowhere wake nothing.
   */
  async stop(runner: MailboxRunner, sink: Pick<Intake, 'accept'>): Promise<void> {
    if (!this.watchedAt.has(runner)) return;
    this.watchedAt.delete(runner);
    const signal = AbortSignal.timeout(this.entry.request_timeout_ms);
    try {
      await sink.accept([], { checkpoint: { key: `gmail:${runner.opts.instance}:watch`, value: { stoppedAt: new Date().toISOString() } } });
      await runner.opts.client.call('stop', '/stop', { method: 'POST', signal });
      runner.opts.log.info(`users.stop: no more pushes for ${runner.opts.user} until it is read again`);
    } catch (err) {
      runner.opts.log.warn(
        { code: 'MAILGATE_ERR_GMAIL_WATCH', cause: isGatewayError(err) ? err.code : undefined },
        `users.stop not sent (${(err as Error).message}); the watch lapses by itself`,
      );
    }
  }

  /** When the mailbox's watch is due for renewal, in ms from now (0: now). */
  nextRenewalMs(runner: MailboxRunner): number {
    const at = this.watchedAt.get(runner);
    if (at === undefined) return 0;
    return Math.max(0, at + this.entry.watch_renew_ms - Date.now());
  }

  /** The push endpoint, mounted by the server at `notifications.path` (default `/gmail/<name>/push`; on the public listener too). */
  endpoint(): PushEndpoint {
    return {
      method: 'POST',
      path: this.entry.notifications.path ?? `/gmail/${this.entry.name}/push`,
      bodyLimit: BODY_LIMIT,
      tooLarge: 'MAILGATE_ERR_GMAIL_PUSH',
      public: true,
      authorize: (req) => (bearer(req.headers['authorization']) === undefined ? this.refuse('no bearer token') : undefined),
      handle: (req) => this.receive(req),
    };
  }

  private refuse(why: string): PushResponse {
    this.refused += 1;
    this.log.warn({ code: 'MAILGATE_ERR_GMAIL_PUSH' }, `Pub/Sub push refused: ${why}`);
    return { status: 401, body: { error: { code: 'MAILGATE_ERR_GMAIL_PUSH', message: `push refused: ${why}` } } };
  }

  private async receive(req: PushRequest): Promise<PushResponse> {
    const token = bearer(req.headers['authorization']);
    if (token === undefined) return this.refuse('no bearer token');
    const { audience, service_account } = this.entry.notifications;
    let email: string | undefined;
    try {
      const ticket = await this.verifier.verifyIdToken({ idToken: token, audience });
      const p = ticket.getPayload();
      if (p?.email_verified !== true) return this.refuse('the token has no verified email');
      email = p.email;
    } catch (err) {
      return this.refuse(`the token does not verify (${(err as Error).message.split('\n')[0]})`);
    }
    if (email?.toLowerCase() !== service_account.toLowerCase()) return this.refuse(`the token names ${email}, not ${service_account}`);
    let note: { emailAddress?: string; historyId?: string | number };
    try {
      const body = JSON.parse(req.body.toString('utf8')) as { message?: { data?: string } };
      note = JSON.parse(Buffer.from(body.message?.data ?? '', 'base64').toString('utf8')) as typeof note;
    } catch {
      // Acknowledged: Pub/Sub would redeliver a malformed message forever.
      this.log.warn({ code: 'MAILGATE_ERR_GMAIL_PUSH' }, 'Pub/Sub push without a Gmail notification; acknowledged and ignored');
      return { status: 204 };
    }
    this.received += 1;
    // The refresh-token form reads `me`: any address is its own.
    const runner = this.runners.get(String(note.emailAddress ?? '').toLowerCase()) ?? this.runners.get('me');
    if (runner?.active === true) runner.wake();
    else await this.passOn(String(note.emailAddress ?? ''));
    return { status: 204 };
  }

  /**
   * Not read here (another replica holds the lease, or not started): the mailbox of the entry the
   * push names is signalled for the replica reading it. Best effort: its poll reads what a lost
   * signal would have woken.
   */
  private async passOn(emailAddress: string): Promise<void> {
    const users = this.entry.mailboxes.map((m) => m.user);
    const user = users.find((u) => u.toLowerCase() === emailAddress.toLowerCase()) ?? users.find((u) => u === 'me');
    if (this.board === undefined || user === undefined) return;
    try {
      await this.board.signal(`gmail:${this.entry.name}/${user}`);
    } catch (err) {
      this.log.warn({ code: 'MAILGATE_ERR_GMAIL_PUSH', mailbox: user }, `Pub/Sub push not passed on: ${(err as Error).message}`);
    }
  }
}

function bearer(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  const m = /^Bearer ([A-Za-z0-9_.-]+)$/i.exec(v ?? '');
  return m && m[1]!.length <= TOKEN_LIMIT ? m[1] : undefined;
}
