/**
 * Intake's parse step: one message -> its outbox input (document, preview, ledger hashes,
 * facts and thread entry from the parse pool; a dead letter with its raw bytes kept when it
 * could not be read or parsed), keyed by the key its adapter built within the route's target.
 */
import { createHash } from 'node:crypto';
import { isGatewayError, type Warning } from '../errors.js';
import { isPoison, poisonFailure, type PoisonGuard } from './poison.js';
import type { RouteConfig } from '../config/schema.js';
import type { RawEmailDocument } from '../model/index.js';
import { NO_FACTS } from '../preview/facts.js';
import type { PreviewOptions } from '../preview/types.js';
import type { OutboxInput } from '../store/types.js';
import type { EncodedPreview } from './encoded.js';
import { outboxKey, resolveUserProperties, routeTarget } from './origin.js';
import type { Inbound } from './types.js';

/**
 * Parses one message; `encodePreview(await preview(raw, options))` does it in this thread. With
 * `alone`, on a parse worker holding no other message (a message that killed its worker before).
 */
export type ParseFn = (raw: Buffer, options: PreviewOptions, how?: { alone?: boolean }) => Promise<EncodedPreview>;

export interface IntakeCounters {
  received: number;
  parsed: number;
  failed: number;
  queued: number;
  duplicates: number;
}

export const noCounts = (): IntakeCounters => ({ received: 0, parsed: 0, failed: 0, queued: 0, duplicates: 0 });

export interface PrepareOptions {
  parse: ParseFn;
  parsing: Pick<PreviewOptions, 'body' | 'headers' | 'maxMessageBytes'>;
  /** Poison messages (poison.ts): parse attempts of pulled messages counted in the store before each parse. */
  poison?: PoisonGuard;
}

/** A message with its route, on its way to the outbox. */
export interface Routed {
  msg: Inbound;
  route: RouteConfig;
  /** Warnings of a step before parsing (a malformed journal report), added to the item's. */
  warnings?: Warning[];
  /** Parse attempts of this message counted in the store, this one included (pull calls with a poison guard). */
  attempts?: number;
}

/** A message's outbox key and, when its sender named it, the alias of that id (both within the route's target). */
export function keysOf(route: RouteConfig, msg: Inbound): { key: string; alias?: string } {
  return { key: outboxKey(route, msg.key), ...(msg.alias === undefined ? {} : { alias: outboxKey(route, msg.alias) }) };
}

/**
 * An outbox input built from JSON text: the store writes the text, the document object is
 * parsed only if something reads it. A class, so that the lazy getter lives on the prototype
 * rather than in a closure per message.
 */
class EncodedInput implements OutboxInput {
  readonly commentId: string;
  readonly json: { document: string };
  readonly hashes: EncodedPreview['hashes'];
  readonly warnings: EncodedPreview['warnings'];
  readonly facts: EncodedPreview['facts'];
  thread?: OutboxInput['thread'];
  aliases?: string[];
  readonly afterDelivery?: boolean;
  private parsed: RawEmailDocument | undefined;

  constructor(
    readonly route: string,
    readonly key: string,
    readonly origin: OutboxInput['origin'],
    readonly raw: Buffer,
    afterDelivery: boolean,
    r: EncodedPreview,
  ) {
    this.commentId = r.commentId;
    this.json = { document: r.document };
    this.hashes = r.hashes;
    this.warnings = r.warnings;
    this.facts = r.facts;
    if (afterDelivery) this.afterDelivery = true;
  }

  get document(): RawEmailDocument {
    return (this.parsed ??= JSON.parse(this.json.document) as RawEmailDocument);
  }
}

/**
 * The outbox input of one message, counted in `c`: parsed (budgets, route properties, thread
 * entry), or a dead letter (an `Inbound.failure` or a parse error; raw bytes kept). Rejects only
 * when parsing cannot run at all.
 */
export async function prepare(
  options: PrepareOptions,
  { msg, route, warnings, attempts }: Routed,
  c: IntakeCounters,
): Promise<OutboxInput> {
  const { key, alias } = keysOf(route, msg);
  // A dead letter's fields, built only for one (a parsed message is an EncodedInput).
  const base = () => ({
    route: route.name,
    key,
    origin: msg.origin,
    raw: msg.raw,
    ...(msg.afterDelivery === true ? { afterDelivery: true } : {}),
    ...(alias === undefined ? {} : { aliases: [alias] }),
  });
  if (msg.failure !== undefined) {
    c.failed++;
    return failed(base(), msg, msg.failure);
  }
  const poison = attempts === undefined ? undefined : options.poison;
  if (poison !== undefined && isPoison(attempts!, poison.poisonAfter)) {
    c.failed++;
    return failed(base(), msg, poisonFailure(poison.poisonAfter));
  }
  try {
    const userProperties = resolveUserProperties(route.user_properties, msg.origin);
    const opts = { ...options.parsing, userProperties, receivedAt: msg.receivedAt };
    const parsed = await parseCounted(
      options.parse,
      msg.raw,
      opts,
      poison && { guard: poison, route: route.name, key, attempts: attempts! },
    );
    if ('poison' in parsed) {
      c.failed++;
      return failed(base(), msg, parsed.poison);
    }
    const result = warnings === undefined ? parsed : { ...parsed, warnings: [...parsed.warnings, ...warnings] };
    c.parsed++;
    const input = new EncodedInput(route.name, key, msg.origin, msg.raw, msg.afterDelivery === true, result);
    if (alias !== undefined) input.aliases = [alias];
    // Set on the object itself: a spread would read (and parse) its lazy document.
    if (result.thread) input.thread = { source: routeTarget(route), entry: { commentId: input.commentId, ...result.thread } };
    return input;
  } catch (err) {
    if (!isGatewayError(err) || err.code === 'MAILGATE_ERR_MIME_POOL_CLOSED') throw err;
    c.failed++;
    return failed(base(), msg, { code: err.code, message: err.message });
  }
}

/**
 * Parses a message; one that kills its parse worker is counted again (one store write, before
 * the parse it counts) and parsed again alone, until it has had `poison_after` attempts: then it
 * is set aside. Without a count (`counted` undefined) a worker's death is the message's failure.
 */
async function parseCounted(
  parse: ParseFn,
  raw: Buffer,
  opts: PreviewOptions,
  counted: { guard: PoisonGuard; route: string; key: string; attempts: number } | undefined,
): Promise<EncodedPreview | { poison: { code: string; message: string } }> {
  let attempts = counted?.attempts ?? 0;
  for (let alone = false; ; alone = true) {
    try {
      return await parse(raw, opts, alone ? { alone } : undefined);
    } catch (err) {
      if (counted === undefined || !isGatewayError(err) || err.code !== 'MAILGATE_ERR_MIME_WORKER_CRASHED') throw err;
      const { guard, route, key } = counted;
      if (attempts >= guard.poisonAfter) return { poison: poisonFailure(guard.poisonAfter, err.message) };
      attempts = (await guard.count(route, [key])).get(key) ?? Number.POSITIVE_INFINITY;
      if (isPoison(attempts, guard.poisonAfter)) return { poison: poisonFailure(guard.poisonAfter, err.message) };
    }
  }
}

/** A dead letter for a message that could not be read or parsed: its bytes kept, an empty document. */
function failed(base: Omit<OutboxInput, 'commentId' | 'document'>, msg: Inbound, error: { code: string; message: string }): OutboxInput {
  const commentId = createHash('sha256').update(msg.raw).digest('hex');
  return { ...base, commentId, document: { raw_email: { headers: { raw: '' }, body: { plain: '' } } }, facts: NO_FACTS, error };
}
