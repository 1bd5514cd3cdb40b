/**
 * What delivering a route's queued items would cost, from what the import read and stored: the
 * stored documents (nothing is parsed again) against the billing ledger, by the same rule as a
 * dry run. Shown before the first billable request, with the question (src/cli/consent.ts).
 */
import { deliverBatch, type DeliveryItem } from '../../batcher/index.js';
import { targetOf } from '../../pipeline/delivery/index.js';
import { routeTarget } from '../../pipeline/origin.js';
import type { Runtime } from '../../runtime/index.js';
import type { ItemListState, OutboxItem } from '../../store/types.js';

const PAGE = 1_000;

export interface Estimate {
  /** Items waiting in the route's outbox (this run's and any an earlier run left). */
  queued: number;
  /** Of those, documents the API would be sent. */
  toSend: number;
  /** Of those, identical to what the ledger says was delivered: not sent, not billed again. */
  unchanged: number;
  /** AI units sending them costs by the ledger rule. */
  aiUnits: number;
  /** AI units the route has spent so far (the store's counter). */
  billedBefore: number;
}

function deliveryItem(item: OutboxItem): DeliveryItem {
  return {
    key: item.key,
    document: item.document,
    json: item.documentJson,
    commentId: item.commentId,
    ...(item.hashes ? { hashes: item.hashes } : {}),
  };
}

export async function estimateQueued(rt: Runtime): Promise<Estimate> {
  const route = rt.config.routes[0]!;
  const target = targetOf(route, rt.config);
  const e: Estimate = { queued: 0, toSend: 0, unchanged: 0, aiUnits: 0, billedBefore: 0 };
  for (const state of ['queued', 'retrying'] satisfies ItemListState[]) {
    let beforeId: number | undefined;
    for (;;) {
      const page = await rt.store.listItems({ route: route.name, state, limit: PAGE, ...(beforeId === undefined ? {} : { beforeId }) });
      if (page.length === 0) break;
      beforeId = page[page.length - 1]!.id;
      const items = (await Promise.all(page.map((s) => rt.store.getItem(s.id)))).filter((i) => i !== undefined);
      const report = await deliverBatch(items.map(deliveryItem), target, rt.client, rt.store, { dryRun: true });
      e.queued += items.length;
      for (const o of report.outcomes) {
        if (o.status === 'delivered') e.toSend++;
        else if (o.status === 'unchanged') e.unchanged++;
      }
      e.aiUnits += report.estimatedAiUnits;
      if (page.length < PAGE) break;
    }
  }
  e.billedBefore = (await rt.store.counters(route.name)).reduce((n, c) => n + c.aiUnits, 0);
  return e;
}

/** The estimate as the question's preamble. */
export function estimateText(rt: Runtime, e: Estimate): string {
  const route = rt.config.routes[0]!;
  const unchanged = e.unchanged === 0 ? '' : `; ${e.unchanged} unchanged since the ledger's last delivery (already billed, not sent again)`;
  return (
    `mailgate: ${e.queued} ${e.queued === 1 ? 'message' : 'messages'} read and waiting in the store for route ${route.name} (${routeTarget(route)}) at ${rt.config.api.url}\n` +
    `mailgate: sending ${e.toSend} costs about ${e.aiUnits} AI ${e.aiUnits === 1 ? 'unit' : 'units'}${unchanged}; this route has spent ${e.billedBefore} AI units so far\n`
  );
}
