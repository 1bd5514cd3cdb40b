/**
 * Sources: create (PUT), update (POST), get one / a project's / all, delete by id.
 * Creating a source that exists is a 409 with a message saying so; create only when a GET
 * answered 404.
 */
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext, RegisterApi } from '../app.js';
import { ApiError, badRequest, notFound, PROJECT_RE } from '../http.js';
import type { SourceRecord } from '../state.js';
import { findSource, idSegment, isValidName, newSource, requireSource } from './lookup.js';

const SourceFields = z
  .object({
    title: z.string().optional(),
    description: z.string().optional(),
    language: z.enum(['en', 'de']).optional(),
    should_translate: z.boolean().optional(),
    sensitive_properties: z.array(z.string()).optional(),
    bucket_id: z.string().optional(),
  })
  .strict();
const CreateBody = z.object({ source: SourceFields.default({}) }).strict();
const UpdateBody = z.object({ source: SourceFields.omit({ language: true }).default({}) }).strict();

type Params = { project: string; source: string };

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw badRequest(`${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  return result.data;
}

function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export function registerSourceRoutes(register: RegisterApi, ctx: AppContext): void {
  const { state } = ctx;

  register('PUT', '/api/v1/sources/:project/:source', 'sources', (req: FastifyRequest) => {
    const { project, source: name } = req.params as Params;
    if (!isValidName(project, name)) throw badRequest(`invalid source name '${project}/${name}'`);
    const { source: fields } = parse(CreateBody, req.body);
    if (findSource(ctx, project, name)) throw new ApiError(409, `Source '${project}/${name}' already exists.`);
    const { bucket_id: _bucket, ...rest } = fields;
    const source = newSource(ctx, project, name, defined(rest));
    state.commit({ op: 'source', source });
    return { source };
  });

  register('POST', '/api/v1/sources/:project/:source', 'sources', (req) => {
    const { project, source: name } = req.params as Params;
    const existing = requireSource(ctx, project, name);
    const { bucket_id: _bucket, ...rest } = parse(UpdateBody, req.body).source;
    const source: SourceRecord = { ...existing, ...defined(rest), updated_at: ctx.options.now().toISOString() };
    state.commit({ op: 'source', source });
    return { source };
  });

  register('GET', '/api/v1/sources/:project/:source', 'sources', (req) => {
    const { project, source: name } = req.params as Params;
    return { source: requireSource(ctx, project, name) };
  });

  register('GET', '/api/v1/sources', 'sources', () => ({ sources: [...state.sources.values()] }));

  register('GET', '/api/v1/sources/:project', 'sources', (req) => {
    const { project } = req.params as { project: string };
    const id = idSegment(project);
    if (id !== undefined) {
      const source = state.sources.get(id);
      if (!source) throw notFound();
      return { source };
    }
    if (!PROJECT_RE.test(project)) throw notFound();
    return { sources: [...state.sources.values()].filter((s) => s.owner === project) };
  });

  register('DELETE', '/api/v1/sources/:project', 'sources', (req) => {
    const id = idSegment((req.params as { project: string }).project);
    if (id === undefined || !state.sources.has(id)) throw notFound();
    state.commit({ op: 'source_delete', id });
    return {};
  });
}
