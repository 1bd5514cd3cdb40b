/**
 * POST /api/v1/datasets/<project>/<dataset>/labellers/<version>/predict-raw-emails
 * Nothing is stored; 1 AI unit is billed per document.
 */
import type { Comment } from '../../model/index.js';
import type { AppContext, RegisterApi } from '../app.js';
import { notFound } from '../http.js';
import { buildComments } from '../ingest.js';
import { entitiesFor, labelPropertiesFor, labelsFor } from '../predictions.js';
import { featuresOf } from '../toy-model.js';
import { parsePredictRequest } from '../validate.js';
import { requireDataset } from './lookup.js';

/** `live`, `staging` or an integer 1..modelVersions; anything else is unknown (404). */
export function resolveVersion(ctx: AppContext, segment: string): number {
  if (segment === 'live') return ctx.options.liveVersion;
  if (segment === 'staging') return ctx.options.stagingVersion;
  if (!/^[1-9]\d{0,8}$/.test(segment)) throw notFound();
  const version = Number(segment);
  if (version > ctx.options.modelVersions) throw notFound();
  return version;
}

/** The comment as predict-raw-emails returns it (notes §5.2 ParseEmailNewComment). */
function parsedComment(c: Comment): Record<string, unknown> {
  return {
    id: c.id,
    timestamp: c.timestamp,
    user_properties: c.user_properties,
    messages: c.messages,
    text_format: 'plain',
    attachments: c.attachments ?? [],
    thread_id: c.thread_id ?? null,
  };
}

export function registerPredictRoutes(register: RegisterApi, ctx: AppContext): void {
  register('POST', '/api/v1/datasets/:project/:dataset/labellers/:version/predict-raw-emails', 'predict-raw-emails', (req) => {
    const { project, dataset: name, version: segment } = req.params as { project: string; dataset: string; version: string };
    const dataset = requireDataset(ctx, project, name);
    const version = resolveVersion(ctx, segment);
    const request = parsePredictRequest(req.body, ctx.options);
    const comments = buildComments(request.documents, [], false, ctx.options.now()).map((b) => b.comment);
    const plan = { threshold: request.threshold, labels: request.labels };
    ctx.state.commit({ op: 'bill', units: comments.length });
    const features = comments.map(featuresOf);
    const predictions = features.map((f) => labelsFor(f, version, plan, dataset.has_sentiment));
    return {
      predictions:
        ctx.options.labelNames === 'parts'
          ? predictions
          : predictions.map((labels) => labels.map((l) => ({ ...l, name: l.name.join(' > ') }))),
      entities: comments.map((c) => entitiesFor(c)),
      label_properties: features.map((f) => labelPropertiesFor(f, dataset.has_sentiment)),
      model: { version, time: dataset.created_at },
      ...(request.include_comments ? { comments: comments.map(parsedComment) } : {}),
    };
  });
}
