/**
 * A dead letter parsed again from its kept bytes with the current code and configuration, as
 * intake parses (the document as JSON text with its ledger hashes and thread entry), put back
 * by `Store.replayDeadLetter` and reported (`item:replayed`). Shared by `mailgate dlq replay`,
 * the admin API and the console.
 */
import type { Config, RouteConfig } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { RawEmailDocument } from '../model/index.js';
import type { DeadLetterDetail, OutboxInput, ReplayResult, Store } from '../store/types.js';
import type { RuntimeEvents } from './events.js';
import { resolveUserProperties, routeTarget } from './origin.js';
import type { ParsePool } from './pool.js';

/** The replacement of a dead letter that kept its raw bytes; a parse failure keeps it dead with the new reason. */
export async function replacementFor(
  pool: ParsePool,
  parsing: Config['parsing'],
  route: RouteConfig,
  dl: DeadLetterDetail & { raw: Buffer },
): Promise<OutboxInput> {
  const base = { route: dl.route, key: dl.key, origin: dl.origin, raw: dl.raw };
  try {
    const result = await pool.parseEncoded(dl.raw, {
      body: parsing.body,
      headers: parsing.headers,
      maxMessageBytes: parsing.max_message_bytes,
      userProperties: resolveUserProperties(route.user_properties, dl.origin),
      receivedAt: new Date(dl.enqueuedAt),
    });
    const input: OutboxInput = {
      ...base,
      commentId: result.commentId,
      document: JSON.parse(result.document) as RawEmailDocument,
      json: { document: result.document },
      hashes: result.hashes,
      facts: result.facts,
      warnings: result.warnings,
    };
    if (result.thread) input.thread = { source: routeTarget(route), entry: { commentId: result.commentId, ...result.thread } };
    return input;
  } catch (err) {
    if (!isGatewayError(err)) throw err;
    return { ...base, commentId: dl.commentId, document: dl.document, error: { code: err.code, message: err.message } };
  }
}

/** Replays a dead letter that kept its raw bytes: parsed again, queued again (or kept dead with the new reason), reported. */
export async function replayDeadLetter(
  ctx: { store: Store; pool: ParsePool; parsing: Config['parsing']; events?: RuntimeEvents | undefined },
  route: RouteConfig,
  dl: DeadLetterDetail & { raw: Buffer },
): Promise<ReplayResult> {
  const result = await ctx.store.replayDeadLetter(dl.id, await replacementFor(ctx.pool, ctx.parsing, route, dl));
  ctx.events?.emit('item:replayed', { id: result.id, route: dl.route, adapter: dl.origin.adapter, state: result.status });
  return result;
}
