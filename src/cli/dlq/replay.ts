/**
 * `dlq replay`: re-parse each dead letter's kept raw bytes with the current code and
 * configuration, put it back in the outbox (`replayDeadLetter`), then deliver until the
 * route's outbox is empty.
 */
import { GatewayError } from '../../errors.js';
import { replayDeadLetter } from '../../pipeline/replay.js';
import type { Runtime } from '../../runtime/index.js';

export interface ReplayCounts {
  requeued: number;
  stillDead: number;
  skipped: number;
}

/** Replays the given dead letters (of the runtime's route) and delivers them. */
export async function replay(rt: Runtime, ids: number[], report: (line: string) => void): Promise<ReplayCounts> {
  const counts: ReplayCounts = { requeued: 0, stillDead: 0, skipped: 0 };
  for (const id of ids) {
    const dl = await rt.store.getDeadLetter(id);
    if (dl === undefined) throw new GatewayError('MAILGATE_ERR_STORE_NOT_FOUND', `dead letter ${id} does not exist`);
    if (!rt.routes.has(dl.route)) {
      counts.skipped++;
      report(`dead letter ${id}: route "${dl.route}" is not the route given (--route); skipped`);
      continue;
    }
    if (dl.raw === undefined) {
      counts.skipped++;
      report(`dead letter ${id}: the raw bytes were not kept; cannot replay`);
      continue;
    }
    const ctx = { store: rt.store, pool: rt.pool, parsing: rt.config.parsing, events: rt.events };
    const result = await replayDeadLetter(ctx, rt.routes.get(dl.route)!, { ...dl, raw: dl.raw });
    if (result.status === 'queued') counts.requeued++;
    else counts.stillDead++;
  }
  if (counts.requeued > 0) {
    const controller = new AbortController();
    const names = [...rt.routes.keys()];
    const until = async () => (await Promise.all(names.map((n) => rt.store.outboxDepth(n)))).every((d) => d === 0);
    // Everything is queued already: no batch waits for more to join it (delivery.flush_ms).
    rt.delivery.drain();
    await rt.delivery.run(controller.signal, until);
  }
  return counts;
}
