/** Counters of an import: the line beside the progress bar on a terminal (src/cli/terminal/), and the final summary. */
import type { RuntimeEvents } from '../../pipeline/events.js';
import { skipText } from '../skips.js';

export interface ImportSummary {
  route: string;
  dryRun: boolean;
  read: number;
  parsed: number;
  unreadable: number;
  queued: number;
  duplicates: number;
  delivered: number;
  unchanged: number;
  rejected: number;
  deadLettered: number;
  /** AI units the API confirmed to this run (dry run: estimated by the ledger rule). */
  aiUnits: number;
  /**
   * AI units by the ledger rule: `aiUnits` plus documents this run re-sent that an earlier,
   * interrupted attempt had created (billed then, not by this run). An estimate, never less than `aiUnits`.
   */
  aiUnitsEstimated: number;
  seconds: number;
  messagesPerSecond: number;
  emulatorUrl?: string;
  /** Predict routes with a sink: predictions written to the sink outputs by this run (per output). */
  sinkSent?: number;
  /** False when the import stopped waiting for the sink (MAILGATE_ERR_SINK_FLUSH_TIMEOUT). */
  sinkFlushed?: boolean;
  /** Messages the --allow/--deny/--skip filter left out (never parsed nor billed), by reason. */
  filtered?: number;
  filteredBy?: Partial<Record<string, number>>;
  /** Files met in a folder walk and skipped (not mail, a link refused): never parsed, stored nor billed. */
  skipped: number;
  /** The skipped files by reason (`JSON`, `image`, `archive`, `binary`, …). */
  skippedBy: Record<string, number>;
  /** True when the operator was shown the estimate and answered no: nothing was sent. */
  declined?: boolean;
  /** Why the import stopped early: the API refused the credentials or the target (401, 403, 404). */
  error?: { code: string; message: string };
}

/** What an import counted so far, from the runtime's events. */
export interface ImportCounts {
  /** Messages handed to intake and durable (duplicates included). */
  read: number;
  queued: number;
  duplicates: number;
  /** Intake's dead letters: unreadable inputs and unparseable messages (raw bytes kept). */
  intakeDead: number;
  delivered: number;
  unchanged: number;
  rejected: number;
  aiUnits: number;
  aiUnitsEstimated: number;
}

/** Counts of an import, kept up to date by listeners of the runtime's events. */
export function countImport(events: RuntimeEvents): ImportCounts {
  const c: ImportCounts = {
    read: 0,
    queued: 0,
    duplicates: 0,
    intakeDead: 0,
    delivered: 0,
    unchanged: 0,
    rejected: 0,
    aiUnits: 0,
    aiUnitsEstimated: 0,
  };
  events.on('item:stored', (e) => {
    c.read++;
    if (e.outcome === 'queued') c.queued++;
    else if (e.outcome === 'duplicate') c.duplicates++;
    else c.intakeDead++;
  });
  events.on('delivery:batch', (e) => {
    c.delivered += e.delivered;
    c.unchanged += e.unchanged;
    c.rejected += e.rejected;
    c.aiUnits += e.aiUnits;
    c.aiUnitsEstimated += e.aiUnitsEstimated;
  });
  return c;
}

export function summarize(route: string, c: ImportCounts, unreadable: number, startedAt: number): ImportSummary {
  const seconds = (Date.now() - startedAt) / 1000;
  return {
    route,
    dryRun: false,
    skipped: 0,
    skippedBy: {},
    // Unreadable inputs are handed to intake too (as failures): read counts them.
    read: c.read,
    parsed: c.queued,
    unreadable,
    queued: c.queued,
    duplicates: c.duplicates,
    delivered: c.delivered,
    unchanged: c.unchanged,
    rejected: c.rejected,
    // Unreadable inputs reach intake as failures: intake's dead letters count them with the unparseable.
    deadLettered: c.rejected + c.intakeDead,
    aiUnits: c.aiUnits,
    aiUnitsEstimated: c.aiUnitsEstimated,
    seconds: Math.round(seconds * 1000) / 1000,
    // Messages this run handled: read, or delivered from an earlier run's queue when it read nothing new.
    messagesPerSecond: seconds > 0 ? Math.round(Math.max(c.read, c.delivered + c.unchanged + c.rejected) / seconds) : 0,
  };
}

/** The ledger's estimate, shown only where it differs from what the API confirmed. */
function estimated(s: ImportSummary): string {
  return s.aiUnitsEstimated === s.aiUnits ? '' : ` (estimated ${s.aiUnitsEstimated})`;
}

/** The counters in order; a dry run queues nothing: what it would send is "would send". */
function counters(s: ImportSummary): Array<[string, number]> {
  return [
    ['read', s.read],
    ['parsed', s.parsed],
    [s.dryRun ? 'would send' : 'queued', s.queued],
    ['delivered', s.delivered],
    ['unchanged', s.unchanged],
    ['rejected', s.rejected],
    ['dead letters', s.deadLettered],
  ];
}

function units(s: ImportSummary): string {
  return `AI units ${s.aiUnits}${s.dryRun ? ' (estimated)' : estimated(s)}`;
}

/** Every counter: the summary at the end. */
export function progressLine(s: ImportSummary): string {
  return `${counters(s)
    .map(([k, v]) => `${k} ${v}`)
    .join('  ')}  ${units(s)}`;
}

/** Which counters stay beside the bar when the room is short, most wanted first (AI units and read always). */
const KEEP = ['queued', 'would send', 'delivered', 'dead letters', 'rejected', 'unchanged', 'parsed'];

/**
 * The counters beside the progress bar, within `room` columns: AI units first (the figure that
 * costs), then read and the counters that are not 0, in their order; where they do not all fit,
 * the least wanted go first (parsed, unchanged, …). The summary at the end has them all.
 */
export function liveLine(s: ImportSummary, room = Infinity): string {
  const set = counters(s).filter(([k, v]) => v > 0 || k === 'read');
  const text = (kept: Array<[string, number]>) => [units(s), ...kept.map(([k, v]) => `${k} ${v}`)].join(' · ');
  let kept = set;
  for (const drop of [...KEEP].reverse()) {
    if (text(kept).length <= room) break;
    kept = kept.filter(([k]) => k !== drop);
  }
  return text(kept);
}

export function summaryText(s: ImportSummary): string {
  const head = s.dryRun ? 'dry run (nothing sent, nothing stored)' : `import into route ${s.route}`;
  const skipped = s.skipped > 0 ? `; ${skipText(s.skipped, s.skippedBy)}, never parsed nor billed` : '';
  const reasons = Object.entries(s.filteredBy ?? {})
    .map(([r, n]) => `${r} ${String(n)}`)
    .join(', ');
  const filtered = (s.filtered ?? 0) > 0 ? `; filtered ${String(s.filtered)} messages (${reasons}), never parsed nor billed` : '';
  return `${head}: ${progressLine(s)}  in ${s.seconds}s (${s.messagesPerSecond} msg/s)${skipped}${filtered}\n`;
}
