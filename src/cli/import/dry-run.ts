/**
 * `import --dry-run`: parse every message, compare it with the billing ledger and report what
 * a real run would send and what it would cost. Nothing is sent; the outbox, checkpoints and
 * ledger are not touched (the store is only read), so a later real run is unaffected.
 */
import type { MessageFilter } from '../../controls/filter.js';
import { FilteredCount, keptItems } from '../filtered.js';
import { fileInputs } from '../../../adapters/index.js';
import { deliverBatch } from '../../batcher/index.js';
import { resolveUserProperties } from '../../pipeline/origin.js';
import { targetOf } from '../../pipeline/delivery/index.js';
import { parseOrdered } from '../../pipeline/pool.js';
import type { MboxQuoting, PathItem } from '../../pipeline/types.js';
import type { PreviewOptions } from '../../preview/types.js';
import type { Runtime } from '../../runtime/index.js';
import type { DeliveryItem } from '../../batcher/index.js';
import type { ImportSummary } from './progress.js';

const CHUNK = 1_000;

export async function dryRunImport(
  rt: Runtime,
  paths: string[],
  mbox: MboxQuoting | undefined,
  onUpdate: (s: ImportSummary) => void,
  /** The read handed on everything of `path` before byte `offset` (the progress bar). */
  onRead: (path: string, offset: number) => void = () => undefined,
  /** A file of a folder that is skipped (not mail), with the reason. */
  onSkip: (path: string, reason: string) => void = () => undefined,
  filter: { filter: MessageFilter | undefined; count: FilteredCount } = { filter: undefined, count: new FilteredCount() },
): Promise<ImportSummary> {
  const route = rt.config.routes[0]!;
  const target = targetOf(route, rt.config);
  const startedAt = Date.now();
  const s: ImportSummary = {
    route: route.name,
    dryRun: true,
    skipped: 0,
    skippedBy: {},
    read: 0,
    parsed: 0,
    unreadable: 0,
    queued: 0,
    duplicates: 0,
    delivered: 0,
    unchanged: 0,
    rejected: 0,
    deadLettered: 0,
    aiUnits: 0,
    aiUnitsEstimated: 0,
    seconds: 0,
    messagesPerSecond: 0,
  };
  let chunk: DeliveryItem[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const report = await deliverBatch(chunk, target, rt.client, rt.store, { dryRun: true });
    chunk = [];
    for (const o of report.outcomes) {
      if (o.status === 'delivered') s.queued++;
      else if (o.status === 'unchanged') s.unchanged++;
      else s.rejected++;
    }
    s.aiUnits += report.estimatedAiUnits;
    s.aiUnitsEstimated += report.estimatedAiUnits;
    onUpdate(s);
  };
  const p = rt.config.parsing;
  const items = keptItems(
    (await fileInputs()).inputs.read(paths, {
      maxMessageBytes: p.max_message_bytes,
      onSkip,
      ...(mbox ? { mboxQuoting: mbox } : {}),
    }),
    filter.filter,
    filter.count,
  );
  const optionsOf = (item: PathItem): PreviewOptions => ({
    body: p.body,
    headers: p.headers,
    userProperties: resolveUserProperties(route.user_properties, item.origin),
    ...(item.receivedAt === undefined ? {} : { receivedAt: item.receivedAt }),
  });
  for await (const { item, outcome } of parseOrdered(rt.pool, items, (i) => i.raw, { transfer: true, optionsOf })) {
    s.read++;
    if (item.next !== undefined) onRead(item.path, item.next.offset);
    if (item.error) s.unreadable++;
    else if (!outcome?.ok) s.rejected++;
    else {
      s.parsed++;
      chunk.push({ key: `${item.path}:${item.index}`, document: outcome.result.document });
      if (chunk.length >= CHUNK) await flush();
    }
  }
  await flush();
  s.deadLettered = s.rejected + s.unreadable;
  s.seconds = Math.round(Date.now() - startedAt) / 1000;
  s.messagesPerSecond = s.seconds > 0 ? Math.round(s.read / s.seconds) : 0;
  return s;
}
