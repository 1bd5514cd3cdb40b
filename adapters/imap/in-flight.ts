/**
 * Slices of a folder pass handed to intake and not yet durable. The connection reads ahead
 * while intake parses and stores what it was given, bounded by the bytes held (the raw sources
 * of the slices waiting) and by a count; intake stores the slices in call order, each with its
 * checkpoint, so a slice is settled (its checkpoint believed) only in that order.
 */
import type { FilterReason } from '../../src/controls/filter.js';

/** Slices in flight at most, whatever their size (each is one intake call and one commit). */
export const MAX_SLICES_IN_FLIGHT = 8;

/**
 * The smallest piece the last slice of a pass is handed over in: delivery sends a pull call of
 * at least 100 items at once, without lingering for more (src/runtime/wake-delivery.ts); a
 * smaller piece could wait there for mail that is not coming.
 */
export const TAIL_PIECE_MESSAGES = 100;

/**
 * How many messages each intake call of the last slice of a pass holds: halves while what is
 * left holds two pieces (475 → 238, 119, 118). Nothing is fetched after that slice, so nothing
 * else overlaps its parse, commit and delivery: in one call they run one after the other over
 * the whole slice; in pieces the first piece is stored and delivered while the next ones parse,
 * and only the last, smaller piece is left in series at the end.
 */
export function tailPieces(count: number): number[] {
  const out: number[] = [];
  let left = count;
  while (left >= 2 * TAIL_PIECE_MESSAGES) {
    const piece = Math.ceil(left / 2);
    out.push(piece);
    left -= piece;
  }
  if (left > 0) out.push(left);
  return out;
}

export interface SliceInFlight {
  done: Promise<void>;
  /** Highest UID the slice covers: the checkpoint once it is durable. */
  covered: number;
  count: number;
  stubbed: number;
  filtered: FilterReason[];
  /** Raw bytes of the slice's messages (held until it is durable). */
  bytes: number;
}

export class InFlight {
  private readonly slices: SliceInFlight[] = [];
  private bytes = 0;

  /** `maxBytes`: raw bytes held at most (the newest slice stays in flight, however large). */
  constructor(
    private readonly maxBytes: number,
    private readonly onSettled: (slice: SliceInFlight) => void,
  ) {}

  get size(): number {
    return this.slices.length;
  }

  /** Hands a slice over; waits, oldest first, until the window is back within its bounds. */
  async push(slice: SliceInFlight): Promise<void> {
    slice.done.catch(() => undefined); // awaited in order; a failure stops the pass there
    this.slices.push(slice);
    this.bytes += slice.bytes;
    while (this.slices.length >= MAX_SLICES_IN_FLIGHT || (this.slices.length > 1 && this.bytes > this.maxBytes)) await this.settleOldest();
  }

  /** Waits for every slice, in order. Rejects with the first failure. */
  async drain(): Promise<void> {
    while (this.slices.length > 0) await this.settleOldest();
  }

  /** Lets every slice finish, failed or not (a failed pass still keeps what was stored before the failure). */
  async abandon(): Promise<void> {
    await Promise.all(this.slices.map((s) => s.done.catch(() => undefined)));
  }

  private async settleOldest(): Promise<void> {
    const slice = this.slices[0]!;
    await slice.done;
    this.slices.shift();
    this.bytes -= slice.bytes;
    this.onSettled(slice);
  }
}
