/**
 * An in-memory intake with the real door's observable rules for push calls: one result per message in
 * order, dedupe per route on the event id and on the SHA-256 of the bytes, `failure` stored
 * as a dead letter, and a switch that makes accept reject as an unavailable store would.
 */
import { createHash } from 'node:crypto';
import { GatewayError } from '../../../src/errors.js';
import type { Accepted, Checkpoint, Inbound, Intake, PushItemState } from '../../../src/pipeline/types.js';

export class MemorySink implements Intake {
  readonly stored: Inbound[] = [];
  readonly items = new Map<string, PushItemState>();
  private readonly keys = new Map<string, string>();
  submits = 0;
  unavailable = false;

  async checkpoint(): Promise<Checkpoint['value'] | undefined> {
    return undefined;
  }

  async accept(batch: Inbound[]): Promise<Accepted[]> {
    this.submits++;
    if (this.unavailable) throw new GatewayError('MAILGATE_ERR_INTAKE_UNAVAILABLE', 'store down');
    return batch.map((msg) => this.one(msg));
  }

  async item(id: string): Promise<PushItemState | undefined> {
    return this.items.get(id);
  }

  private one(msg: Inbound): Accepted {
    const sha = `${msg.route}:sha:${createHash('sha256').update(msg.raw).digest('hex')}`;
    const event = msg.alias === undefined ? undefined : `${msg.route}:event:${msg.alias}`;
    const known = this.keys.get(sha) ?? (event === undefined ? undefined : this.keys.get(event));
    if (known !== undefined) return { id: known, duplicate: true };
    const id = `item-${this.stored.length + 1}`;
    this.keys.set(sha, id);
    if (event !== undefined) this.keys.set(event, id);
    this.stored.push(msg);
    const state: PushItemState = { id, route: msg.route, state: msg.failure ? 'dead' : 'queued' };
    if (msg.failure) state.error = msg.failure;
    this.items.set(id, state);
    return msg.failure ? { id, duplicate: false, dead: msg.failure } : { id, duplicate: false };
  }
}
