/** Predictions of predict routes, the latest per (route, comment id), and the billing counters. */
import type { PredictedLabel } from '../../model/index.js';

export interface PredictionInput {
  commentId: string;
  key: string;
  predictions: PredictedLabel[];
  model: { version: number; time: string } | null;
}

export interface StoredPrediction extends PredictionInput {
  id: number;
  route: string;
  createdAt: string;
}

export interface PredictionQuery {
  route?: string;
  commentIds?: string[];
  limit: number;
  after?: number;
}

/** Cumulative per-route counters for `mailgate status`; never decrease. */
export interface RouteCounters {
  route: string;
  enqueued: number;
  delivered: number;
  unchanged: number;
  /** Items dead-lettered for any reason: rejected by the API, unparseable, retries exhausted. */
  deadLettered: number;
  aiUnits: number;
}

export interface PredictionStore {
  /** Stores the latest predictions per (route, comment id). */
  savePredictions(route: string, items: PredictionInput[]): Promise<void>;
  listPredictions(query: PredictionQuery): Promise<StoredPrediction[]>;
}

/** Cumulative per-route counters (enqueued, delivered, unchanged, dead, AI units). */
export interface CounterStore {
  addAiUnits(route: string, n: number): Promise<void>;
  counters(route?: string): Promise<RouteCounters[]>;
}
