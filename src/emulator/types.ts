/**
 * Public types of the Text Analytics API emulator (docs/emulator.md).
 */
import type { Logger } from '../logger.js';

/** Names the emulator counts requests under (`GET /_emulator/stats`) and faults can target. */
export type EndpointName = 'sync-raw-emails' | 'predict-raw-emails' | 'sources' | 'comments' | 'threads' | 'datasets' | 'other';

/**
 * One fault-injection rule. Rules are tried in order for every API request (never for the
 * `/_emulator` admin routes); the first rule that matches and fires decides the request.
 */
export interface FaultRule {
  /** Which endpoint the rule targets; `*` (default) matches every API endpoint. */
  endpoint?: EndpointName | '*';
  /** Answer with this HTTP status (400-599) and the error envelope instead of processing. */
  status?: number;
  /** With `status`: the error envelope's `message` instead of the status's own (a modelled quota answer says why). */
  message?: string;
  /** Seconds, sent as `Retry-After` with the faulted answer. */
  retry_after?: number;
  /** Wait this long first. A rule with only a delay then processes the request normally. */
  delay_ms?: number;
  /** Destroy the socket without answering, before the request is applied. */
  drop?: boolean;
  /** Apply the request to state, then destroy the socket: the write happened, the client never saw the answer. */
  drop_after_apply?: boolean;
  /** Apply the request to state, then answer with `status` instead of the real answer (a proxy's 504 after the write). */
  apply?: boolean;
  /**
   * Apply the request to state, send the answer's status line, headers (with the full
   * Content-Length) and the first half of its body, then destroy the socket: the answer is cut mid-body.
   */
  truncate?: boolean;
  /** With `truncate`: hold the connection open this long (ms) after the half body before destroying it (a stalled answer). */
  stall_ms?: number;
  /** The faulted answer is an HTML error page, as a proxy sends, instead of the JSON envelope. */
  html?: boolean;
  /** Apply to the next n matching requests, then never again. */
  times?: number;
  /** Probability 0..1 that a matching request is faulted (instead of `times`). */
  rate?: number;
  /** Seed for `rate`: the same seed gives the same sequence of decisions. */
  seed?: number;
}

export interface EmulatorOptions {
  /** Accepted bearer token(s). */
  token: string | string[];
  /** Persist state in this directory (state.json snapshot + log.jsonl) and reload it on start. */
  dataDir?: string;
  /** Accepted transform tags. Default `['generic.0.CONVKER5']`; `'*'` accepts any tag shaped `<family>.<n>.<CODE>`. */
  transformTags?: string[];
  /** Initial fault plan. */
  faults?: FaultRule[];
  /** `false` (default) disables request logging; `true` logs JSON with pino at info level; a logger logs through it. */
  logger?: boolean | Logger;
  /** Most documents per sync-raw-emails request (default 16384; 4096 emulates the generated client's documented limit). */
  maxSyncDocuments?: number;
  /** Most documents per predict-raw-emails request (default 4096). */
  maxPredictDocuments?: number;
  /** A missing `transform_tag` is a 422 (default true, as the spec requires it); false uses the first allowed tag. */
  requireTransformTag?: boolean;
  /** Accept `?no_charge=true` without billing (default false: answered 403, as for an unprivileged caller). */
  allowNoCharge?: boolean;
  /** sync-raw-emails to an unknown source creates it (default false: 404). */
  autoCreateSources?: boolean;
  /** Model versions every dataset has, 1..n (default 2). */
  modelVersions?: number;
  /** Version `live` resolves to (default 1). */
  liveVersion?: number;
  /** Version `staging` resolves to (default 2). */
  stagingVersion?: number;
  /** Request body limit in bytes (default 512 MiB). */
  bodyLimit?: number;
  /** An empty `documents` list is answered with zero counts (default true: the official CLI may send an empty last batch, notes §9); false: 400. */
  allowEmptyDocuments?: boolean;
  /**
   * A raw email `body` holds exactly one of `plain` / `html` (`'exactly-one'`, default, as the
   * notes' shapes are), or at least one (`'at-least-one'`, the spec's wording; `plain` is used when both are given).
   */
  bodies?: 'exactly-one' | 'at-least-one';
  /**
   * Shape of each element of sync-raw-emails `comments`: the stored comment (`'comment'`,
   * default, notes §2.2) or `{comment, thread_properties}` (`'with-thread-properties'`, the spec's wording).
   */
  commentsShape?: 'comment' | 'with-thread-properties';
  /** Predicted label names as paths (`'parts'`, default: `["Billing","Refund"]`) or strings (`'string'`: `"Billing > Refund"`, notes §3.2). */
  labelNames?: 'parts' | 'string';
  /** Clock, for reproducible timestamps in tests (default `() => new Date()`). */
  now?: () => Date;
}

export interface EmulatorStats {
  /** Per endpoint, per HTTP status (or `dropped`, `truncated`), the number of answered requests. */
  requests: Record<string, Record<string, number>>;
  /** AI units billed since the start (or the last reset). */
  ai_units: number;
  /** Comments stored across all sources. */
  comments: number;
}

export interface Emulator {
  /** Starts listening (default port 0 on 127.0.0.1) and resolves with the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
  stats(): EmulatorStats;
  setFaults(rules: FaultRule[]): void;
  /** Forgets every source, dataset, comment, counter and fault. */
  reset(): void;
}
