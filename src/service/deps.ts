/** ServerDeps (src/server/deps.ts) over a running service: its store, parse pool and adapters. */
import { buildComment, computeThreadProperties } from '../preview/index.js';
import type { RouteConfig } from '../config/schema.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { resolveUserProperties, routeTarget } from '../pipeline/origin.js';
import type { RuntimeEvents } from '../pipeline/events.js';
import { replayDeadLetter } from '../pipeline/replay.js';
import { threadInIndex } from '../pipeline/thread-index.js';
import { predictionRecord } from '../sinks/outputs.js';
import type { ParsePool } from '../pipeline/pool.js';
import type { PreviewOptions } from '../preview/types.js';
import type { ReadyReport, ServerDeps } from '../server/deps.js';
import { httpError } from '../server/errors.js';
import { localPreview } from '../server/local-preview.js';
import { ownerSummary } from '../store/common.js';
import type { Store } from '../store/types.js';
import type { AdapterEntry } from '../runtime/adapters.js';
import { pauseJson, type RoutePauses } from '../runtime/pauses.js';
import { listMailboxes, setMailboxEnabled } from './mailboxes.js';

export interface ServiceDepsOptions {
  config: Readonly<Config>;
  store: Store;
  pool: ParsePool;
  /**
   * The preview endpoints' own pool (one small worker), made on the first preview: a hostile
   * preview spends its budget there, never a worker intake waits for.
   */
  previewPool: () => ParsePool;
  routes: ReadonlyMap<string, RouteConfig>;
  adapters: readonly AdapterEntry[];
  metrics: Metrics;
  logger: Logger;
  /** Where a replay is reported (`item:replayed`). */
  events: RuntimeEvents;
  /** True once shutdown began: /readyz answers 503. */
  stopping: () => boolean;
  /** Routes that cannot deliver right now: `paused` in /api/status (never a readiness check: intake still works). */
  pauses?: RoutePauses;
  /** Lifts a route's pause in this process (`POST /api/routes/:route/resume`); false when it was not paused here. */
  resumeRoute?: (route: string) => boolean;
}

function previewOptions(
  config: Readonly<Config>,
  route: RouteConfig | undefined,
  origin: Parameters<typeof resolveUserProperties>[1],
): PreviewOptions {
  const p = config.parsing;
  const base: PreviewOptions = { body: p.body, headers: p.headers, maxMessageBytes: p.max_message_bytes };
  return route ? { ...base, userProperties: resolveUserProperties(route.user_properties, origin) } : base;
}

export function createServiceDeps(o: ServiceDepsOptions): ServerDeps {
  const { store, pool, routes, adapters, config } = o;
  const routeOf = (name: string | undefined): RouteConfig | undefined => {
    if (name === undefined) return undefined;
    const r = routes.get(name);
    if (!r) throw httpError('MAILGATE_ERR_SERVER_BAD_REQUEST', `Unknown route "${name}".`);
    return r;
  };

  async function ready(): Promise<ReadyReport> {
    const checks: ReadyReport['checks'] = {};
    try {
      await store.outboxDepth();
      const { full } = store.health();
      checks['store'] =
        full === undefined
          ? { ok: true }
          : { ok: false, state: 'full', code: 'MAILGATE_ERR_STORE_FULL', detail: `since ${full.since}, ${full.method}: ${full.message}` };
    } catch (err) {
      const code = isGatewayError(err) ? err.code : 'MAILGATE_ERR_STORE_UNAVAILABLE';
      checks['store'] = { ok: false, state: 'unreachable', code, detail: (err as Error).message };
    }
    // An adapter with health lines (IMAP: one per account) is judged by them, any other by its run state.
    for (const e of adapters) {
      // Its mailbox lease is held by another replica, which reads it.
      if (e.state === 'standby') {
        checks[`${e.kind}:${e.name}`] = { ok: true, state: 'standby' };
        continue;
      }
      if (!e.adapter.health) {
        const failed = e.state === 'failed';
        const code = e.error ? { code: e.error.code } : {};
        checks[`${e.kind}:${e.name}`] = failed
          ? { ok: false, state: 'failed', ...code, detail: e.error?.message ?? 'failed' }
          : { ok: true, state: e.state };
        continue;
      }
      for (const h of e.adapter.health()) {
        const error = h.lastError ? { code: h.lastError.code, detail: h.lastError.message } : {};
        checks[`${e.kind}:${h.name}`] = h.ok ? { ok: true, state: h.state } : { ok: false, state: h.state, ...error };
      }
    }
    if (o.stopping()) checks['service'] = { ok: false, state: 'stopping' };
    return { ok: Object.values(checks).every((c) => c.ok), checks };
  }

  async function status() {
    const [counts, counters] = await Promise.all([store.outboxCounts(), store.counters()]);
    const routeList = [...routes.values()].map((r) => {
      const outbox: Record<string, number> = { queued: 0, delivered: 0, dead: 0 };
      for (const c of counts) if (c.route === r.name) outbox[c.status] = c.count;
      const { route: _ignored, ...totals } = counters.find((c) => c.route === r.name) ?? {
        route: r.name,
        enqueued: 0,
        delivered: 0,
        unchanged: 0,
        deadLettered: 0,
        aiUnits: 0,
      };
      const pause = o.pauses?.get(r.name);
      const paused = pause === undefined ? null : pauseJson(pause);
      return { route: r.name, mode: r.mode, target: r.mode === 'sync' ? r.source : r.dataset, paused, outbox, ...totals };
    });
    const list: Array<Record<string, unknown>> = [];
    const leases = new Map((await store.listLeases()).map((l) => [l.name, l]));
    for (const e of adapters) {
      const lease = leases.get(`${e.kind}:${e.name}`);
      if (e.state === 'standby') {
        list.push({ kind: e.kind, name: e.name, state: 'standby', healthy: true, heldBy: lease?.owner ?? null });
        continue;
      }
      if (!e.adapter.health) {
        list.push({ kind: e.kind, name: e.name, state: e.state, ...(e.error ? { error: e.error } : {}) });
        continue;
      }
      // Per health line: its detail, state, healthy and lastError (null when none).
      for (const h of e.adapter.health()) {
        list.push({ kind: e.kind, name: h.name, ...h.detail, state: h.state, healthy: h.ok, lastError: h.lastError ?? null });
      }
    }
    const owners = (await store.listOwners()).map((o) => ownerSummary(o, [...leases.values()]));
    // The readiness checks in full (error text included): /readyz shows only their state and code.
    const readiness = (await ready()).checks;
    const api = config.api.url ?? 'built-in emulator';
    const mailboxes = await listMailboxes(store, adapters);
    return { store: { kind: store.kind }, routes: routeList, adapters: list, mailboxes, owners, api, readiness };
  }

  async function replay(id: number) {
    const dead = await store.getDeadLetter(id);
    if (!dead) return undefined;
    const route = routes.get(dead.route);
    if (!route)
      throw httpError(
        'MAILGATE_ERR_SERVER_BAD_REQUEST',
        `Dead letter ${id} belongs to route "${dead.route}", which is no longer configured.`,
      );
    if (!dead.raw) throw httpError('MAILGATE_ERR_SERVER_BAD_REQUEST', `Dead letter ${id} has no raw bytes kept; it cannot be re-parsed.`);
    const result = await replayDeadLetter({ store, pool, parsing: config.parsing, events: o.events }, route, { ...dead, raw: dead.raw });
    o.logger.info({ id, status: result.status }, 'dead letter replayed');
    return { ...result };
  }

  const local = localPreview();
  return {
    ready,
    status,
    deadLetters: {
      list: (q) => store.listDeadLetters(q) as never,
      async get(id) {
        const d = await store.getDeadLetter(id);
        return d as never;
      },
      replay,
      purge: (f) => store.purgeDeadLetters(f),
    },
    predictions: {
      list: async (q) => (await store.listPredictions(q)).map((p) => ({ ...predictionRecord(p) })),
    },
    async previewItem(id) {
      const d = await store.getItem(id);
      if (!d) return undefined;
      // Built from the stored document, as the service builds it (intake does not store
      // previews); none for a message that never parsed (its document is an empty placeholder).
      const parsed = 'raw' in d.document.raw_email.headers ? d.document.raw_email.headers.raw !== '' : true;
      const built = d.preview ?? (parsed ? buildComment(d.document).comment : undefined);
      // Its thread across everything ingested for the route's target (the store's thread index).
      const route = routes.get(d.route);
      const placed =
        built === undefined
          ? undefined
          : route === undefined
            ? { comment: built, thread: computeThreadProperties([built]).get(built.id) ?? null }
            : await threadInIndex(store, routeTarget(route), built);
      return {
        id: d.id,
        route: d.route,
        key: d.key,
        status: d.status,
        ...(d.outcome ? { outcome: d.outcome } : {}),
        document: d.document,
        comment: placed?.comment ?? null,
        thread_properties: placed?.thread ?? null,
        ...(d.status === 'dead' && d.lastError ? { error: d.lastError } : {}),
      };
    },
    async preview(raw, request) {
      const r = await o
        .previewPool()
        .parse(raw, previewOptions(config, routeOf(request.route), { adapter: 'preview', instance: '', id: '', details: {} }));
      const thread = computeThreadProperties([r.comment]).get(r.comment.id) ?? null;
      return { document: r.document, comment: r.comment, thread_properties: thread, warnings: r.warnings };
    },
    mailboxes: {
      list: () => listMailboxes(store, adapters),
      async set(mailbox, enabled) {
        const known = (await listMailboxes(store, adapters)).some((m) => m.mailbox === mailbox);
        if (!known) return false;
        await setMailboxEnabled(store, mailbox, enabled);
        o.logger.info({ mailbox, enabled }, `mailbox ${mailbox} ${enabled ? 'enabled' : 'disabled'} by command`);
        return true;
      },
    },
    routes: {
      async resume(route) {
        if (!routes.has(route)) return undefined;
        const stored = await store.resumeRoute(route);
        const here = o.resumeRoute?.(route) ?? false;
        return stored || here;
      },
    },
    threads: local.threads,
    metrics: o.metrics,
    logger: o.logger,
  };
}
