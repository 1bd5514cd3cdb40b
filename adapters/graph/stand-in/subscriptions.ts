/**
 * Change notifications of the stand-in (learn.microsoft.com/graph/change-notifications-delivery-
 * webhooks, change-notifications-lifecycle-events): `POST /subscriptions` validates the
 * notification URL (and the lifecycle URL) by a POST with `?validationToken=` that must be
 * answered 200 text/plain with the token within 10 s; a new or changed message in the
 * subscribed folder is POSTed as `{ value: [changeNotification] }` with the subscription's
 * `clientState`; lifecycle events (`reauthorizationRequired`, `subscriptionRemoved`, `missed`)
 * go to the lifecycle URL. `PATCH` renews, `DELETE` removes. Outlook resources allow at most
 * 10,080 minutes (just under 7 days) of lifetime.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Change, Folder, Mailbox, Tenant } from './mailboxes.js';
import { graphError, type GraphReply } from './resources.js';

export const MAX_EXPIRY_MINUTES = 10_080;
const HANDSHAKE_TIMEOUT_MS = 10_000;

export interface Subscription {
  id: string;
  resource: string;
  changeType: string;
  notificationUrl: string;
  lifecycleNotificationUrl?: string;
  clientState?: string;
  expirationDateTime: string;
  mailboxId: string;
  folderId: string;
}

export interface Delivery {
  subscriptionId: string;
  kind: 'notification' | 'lifecycle' | 'validation';
  url: string;
  status: number | 'error';
  at: number;
}

export class Subscriptions {
  readonly all = new Map<string, Subscription>();
  readonly deliveries: Delivery[] = [];
  /** Drop change notifications instead of sending them (they are lossy in Graph too). */
  drop = false;

  constructor(
    private readonly tenant: Tenant,
    private readonly tenantId: string,
  ) {
    tenant.onChange = (mb, folder, change) => this.changed(mb, folder, change);
  }

  async create(body: Record<string, unknown>): Promise<GraphReply> {
    const bad = (m: string) => graphError(400, 'InvalidRequest', m);
    const { changeType, notificationUrl, lifecycleNotificationUrl, resource, expirationDateTime, clientState } = body as Record<
      string,
      string | undefined
    >;
    if (!changeType || !notificationUrl || !resource || !expirationDateTime)
      return bad('changeType, notificationUrl, resource and expirationDateTime are required.');
    const target = this.resolve(resource);
    if (target === undefined) return bad(`Resource '${resource}' is not supported or does not exist.`);
    const expiry = Date.parse(expirationDateTime);
    if (!(expiry > Date.now()) || expiry > Date.now() + MAX_EXPIRY_MINUTES * 60_000)
      return bad(`Subscription expiration can only be up to ${MAX_EXPIRY_MINUTES} minutes in the future.`);
    if (clientState !== undefined && clientState.length > 128) return bad('clientState must be at most 128 characters.');
    for (const url of new Set([notificationUrl, lifecycleNotificationUrl].filter((u): u is string => !!u))) {
      const why = await this.validate(url);
      if (why !== undefined) return bad(`Subscription validation request failed. ${why}`);
    }
    const sub: Subscription = {
      id: randomUUID(),
      resource,
      changeType,
      notificationUrl,
      ...(lifecycleNotificationUrl ? { lifecycleNotificationUrl } : {}),
      ...(clientState !== undefined ? { clientState } : {}),
      expirationDateTime: new Date(expiry).toISOString(),
      mailboxId: target.mb.id,
      folderId: target.folder.id,
    };
    this.all.set(sub.id, sub);
    return { status: 201, body: this.view(sub) };
  }

  renew(id: string, body: Record<string, unknown>): GraphReply {
    const sub = this.all.get(id);
    if (sub === undefined) return graphError(404, 'ResourceNotFound', 'The object was not found.');
    const expiry = Date.parse(String(body['expirationDateTime'] ?? ''));
    if (!(expiry > Date.now()) || expiry > Date.now() + MAX_EXPIRY_MINUTES * 60_000)
      return graphError(400, 'InvalidRequest', 'Invalid expirationDateTime.');
    sub.expirationDateTime = new Date(expiry).toISOString();
    return { status: 200, body: this.view(sub) };
  }

  remove(id: string): GraphReply {
    return this.all.delete(id) ? { status: 204 } : graphError(404, 'ResourceNotFound', 'The object was not found.');
  }

  get(id: string): GraphReply {
    const sub = this.all.get(id);
    return sub ? { status: 200, body: this.view(sub) } : graphError(404, 'ResourceNotFound', 'The object was not found.');
  }

  /** Sends a lifecycle event for a subscription; `subscriptionRemoved` deletes it first. */
  async lifecycle(id: string, event: 'reauthorizationRequired' | 'subscriptionRemoved' | 'missed'): Promise<void> {
    const sub = this.all.get(id);
    if (sub?.lifecycleNotificationUrl === undefined) throw new Error(`subscription ${id} has no lifecycle URL`);
    if (event === 'subscriptionRemoved') this.all.delete(id);
    const item = {
      subscriptionId: sub.id,
      subscriptionExpirationDateTime: sub.expirationDateTime,
      tenantId: this.tenantId,
      clientState: sub.clientState ?? null,
      lifecycleEvent: event,
    };
    await this.post(sub, 'lifecycle', sub.lifecycleNotificationUrl, { value: [item] });
  }

  private view(sub: Subscription): Record<string, unknown> {
    const { mailboxId: _m, folderId: _f, ...rest } = sub;
    return { ...rest, applicationId: null, creatorId: null, latestSupportedTlsVersion: 'v1_2' };
  }

  /** `/users/{u}/mailFolders('{f}')/messages` or `users/{u}/mailFolders/{f}/messages`. */
  private resolve(resource: string): { mb: Mailbox; folder: Folder } | undefined {
    const m = /^\/?users\/([^/]+)\/mailFolders(?:\('([^']+)'\)|\/([^/]+))\/messages$/i.exec(resource);
    if (!m) return undefined;
    const mb = this.tenant.mailbox(m[1]!);
    const folder = mb && this.tenant.folder(mb, (m[2] ?? m[3])!);
    return mb && folder ? { mb, folder } : undefined;
  }

  private async validate(url: string): Promise<string | undefined> {
    const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomBytes(8).toString('hex')}`;
    try {
      const res = await fetch(`${url}${url.includes('?') ? '&' : '?'}validationToken=${encodeURIComponent(token)}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain; charset=utf-8' },
        signal: AbortSignal.timeout(HANDSHAKE_TIMEOUT_MS),
      });
      const text = await res.text();
      this.deliveries.push({ subscriptionId: '', kind: 'validation', url, status: res.status, at: Date.now() });
      if (res.status !== 200) return `The endpoint answered ${res.status}.`;
      if (!(res.headers.get('content-type') ?? '').startsWith('text/plain')) return 'The answer must be text/plain.';
      if (text !== token) return 'The answer did not echo the validation token.';
      return undefined;
    } catch (err) {
      return `The endpoint could not be reached: ${(err as Error).message}`;
    }
  }

  private changed(mb: Mailbox, folder: Folder, change: Change): void {
    if (change.kind === 'removed') return;
    for (const sub of this.all.values()) {
      if (sub.mailboxId !== mb.id || sub.folderId !== folder.id) continue;
      if (!sub.changeType.split(',').includes(change.kind) || Date.parse(sub.expirationDateTime) <= Date.now()) continue;
      const item = {
        subscriptionId: sub.id,
        subscriptionExpirationDateTime: sub.expirationDateTime,
        changeType: change.kind,
        resource: `Users/${mb.id}/Messages/${change.id}`,
        resourceData: { '@odata.type': '#Microsoft.Graph.Message', '@odata.id': `Users/${mb.id}/Messages/${change.id}`, id: change.id },
        clientState: sub.clientState ?? null,
        tenantId: this.tenantId,
      };
      if (!this.drop) void this.post(sub, 'notification', sub.notificationUrl, { value: [item] });
    }
  }

  private async post(sub: Subscription, kind: Delivery['kind'], url: string, body: unknown): Promise<void> {
    let status: number | 'error';
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch {
      status = 'error';
    }
    this.deliveries.push({ subscriptionId: sub.id, kind, url, status, at: Date.now() });
  }
}
