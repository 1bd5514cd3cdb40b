/**
 * The push budget of one listener: how many push requests (webhooks, uploads) may be open at
 * once, how many body bytes they may hold between them, and how many one client address may
 * have open. A request is admitted from its headers — before its body is read — with the bytes
 * it declares (`Content-Length`, or its endpoint's whole body limit when it is chunked), and
 * holds them until it is answered or the client goes away. Beyond any bound it is refused at
 * once with 503 and Retry-After: providers and upload clients retry, and what is in flight is
 * never more than the budget however many senders there are.
 */

export type PushRefusalReason = 'requests' | 'bytes' | 'client';

export interface PushBudgetLimits {
  /** Push requests open at once on the listener. */
  maxRequests: number;
  /** Body bytes admitted push requests may hold between them. */
  maxBytes: number;
  /** Push requests one client address may have open at once. */
  maxPerClient: number;
}

export interface PushTicket {
  readonly client: string;
  readonly bytes: number;
}

export type Admission = { ok: true; ticket: PushTicket } | { ok: false; reason: PushRefusalReason; message: string };

export class PushBudget {
  private requests = 0;
  private bytes = 0;
  private readonly perClient = new Map<string, number>();

  constructor(readonly limits: PushBudgetLimits) {}

  /** Admits a request of `bytes` body bytes from `client`, or says which bound it would pass. */
  admit(client: string, bytes: number): Admission {
    const { maxRequests, maxBytes, maxPerClient } = this.limits;
    const mine = this.perClient.get(client) ?? 0;
    if (mine >= maxPerClient) {
      return { ok: false, reason: 'client', message: `this client already has ${mine} push requests open (at most ${maxPerClient})` };
    }
    if (this.requests >= maxRequests) {
      return { ok: false, reason: 'requests', message: `${this.requests} push requests are open (at most ${maxRequests})` };
    }
    // One request larger than the whole budget is admitted when nothing else is in flight, so a
    // body under its endpoint's limit is never refused for good.
    if (this.bytes > 0 && this.bytes + bytes > maxBytes) {
      return { ok: false, reason: 'bytes', message: `push requests hold ${this.bytes} body bytes (at most ${maxBytes})` };
    }
    this.requests++;
    this.bytes += bytes;
    this.perClient.set(client, mine + 1);
    return { ok: true, ticket: { client, bytes } };
  }

  release(ticket: PushTicket): void {
    this.requests--;
    this.bytes -= ticket.bytes;
    const left = (this.perClient.get(ticket.client) ?? 1) - 1;
    if (left <= 0) this.perClient.delete(ticket.client);
    else this.perClient.set(ticket.client, left);
  }

  /** What is in flight now (status, tests). */
  inFlight(): { requests: number; bytes: number; clients: number } {
    return { requests: this.requests, bytes: this.bytes, clients: this.perClient.size };
  }
}
