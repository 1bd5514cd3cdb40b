/**
 * Datasets: create (PUT), update (POST), get one / a project's / all, delete, model tags.
 * Every dataset has model versions 1..modelVersions; `live` and `staging` point into them.
 */
import { z } from 'zod';
import type { AppContext, RegisterApi } from '../app.js';
import { ApiError, badRequest, notFound, PROJECT_RE, resourceId } from '../http.js';
import type { DatasetRecord } from '../state.js';
import { findDataset, isValidName, requireDataset } from './lookup.js';

const DatasetFields = z
  .object({
    title: z.string().optional(),
    description: z.string().optional(),
    source_ids: z.array(z.string()).optional(),
    model_family: z.enum(['english', 'german']).optional(),
    has_sentiment: z.boolean().optional(),
  })
  .strict();
const CreateBody = z.object({ dataset: DatasetFields.default({}) }).strict();
const UpdateBody = z.object({ dataset: DatasetFields.omit({ model_family: true, has_sentiment: true }).default({}) }).strict();

type Params = { project: string; dataset: string };

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw badRequest(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

function checkSources(ctx: AppContext, ids: string[] | undefined): void {
  for (const id of ids ?? []) if (!ctx.state.sources.has(id)) throw badRequest(`source_ids: unknown source id '${id}'`);
}

export function registerDatasetRoutes(register: RegisterApi, ctx: AppContext): void {
  const { state, options } = ctx;

  register('PUT', '/api/v1/datasets/:project/:dataset', 'datasets', (req) => {
    const { project, dataset: name } = req.params as Params;
    if (!isValidName(project, name)) throw badRequest(`invalid dataset name '${project}/${name}'`);
    const fields = parse(CreateBody, req.body).dataset;
    if (findDataset(ctx, project, name)) throw new ApiError(409, `Dataset '${project}/${name}' already exists.`);
    checkSources(ctx, fields.source_ids);
    const now = options.now().toISOString();
    const dataset: DatasetRecord = {
      id: resourceId('dataset', project, name),
      owner: project,
      name,
      title: fields.title ?? '',
      description: fields.description ?? '',
      source_ids: fields.source_ids ?? [],
      model_family: fields.model_family ?? 'english',
      has_sentiment: fields.has_sentiment ?? true,
      created_at: now,
      updated_at: now,
    };
    state.commit({ op: 'dataset', dataset });
    return { dataset };
  });

  register('POST', '/api/v1/datasets/:project/:dataset', 'datasets', (req) => {
    const { project, dataset: name } = req.params as Params;
    const existing = requireDataset(ctx, project, name);
    const fields = parse(UpdateBody, req.body).dataset;
    checkSources(ctx, fields.source_ids);
    const dataset: DatasetRecord = {
      ...existing,
      ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      updated_at: options.now().toISOString(),
    };
    state.commit({ op: 'dataset', dataset });
    return { dataset };
  });

  register('GET', '/api/v1/datasets/:project/:dataset', 'datasets', (req) => {
    const { project, dataset: name } = req.params as Params;
    return { dataset: requireDataset(ctx, project, name) };
  });

  register('DELETE', '/api/v1/datasets/:project/:dataset', 'datasets', (req) => {
    const { project, dataset: name } = req.params as Params;
    state.commit({ op: 'dataset_delete', id: requireDataset(ctx, project, name).id });
    return {};
  });

  register('GET', '/api/v1/datasets', 'datasets', () => ({ datasets: [...state.datasets.values()] }));

  register('GET', '/api/v1/datasets/:project', 'datasets', (req) => {
    const { project } = req.params as { project: string };
    if (!PROJECT_RE.test(project)) throw notFound();
    return { datasets: [...state.datasets.values()].filter((d) => d.owner === project) };
  });

  register('GET', '/api/v1/datasets/:project/:dataset/model-tags', 'datasets', (req) => {
    const { project, dataset: name } = req.params as Params;
    requireDataset(ctx, project, name);
    return {
      model_tags: [
        { name: 'live', version: options.liveVersion },
        { name: 'staging', version: options.stagingVersion },
      ],
    };
  });
}
