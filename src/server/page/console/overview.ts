/// <reference lib="dom" />
/**
 * The Overview view (`#/overview`): per route its counts, outbox depth, delivery rate and AI
 * units per day; counts per route and adapter; mailbox and adapter health; the replicas that
 * claim work (registered owners). From GET /api/overview, with GET /api/status for the rest.
 */
import type { AdapterHealthLine, ConsoleItemState, Overview, RouteOverview, StoreView } from '../../console-types.js';
import { get, url } from './api.js';
import { announce, byId, clear, empty, errorBox, h, kv, panel } from './dom.js';
import { duration, when } from './format.js';
import { pausedRoutes, pauseFix, renderPaused, type PausedRoute } from './paused.js';

const STATES: ConsoleItemState[] = ['queued', 'retrying', 'delivered', 'unchanged', 'dead'];
const box = () => byId('overview-body');

function table(head: string[], rows: Array<Array<string | Node>>): HTMLTableElement {
  return h('table', {}, [
    h('thead', {}, [
      h(
        'tr',
        {},
        head.map((c) => h('th', { scope: 'col', text: c })),
      ),
    ]),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {},
          r.map((c) => h('td', {}, [c])),
        ),
      ),
    ),
  ]);
}

/** One column per day: a bar (decoration, hidden from screen readers), the number and the day. */
function unitsChart(r: RouteOverview): HTMLElement {
  const days = r.ai_units_per_day;
  const max = Math.max(1, ...days.map((d) => d.units));
  const total = days.reduce((n, d) => n + d.units, 0);
  const cells = days.map((d) => {
    const bar = h('span', { class: 'bar-chart', 'aria-hidden': 'true' });
    bar.style.height = `${Math.round((d.units / max) * 3 * 100) / 100}rem`;
    return h('td', {}, [bar, h('span', { text: String(d.units) })]);
  });
  return h('div', { class: 'units' }, [
    h('table', {}, [
      h('caption', { text: `AI units per UTC day, ${days[0]?.day ?? ''} to ${days.at(-1)?.day ?? ''}: ${total} in all` }),
      h('thead', {}, [
        h(
          'tr',
          {},
          days.map((d) => h('th', { scope: 'col', title: d.day, 'aria-label': d.day, text: d.day.slice(8) })),
        ),
      ]),
      h('tbody', {}, [h('tr', {}, cells)]),
    ]),
  ]);
}

function routeCard(r: RouteOverview, pause: PausedRoute | undefined): HTMLElement {
  const p = pause?.paused;
  return panel(
    'Route ' + r.route,
    p
      ? h('p', { class: 'paused-line', role: 'note' }, [
          `Delivery paused since ${when(p.since)}: `,
          h('code', { text: p.code }),
          ` ${p.message}. ${pauseFix(p.code, p.target, p.message)}`,
        ])
      : null,
    kv([
      ['Delivery', p ? 'paused' : r.mode === null ? '' : 'delivering'],
      ['Mode', r.mode === null ? '(no longer configured)' : `${r.mode} → ${r.target ?? ''}`],
      ['Outbox depth', r.outbox_depth],
      ['Delivered, last minute', r.delivered_last_minute],
      ['Delivered, last hour', r.delivered_last_hour],
      ['Dead, last hour', r.dead_last_hour],
      ...STATES.map((s): [string, unknown] => [s[0]!.toUpperCase() + s.slice(1), r.counts[s]]),
    ]),
    unitsChart(r),
  );
}

const mib = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;

/** The store's size, free space, mode and oldest items. */
function storePanel(s: StoreView): HTMLElement {
  const rows: Array<[string, unknown]> = [['Size on disk', mib(s.bytes)]];
  if (s.free_bytes !== null) rows.push(['Free for reuse', mib(s.free_bytes)]);
  if (s.auto_vacuum !== null)
    rows.push(['Auto-vacuum', s.auto_vacuum === 'incremental' ? 'incremental' : `${s.auto_vacuum} (run mailgate store compact once)`]);
  rows.push(
    ['Oldest queued', s.oldest.queued === null ? '(none)' : when(s.oldest.queued)],
    ['Oldest delivered', s.oldest.delivered === null ? '(none)' : when(s.oldest.delivered)],
    ['Oldest dead letter', s.oldest.dead === null ? '(none)' : when(s.oldest.dead)],
  );
  return panel(`Store (${s.kind})`, kv(rows));
}

function health(a: AdapterHealthLine): string {
  if (a.healthy === true) return 'healthy';
  if (a.healthy === false) return 'unhealthy';
  return '';
}

function render(o: Overview, status: Record<string, unknown> | undefined): void {
  const server = status?.['server'] as { uptime_seconds?: number } | undefined;
  const paused = pausedRoutes(status);
  if (status) renderPaused(paused);
  const pauseOf = (route: string) => paused.find((p) => p.route === route);
  clear(
    box(),
    h('p', {
      class: 'hint',
      text:
        `As of ${when(o.at)} · API: ${String(status?.['api'] ?? '?')} · store: ${String((status?.['store'] as { kind?: string } | undefined)?.kind ?? '?')}` +
        (server?.uptime_seconds === undefined ? '' : ` · up ${duration(server.uptime_seconds)}`),
    }),
    ...(o.store.full === null
      ? []
      : [
          errorBox(
            'MAILGATE_ERR_STORE_FULL',
            `The store is full since ${when(o.store.full.since)} (${o.store.full.message}): senders are asked to retry and nothing is acknowledged until space returns.`,
          ),
        ]),
    o.routes.length
      ? h(
          'div',
          { class: 'cards' },
          o.routes.map((r) => routeCard(r, pauseOf(r.route))),
        )
      : empty('No routes.'),
    panel(
      'Per route and adapter',
      o.lines.length
        ? table(
            ['Route', 'Adapter', ...STATES],
            o.lines.map((l) => [l.route, l.adapter, ...STATES.map((s) => String(l.counts[s]))]),
          )
        : empty('Nothing ingested yet.'),
    ),
    panel(
      'Mailboxes and adapters',
      o.adapters.length
        ? table(
            ['Adapter', 'Name', 'State', 'Health', 'Last error'],
            o.adapters.map((a) => [
              a.kind,
              a.name,
              a.state ?? '',
              health(a),
              a.last_error ? `${a.last_error.code}: ${a.last_error.message}` : '',
            ]),
          )
        : empty('No adapters.'),
    ),
    storePanel(o.store),
    panel(
      'Replicas',
      o.owners.length
        ? table(
            ['Owner', 'Host', 'PID', 'Started', 'Heartbeat age'],
            o.owners.map((w) => [w.id, w.host, String(w.pid), when(w.started_at), duration(w.heartbeat_age_ms / 1000)]),
          )
        : empty('No registered owners.'),
    ),
  );
}

export async function showOverview(quiet = false): Promise<void> {
  const [o, s] = await Promise.all([get<Overview>(url('overview')), get<Record<string, unknown>>(url('status'))]);
  if (!o.ok) return clear(box(), errorBox(o.error.code, o.error.message));
  render(o.data, s.ok ? s.data : undefined);
  if (!quiet) announce('Overview updated.');
}
