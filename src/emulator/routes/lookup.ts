/**
 * Finding sources and datasets by `<project>/<name>` or `id:<16 hex>`. Any project whose
 * name matches the service's pattern exists implicitly; an unknown resource is a 404.
 */
import type { AppContext } from '../app.js';
import { notFound, PROJECT_RE, RESOURCE_ID_RE, RESOURCE_NAME_RE, resourceId } from '../http.js';
import type { DatasetRecord, SourceRecord } from '../state.js';

export interface NamedParams {
  project: string;
  name: string;
}

export function isValidName(project: string, name: string): boolean {
  return PROJECT_RE.test(project) && RESOURCE_NAME_RE.test(name);
}

/** `id:<16 hex>` as a path segment, or undefined. */
export function idSegment(segment: string): string | undefined {
  if (!segment.startsWith('id:')) return undefined;
  const id = segment.slice(3);
  return RESOURCE_ID_RE.test(id) ? id : undefined;
}

export function findSource(ctx: AppContext, project: string, name: string): SourceRecord | undefined {
  if (!isValidName(project, name)) return undefined;
  return ctx.state.sources.get(resourceId('source', project, name));
}

export function requireSource(ctx: AppContext, project: string, name: string): SourceRecord {
  const source = findSource(ctx, project, name);
  if (!source) throw notFound();
  return source;
}

export function findDataset(ctx: AppContext, project: string, name: string): DatasetRecord | undefined {
  if (!isValidName(project, name)) return undefined;
  return ctx.state.datasets.get(resourceId('dataset', project, name));
}

export function requireDataset(ctx: AppContext, project: string, name: string): DatasetRecord {
  const dataset = findDataset(ctx, project, name);
  if (!dataset) throw notFound();
  return dataset;
}

/** A new source record with the service's defaults (language `en`, no translation). */
export function newSource(ctx: AppContext, project: string, name: string, fields: Partial<SourceRecord>): SourceRecord {
  const now = ctx.options.now().toISOString();
  return {
    id: resourceId('source', project, name),
    owner: project,
    name,
    title: fields.title ?? '',
    description: fields.description ?? '',
    language: fields.language ?? 'en',
    should_translate: fields.should_translate ?? false,
    sensitive_properties: fields.sensitive_properties ?? [],
    created_at: now,
    updated_at: now,
  };
}
