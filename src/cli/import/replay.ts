/**
 * `dlq replay`: re-parse each dead letter's kept raw bytes with the current code and
 * configuration, put it back in the outbox (`replayDeadLetter`), then deliver until the
 * route's outbox is empty.
 */
import { GatewayError, isGatewayError } from '../../errors.js';
import type { RawEmailDocument } from '../../model/index.js';
import { resolveUserProperties, routeTarget } from '../../pipeline/origin.js';
import type { Runtime } from '../../pipeline/runtime.js';
import type { DeadLetterDetail, OutboxInput } from '../../store/types.js';

export interface ReplayCounts {
  requeued: number;
  stillDead: number;
  skipped: number;
}

async function replacementFor(rt: Runtime, dl: DeadLetterDetail): Promise<OutboxInput> {
  const route = rt.routes.get(dl.route)!;
  const base = { route: dl.route, key: dl.key, origin: dl.origin, raw: dl.raw! };
  const p = rt.config.parsing;
  try {
    // As intake parses: the document as JSON text with its ledger hashes and thread facts.
    const result = await rt.pool.parseEncoded(dl.raw!, {
      body: p.body, headers: p.headers, maxMessageBytes: p.max_message_bytes,
      userProperties: resolveUserProperties(route.user_properties, dl.origin), receivedAt: new Date(dl.enqueuedAt),
    });
    const input: OutboxInput = {
      ...base, commentId: result.commentId, document: JSON.parse(result.document) as RawEmailDocument,
      json: { document: result.document }, hashes: result.hashes, warnings: result.warnings,
    };
    if (result.thread) input.thread = { source: routeTarget(route), entry: { commentId: result.commentId, ...result.thread } };
    return input;
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return { ...base, commentId: dl.commentId, document: dl.document, error: { code: err.code, message: err.message } };
  }
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
    const result = await rt.store.replayDeadLetter(id, await replacementFor(rt, dl));
    if (result.status === 'queued') counts.requeued++;
    else counts.stillDead++;
  }
  if (counts.requeued > 0) {
    const controller = new AbortController();
    const names = [...rt.routes.keys()];
    const until = async () => (await Promise.all(names.map((n) => rt.store.outboxDepth(n)))).every((d) => d === 0);
    await rt.delivery.run(controller.signal, until);
  }
  return counts;
}
