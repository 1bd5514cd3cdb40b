/**
 * Where a prediction sink writes (docs/predictions.md): a JSONL file and a webhook. `send`
 * resolves `sent` once the batch is durable at the destination (file fsynced, webhook
 * answered 2xx) or `skipped` when the webhook refused it for good (another 4xx); it throws a
 * coded error for anything worth retrying.
 */
import { createHmac } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { GatewayError } from '../errors.js';
import { parseRetryAfter } from '../api/retry.js';
import { escapeLineAndBidi } from '../line-safe.js';
import { redactUrl } from '../logger.js';
import type { PredictedLabel } from '../model/index.js';
import type { StoredPrediction } from '../store/types.js';

/** One prediction as the sinks, `mailgate predictions list --json` and the admin API show it. */
export interface PredictionRecord {
  /** Store id: increases with every save; a re-predicted comment comes again with a higher id. */
  id: number;
  route: string;
  comment_id: string;
  /** The outbox key of the message (`files:<path>:<index>`, `imap:<account>:<folder>:<uidvalidity>:<uid>`…). */
  key: string;
  predictions: PredictedLabel[];
  model: { version: number; time: string } | null;
  created_at: string;
}

export function predictionRecord(p: StoredPrediction): PredictionRecord {
  return {
    id: p.id,
    route: p.route,
    comment_id: p.commentId,
    key: p.key,
    predictions: p.predictions,
    model: p.model,
    created_at: p.createdAt,
  };
}

export type SendResult = 'sent' | 'skipped';

export interface SinkOutput {
  /** `jsonl` or `webhook`: part of the checkpoint key. */
  readonly name: string;
  send(batch: StoredPrediction[], signal: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}

/**
 * Appends one JSON line per prediction, one write and one fsync per batch (line separators and
 * bidi controls escaped: a file path in the key cannot split a record).
 */
export function jsonlOutput(path: string): SinkOutput {
  let file: FileHandle | undefined;

  async function handle(): Promise<FileHandle> {
    if (file) return file;
    await mkdir(dirname(path), { recursive: true });
    const fh = await open(path, 'a+');
    // A write torn by a power cut leaves a partial last line: start on a fresh one.
    const { size } = await fh.stat();
    if (size > 0) {
      const last = Buffer.alloc(1);
      await fh.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) await fh.write('\n');
    }
    return (file = fh);
  }

  return {
    name: 'jsonl',
    async send(batch) {
      const text = batch.map((p) => `${escapeLineAndBidi(JSON.stringify(predictionRecord(p)))}\n`).join('');
      try {
        const fh = await handle();
        await fh.write(text);
        await fh.sync();
        return 'sent';
      } catch (cause) {
        const fh = file;
        file = undefined;
        await fh?.close().catch(() => undefined);
        throw new GatewayError('MAILGATE_ERR_SINK_WRITE_FAILED', `cannot append to ${path}: ${(cause as Error).message}`, { cause });
      }
    },
    async close() {
      const fh = file;
      file = undefined;
      await fh?.close();
    },
  };
}

/**
 * The `X-Mailgate-Signature` value of a body sent at `t` (unix seconds):
 * `t=<t>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, the scheme of the inbound `raw` provider. The
 * timestamp is signed with the body, so a receiver that refuses old timestamps refuses replays.
 */
export function signature(secret: string, t: number, body: string | Buffer): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
}

/**
 * 2xx: sent. 408, 429, 5xx and redirects: retry (a redirect is never followed — it would carry
 * the signed batch to another address — and skipping would lose the batch: the operator fixes
 * the URL). Anything else: the receiver refuses this batch for good.
 */
export function webhookVerdict(status: number): 'sent' | 'retry' | 'skip' {
  if (status >= 200 && status <= 299) return 'sent';
  if (status === 408 || status === 429 || (status >= 500 && status <= 599) || (status >= 300 && status <= 399)) return 'retry';
  return 'skip';
}

export interface WebhookOptions {
  url: string;
  secret?: string;
  route: string;
  /** Clock of the signature timestamp, in ms (default Date.now). */
  now?: () => number;
  /** Deadline of one POST, connect to last byte, in ms. */
  timeoutMs: number;
  /** Called with a batch the receiver refused for good (logged by the caller). */
  onSkip?: (status: number, batch: StoredPrediction[]) => void;
}

/** POSTs `{"route": ..., "predictions": [PredictionRecord, ...]}` per batch. */
export function webhookOutput(options: WebhookOptions): SinkOutput {
  const shown = redactUrl(options.url);
  return {
    name: 'webhook',
    async send(batch, signal) {
      const body = JSON.stringify({ route: options.route, predictions: batch.map(predictionRecord) });
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'mailgate' };
      const t = Math.floor((options.now ?? Date.now)() / 1000);
      if (options.secret !== undefined) headers['x-mailgate-signature'] = signature(options.secret, t, body);
      let res: Response;
      try {
        const deadline = AbortSignal.any([signal, AbortSignal.timeout(options.timeoutMs)]);
        res = await fetch(options.url, { method: 'POST', headers, body, redirect: 'manual', signal: deadline });
      } catch (cause) {
        if (signal.aborted) throw cause;
        throw new GatewayError('MAILGATE_ERR_SINK_WEBHOOK_FAILED', `POST ${shown} failed: ${(cause as Error).message}`, { cause });
      }
      await res.arrayBuffer().catch(() => undefined);
      const verdict = webhookVerdict(res.status);
      if (verdict === 'sent') return 'sent';
      if (verdict === 'skip') {
        options.onSkip?.(res.status, batch);
        return 'skipped';
      }
      const retryAfterMs = parseRetryAfter(res.headers.get('retry-after'), Date.now());
      const redirect = res.status >= 300 && res.status <= 399 ? ' (a redirect, not followed: set the sink URL to the final address)' : '';
      throw new GatewayError('MAILGATE_ERR_SINK_WEBHOOK_FAILED', `POST ${shown} answered ${res.status}${redirect}`, {
        status: res.status,
        ...(retryAfterMs === undefined ? {} : { details: { retryAfterMs } }),
      });
    },
    async close() {},
  };
}
