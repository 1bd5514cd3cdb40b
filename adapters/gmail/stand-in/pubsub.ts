/**
 * The stand-in's Pub/Sub push subscription (cloud.google.com/pubsub/docs/push): when a watched
 * mailbox changes, the notification `{ emailAddress, historyId }` is published and pushed as
 * `{ message: { data: base64(JSON), messageId, publishTime }, subscription }` to the configured
 * endpoint with `Authorization: Bearer <OIDC token>` for the configured audience and service
 * account. Pushes can be dropped (a lost push) and forged ones sent (another key, another
 * audience); every delivery is recorded with the endpoint's status.
 */
import type { Identity } from './identity.js';

export interface PushTarget {
  endpoint: string;
  audience: string;
  serviceAccount: string;
}

export interface Delivery {
  forged?: 'signature' | 'audience' | 'account';
  status: number;
}

export class Pubsub {
  target: PushTarget | undefined;
  /** Pushes are published but never delivered (a lost push). */
  drop = false;
  readonly deliveries: Delivery[] = [];
  published = 0;
  watches = 0;
  private nextId = 1;

  constructor(private readonly identity: Identity) {}

  /** A watched mailbox changed: publish and push (not awaited: Pub/Sub pushes on its own time). */
  notify(emailAddress: string, historyId: number): void {
    this.published += 1;
    if (this.target === undefined || this.drop) return;
    void this.push({ emailAddress, historyId }).catch(() => undefined);
  }

  /** Sends one push; `forged` makes its token fail one check. Resolves with the endpoint's status. */
  async push(note: { emailAddress: string; historyId: number }, forged?: Delivery['forged']): Promise<number> {
    const t = this.target;
    if (t === undefined) throw new Error('no push subscription configured');
    const audience = forged === 'audience' ? 'https://elsewhere.example/push' : t.audience;
    const account = forged === 'account' ? 'someone-else@stand-in-project.iam.gserviceaccount.com' : t.serviceAccount;
    const token = this.identity.pushToken(audience, account, forged === 'signature');
    const id = String(this.nextId++);
    const res = await fetch(t.endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        message: {
          data: Buffer.from(JSON.stringify(note)).toString('base64'),
          messageId: id,
          message_id: id,
          publishTime: new Date().toISOString(),
        },
        subscription: 'projects/stand-in-project/subscriptions/mailgate-push',
      }),
    });
    await res.arrayBuffer();
    this.deliveries.push({ ...(forged ? { forged } : {}), status: res.status });
    return res.status;
  }
}
