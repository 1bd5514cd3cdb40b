/**
 * Isolating rejected documents by bisection. A request answered 400/413/422 is split in
 * halves until every rejected document stands alone; the accepted halves are delivered.
 *
 * Cost with one bad document in n: at each level the first half is sent; when it succeeds
 * the second half is known to hold the culprit (its parent failed) and is split again
 * without being sent whole. That is one or two requests per level, plus the lone culprit:
 * at most 2·ceil(log2 n) + 1 extra requests (4096 → ≤ 25), typically about 1.5 per level.
 */

export type SendResult<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type PartResult<T> =
  | { indices: number[]; kind: 'ok'; value: T }
  /** The document was sent alone and refused. */
  | { indices: number[]; kind: 'rejected'; error: unknown }
  /** The split budget ran out before these documents were isolated. */
  | { indices: number[]; kind: 'unsplit'; error: unknown }
  /** A failure that splitting cannot help (retries exhausted, auth, abort); `sent` false when never tried. */
  | { indices: number[]; kind: 'failed'; error: unknown; sent: boolean };

export interface SplitState {
  /** Requests made so far for this delivery. */
  requests: number;
  /** Requests made because of splitting (beyond the first per batch). */
  splitRequests: number;
  /** Set by the first failure splitting cannot help: nothing else is sent afterwards. */
  halted: { error: unknown } | undefined;
}

export interface SplitOptions {
  /** True when the failure is about the request's content (400, 413, 422): split it. */
  isSplittable(error: unknown): boolean;
  /** Split requests allowed per batch before giving up isolation. */
  maxSplitRequests: number;
}

export function newSplitState(): SplitState {
  return { requests: 0, splitRequests: 0, halted: undefined };
}

/**
 * Sends `indices` (one packed batch), splitting on content failures. `send` must not throw
 * for request failures; it returns them. Parts come back in input order.
 */
export async function sendSplitting<T>(
  indices: number[],
  send: (indices: number[]) => Promise<SendResult<T>>,
  options: SplitOptions,
  state: SplitState,
): Promise<Array<PartResult<T>>> {
  const parts: Array<PartResult<T>> = [];
  let budget = options.maxSplitRequests;
  let lastFailure: unknown;

  const visit = async (part: number[], first: boolean, knownBad: { error: unknown } | undefined): Promise<void> => {
    if (state.halted !== undefined) {
      parts.push({ indices: part, kind: 'failed', error: state.halted.error, sent: false });
      return;
    }
    let failure: unknown;
    if (knownBad !== undefined && part.length > 1) {
      failure = knownBad.error; // its parent failed and its sibling passed: no need to send it whole
    } else {
      if (!first && budget <= 0) {
        parts.push({ indices: part, kind: 'unsplit', error: lastFailure });
        return;
      }
      if (!first) {
        budget -= 1;
        state.splitRequests += 1;
      }
      state.requests += 1;
      const result = await send(part);
      if (result.ok) {
        parts.push({ indices: part, kind: 'ok', value: result.value });
        return;
      }
      if (!options.isSplittable(result.error)) {
        state.halted = { error: result.error };
        parts.push({ indices: part, kind: 'failed', error: result.error, sent: true });
        return;
      }
      if (part.length === 1) {
        parts.push({ indices: part, kind: 'rejected', error: result.error });
        return;
      }
      failure = result.error;
    }
    lastFailure = failure;
    const mid = Math.ceil(part.length / 2);
    const before = parts.length;
    await visit(part.slice(0, mid), false, undefined);
    const leftPassed = parts.length === before + 1 && parts[before]!.kind === 'ok';
    await visit(part.slice(mid), false, leftPassed ? { error: failure } : undefined);
  };

  await visit(indices, true, undefined);
  return parts;
}
