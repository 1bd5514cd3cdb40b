/** Store items -> the console's JSON rows (console-types.ts). Pure functions. */
import { kindOfOrigin } from '../../adapters/config.js';
import { plainDisplay, type Origin, type OriginDisplay } from '../model/origin.js';
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

/** The origin's details as its kind shows them (its `showOrigin`), else each under its own name. */
export function originDisplay(o: Origin): OriginDisplay {
  const show = kindOfOrigin(o.adapter)?.showOrigin;
  return show === undefined ? plainDisplay(o) : show(o.details);
}

/** One line naming where a message came from: the kind (or provider), the instance and the kind's summary. */
export function originLabel(o: Origin, display = originDisplay(o)): string {
  const kind = providerOf(o) ?? o.adapter;
  return [kind, o.instance !== kind ? o.instance : '', display.summary].filter((s) => s !== '').join(' ');
}

/** The origin for a table cell: adapter, instance, id, a label, and the details as the kind stored them. */
export function originSummary(o: Origin): OriginSummary {
  const s: OriginSummary = {
    kind: o.adapter,
    name: o.instance === '' ? null : o.instance,
    id: o.id,
    label: originLabel(o),
    details: o.details,
  };
  const provider = providerOf(o);
  if (provider !== undefined) s.provider = provider;
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
