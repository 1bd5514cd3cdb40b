/**
 * Isolating rejected documents by bisection. A request answered 400/413/422 is split in
 * halves until every rejected document stands alone; the accepted halves are delivered.
 *
 * Cost with one bad document in n: at each level the first half is sent; when it succeeds
 * the second half is known to hold the culprit (its parent failed) and is split again
 * without being sent whole. That is one or two requests per level, plus the lone culprit:
 * at most 2·ceil(log2 n) + 1 extra requests (4096 → ≤ 25), typically about 1.5 per level.
 *
 * A refusal that is about the request as a whole (an invalid transform tag, a bad override
 * list) would make bisection refuse every document. It is recognised by this rule
 * (docs/delivery.md "Request-level rejections"), where a failure's *signature* is its HTTP
 * status and API message (compared for equality, never parsed):
 *   1. the batch is refused with signature S and both halves of its first split are refused
 *      with S too (a batch of one document: that document is refused with S); then
 *   2. the request's envelope is sent with no documents: refused with S proves the refusal
 *      has nothing to do with the documents → request-level. Accepted (or refused with
 *      another signature while documents remain to probe), the documents are the cause;
 *   3. when the service refuses the empty list itself (another signature), the last document
 *      of each half is sent alone: both refused with S → request-level.
 * A request-level refusal halts the delivery: every document of the batch and of the batches
 * after it is left for a later attempt, none is rejected.
 */

export type SendResult<T> = { ok: true; value: T } | { ok: false; error: unknown };

export type PartResult<T> =
  | { indices: number[]; kind: 'ok'; value: T }
  /** The document was sent alone and refused. */
  | { indices: number[]; kind: 'rejected'; error: unknown }
  /** The split budget ran out before these documents were isolated. */
  | { indices: number[]; kind: 'unsplit'; error: unknown }
  /**
   * A failure that splitting cannot help (retries exhausted, auth, abort, a request-level
   * refusal); `sent` false when these documents were never tried.
   */
  | { indices: number[]; kind: 'failed'; error: unknown; sent: boolean };

export interface SplitState {
  /** Requests made so far for this delivery. */
  requests: number;
  /** Requests made because of splitting (beyond the first per batch), probes included. */
  splitRequests: number;
  /** Set by the first failure splitting cannot help: nothing else is sent afterwards. */
  halted: { error: unknown } | undefined;
}

export interface SplitOptions {
  /** True when the failure is about the request's content (400, 413, 422): split it. */
  isSplittable(error: unknown): boolean;
  /** Split requests allowed per batch before giving up isolation. */
  maxSplitRequests: number;
  /** The identity of a failure (status and API message): equal signatures are "the same refusal". */
  signature(error: unknown): string;
  /** The error that halts the delivery once a refusal is shown to be request-level. */
  requestRejected(error: unknown): unknown;
}

/** Sends these documents; with `envelopeOnly` the same request with an empty document list. */
export type Send<T> = (indices: number[], envelopeOnly?: boolean) => Promise<SendResult<T>>;

export function newSplitState(): SplitState {
  return { requests: 0, splitRequests: 0, halted: undefined };
}

/**
 * Sends `indices` (one packed batch), splitting on content failures. `send` must not throw
 * for request failures; it returns them. Parts come back in input order.
 */
export async function sendSplitting<T>(
  indices: number[],
  send: Send<T>,
  options: SplitOptions,
  state: SplitState,
): Promise<Array<PartResult<T>>> {
  const parts: Array<PartResult<T>> = [];
  let budget = options.maxSplitRequests;
  let lastFailure: unknown;

  /** A request made because of splitting; undefined when the budget is spent. */
  const splitSend = async (part: number[], envelopeOnly = false): Promise<SendResult<T> | undefined> => {
    if (budget <= 0) return undefined;
    budget -= 1;
    state.splitRequests += 1;
    state.requests += 1;
    return send(part, envelopeOnly);
  };
  const sameAs = (result: SendResult<T> | undefined, error: unknown): boolean =>
    result !== undefined &&
    !result.ok &&
    options.isSplittable(result.error) &&
    options.signature(result.error) === options.signature(error);
  const halt = (part: number[], error: unknown): void => {
    const rejected = options.requestRejected(error);
    state.halted = { error: rejected };
    parts.push({ indices: part, kind: 'failed', error: rejected, sent: true });
  };

  /** Files the answer to `part`; a splittable refusal of several documents is split. */
  const settle = async (part: number[], result: SendResult<T>): Promise<void> => {
    if (result.ok) return void parts.push({ indices: part, kind: 'ok', value: result.value });
    if (!options.isSplittable(result.error)) {
      state.halted = { error: result.error };
      return void parts.push({ indices: part, kind: 'failed', error: result.error, sent: true });
    }
    if (part.length === 1) return void parts.push({ indices: part, kind: 'rejected', error: result.error });
    await split(part, result.error);
  };

  /** Sends `part` whole, unless the delivery halted or the budget is spent. */
  const visit = async (part: number[]): Promise<void> => {
    if (part.length === 0) return;
    if (state.halted !== undefined) return void parts.push({ indices: part, kind: 'failed', error: state.halted.error, sent: false });
    const result = await splitSend(part);
    if (result === undefined) return void parts.push({ indices: part, kind: 'unsplit', error: lastFailure });
    await settle(part, result);
  };

  /** `part` is known to be refused with `error`: isolate inside it. */
  const split = async (part: number[], error: unknown): Promise<void> => {
    lastFailure = error;
    const mid = Math.ceil(part.length / 2);
    const left = part.slice(0, mid);
    const right = part.slice(mid);
    if (state.halted !== undefined) return visit(part);
    const leftResult = await splitSend(left);
    if (leftResult === undefined) return void parts.push({ indices: part, kind: 'unsplit', error });
    if (leftResult.ok || !options.isSplittable(leftResult.error)) {
      await settle(left, leftResult);
      // Its sibling passed, so this half holds the culprit: split it without sending it whole.
      if (leftResult.ok && right.length > 1) return split(right, error);
      return visit(right);
    }
    await settle(left, leftResult);
    await visit(right);
  };

  /** The first split of a refused batch, with the request-level check of the rule above. */
  const firstSplit = async (batch: number[], error: unknown): Promise<void> => {
    lastFailure = error;
    const mid = Math.ceil(batch.length / 2);
    const left = batch.slice(0, mid);
    const right = batch.slice(mid);
    const leftResult = await splitSend(left);
    if (leftResult === undefined) return void parts.push({ indices: batch, kind: 'unsplit', error });
    if (!sameAs(leftResult, error)) {
      await settle(left, leftResult);
      if (leftResult.ok && right.length > 1 && state.halted === undefined) return split(right, error);
      return visit(right);
    }
    const rightResult = await splitSend(right);
    if (rightResult === undefined) return void parts.push({ indices: batch, kind: 'unsplit', error });
    if (
      sameAs(rightResult, error) &&
      (await requestLevel(batch, error, [
        [left, leftResult],
        [right, rightResult],
      ]))
    )
      return halt(batch, error);
    const probed = new Set(parts.flatMap((p) => p.indices));
    await settleRest(left, leftResult, probed);
    if (state.halted !== undefined) return visit(right.filter((i) => !probed.has(i)));
    await settleRest(right, rightResult, probed);
  };

  /** A half whose answer is known, minus the documents a probe already settled. */
  const settleRest = async (half: number[], result: SendResult<T>, probed: ReadonlySet<number>): Promise<void> => {
    const rest = half.filter((i) => !probed.has(i));
    if (rest.length === half.length) return settle(half, result);
    const probeParts = parts.filter((p) => p.indices.length === 1 && half.includes(p.indices[0]!));
    // The probe passed, so the rest holds what refused the half; otherwise the rest is unknown.
    if (probeParts.some((p) => p.kind === 'ok') && rest.length > 1 && !result.ok) return split(rest, result.error);
    return visit(rest);
  };

  /**
   * Steps 2 and 3 of the rule, for a batch whose halves were both refused like the batch.
   * A half of one document was already sent alone; from a longer half its last document is.
   * Documents sent alone that do not confirm a request-level refusal are filed as parts
   * (delivered or rejected on their own answer).
   */
  const requestLevel = async (batch: number[], error: unknown, halves: Array<[number[], SendResult<T>]>): Promise<boolean> => {
    const empty = await splitSend(batch, true);
    if (empty === undefined) return false;
    if (sameAs(empty, error)) return true;
    if (empty.ok || !options.isSplittable(empty.error)) return false;
    const probes: Array<[number[], SendResult<T> | undefined]> = [];
    for (const [half, answer] of halves) {
      if (half.length === 1) probes.push([half, answer]);
      else {
        const probe = [half[half.length - 1]!];
        probes.push([probe, await splitSend(probe)]);
      }
    }
    if (probes.every(([, answer]) => sameAs(answer, error))) return true;
    for (const [[probe, answer], [half]] of probes.map((p, i) => [p, halves[i]!] as const)) {
      if (answer !== undefined && half.length > 1) await settle(probe, answer);
    }
    return false;
  };

  const root = async (): Promise<void> => {
    if (state.halted !== undefined) return void parts.push({ indices, kind: 'failed', error: state.halted.error, sent: false });
    state.requests += 1;
    const result = await send(indices);
    if (result.ok || !options.isSplittable(result.error)) return settle(indices, result);
    if (indices.length === 1) {
      const empty = await splitSend(indices, true);
      if (sameAs(empty, result.error)) return halt(indices, result.error);
      return void parts.push({ indices, kind: 'rejected', error: result.error });
    }
    await firstSplit(indices, result.error);
  };

  await root();
  return parts.sort((a, b) => a.indices[0]! - b.indices[0]!);
}
