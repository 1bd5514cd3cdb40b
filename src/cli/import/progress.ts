/** Counters of an import: the line beside the progress bar on a terminal (src/cli/terminal/), and the final summary. */
import type { DeliveryCounters } from '../../pipeline/delivery.js';
import type { IntakeCounters } from '../../pipeline/intake.js';
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
  /** Files met in a folder walk and skipped (not mail, a link refused): never parsed, stored nor billed. */
  skipped: number;
  /** The skipped files by reason (`JSON`, `image`, `archive`, `binary`, …). */
  skippedBy: Record<string, number>;
  /** True when the operator was shown the estimate and answered no: nothing was sent. */
  declined?: boolean;
  /** Why the import stopped early: the API refused the credentials or the target (401, 403, 404). */
  error?: { code: string; message: string };
}

export function summarize(
  route: string,
  intake: IntakeCounters,
  delivery: DeliveryCounters,
  unreadable: number,
  startedAt: number,
): ImportSummary {
  const seconds = (Date.now() - startedAt) / 1000;
  // Unreadable inputs are handed to intake too (as failures): received counts them.
  const read = intake.received;
  return {
    route,
    dryRun: false,
    skipped: 0,
    skippedBy: {},
    read,
    parsed: intake.parsed,
    unreadable,
    queued: intake.queued,
    duplicates: intake.duplicates,
    delivered: delivery.delivered,
    unchanged: delivery.unchanged,
    rejected: delivery.rejected,
    // Unreadable inputs reach intake as failures: intake.failed counts them with the unparseable.
    deadLettered: delivery.rejected + intake.failed,
    aiUnits: delivery.aiUnits,
    aiUnitsEstimated: delivery.aiUnitsEstimated,
    seconds: Math.round(seconds * 1000) / 1000,
    // Messages this run handled: read, or delivered from an earlier run's queue when it read nothing new.
    messagesPerSecond: seconds > 0 ? Math.round(Math.max(read, delivery.delivered + delivery.unchanged + delivery.rejected) / seconds) : 0,
  };
}

/** The ledger's estimate, shown only where it differs from what the API confirmed. */
function estimated(s: ImportSummary): string {
  return s.aiUnitsEstimated === s.aiUnits ? '' : ` (estimated ${s.aiUnitsEstimated})`;
}

export function progressLine(s: ImportSummary): string {
  return `read ${s.read}  parsed ${s.parsed}  queued ${s.queued}  delivered ${s.delivered}  unchanged ${s.unchanged}  rejected ${s.rejected}  dead letters ${s.deadLettered}  AI units ${s.aiUnits}${estimated(s)}`;
}

export function summaryText(s: ImportSummary): string {
  const head = s.dryRun ? 'dry run (nothing sent, nothing stored)' : `import into route ${s.route}`;
  const skipped = s.skipped > 0 ? `; ${skipText(s.skipped, s.skippedBy)}, never parsed nor billed` : '';
  return `${head}: ${progressLine(s)}  in ${s.seconds}s (${s.messagesPerSecond} msg/s)${skipped}\n`;
}
