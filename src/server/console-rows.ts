/** Store items -> the console's JSON rows (console-types.ts). Pure functions. */
import type { Origin } from '../model/origin.js';
import type { ItemSummary } from '../store/types.js';
import type { ItemRow, OriginSummary } from './console-types.js';

/**
 * The provider of a pushed message: as its envelope names it, else the variant its adapter names
 * after a colon (`<adapter>:<variant>`, the form of items stored before the envelope said it).
 */
function providerOf(o: Origin): string | undefined {
  const colon = o.adapter.indexOf(':');
  return o.envelope?.provider ?? (colon > 0 ? o.adapter.slice(colon + 1) : undefined);
}

function label(o: Origin): string {
  const name = o.account ?? '';
  if (o.folder !== undefined || o.uid !== undefined) {
    return [name, o.folder ?? '', o.uid === undefined ? '' : `uid ${o.uid}`].filter((s) => s !== '').join(' ');
  }
  if (o.path !== undefined) return o.index === undefined ? o.path : `${o.path} #${o.index}`;
  const provider = providerOf(o);
  const parts = [provider ?? o.adapter, name !== '' && name !== provider ? name : '', o.eventId === undefined ? '' : `event ${o.eventId}`];
  return parts.filter((s) => s !== '').join(' ');
}

/** The origin flattened for a table cell, with only the fields its adapter has. */
export function originSummary(o: Origin): OriginSummary {
  const s: OriginSummary = { kind: o.adapter, name: o.account ?? null, label: label(o) };
  if (o.folder !== undefined) s.folder = o.folder;
  if (o.uidValidity !== undefined) s.uid_validity = o.uidValidity;
  if (o.uid !== undefined) s.uid = o.uid;
  if (o.path !== undefined) s.path = o.path;
  if (o.index !== undefined) s.index = o.index;
  const provider = providerOf(o);
  if (provider !== undefined) s.provider = provider;
  if (o.eventId !== undefined) s.event_id = o.eventId;
  return s;
}

export function itemRow(i: ItemSummary): ItemRow {
  return {
    id: i.id,
    state: i.state,
    route: i.route,
    comment_id: i.commentId,
    origin: originSummary(i.origin),
    sender: i.sender ?? null,
    sender_name: i.senderName ?? null,
    subject: i.subject ?? null,
    message_id: i.messageId ?? null,
    timestamp: i.timestamp ?? null,
    received_at: i.enqueuedAt,
    finished_at: i.finishedAt ?? null,
    // Per item only "nothing billed" is certain: delivery counts units per batch.
    ai_units: i.state === 'unchanged' ? 0 : null,
    attempts: i.attempts,
    next_attempt_at: i.nextAttemptAt ?? null,
    last_error_code: i.lastError?.code ?? null,
  };
}
