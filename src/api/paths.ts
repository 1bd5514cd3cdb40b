/**
 * Endpoint paths (notes §1), with the service's own name patterns checked before a request
 * is built, so that a typo in a route is a configuration error and not a 404 at 3 a.m.
 */
import { GatewayError } from '../errors.js';

/** notes §1: project (owner) names. */
const PROJECT_RE = /^[A-Za-z0-9_.-]{1,1024}$/;
/** notes §1: source and dataset names. */
const NAME_RE = /^[A-Za-z0-9_-]{1,256}$/;

export type ModelVersion = number | 'live' | 'staging';
export type Endpoint = 'get-source' | 'create-source' | 'create-dataset' | 'sync-raw-emails' | 'predict-raw-emails';

/** Splits `project/name`, checking both parts; `what` names the kind in the error. */
export function splitResourceName(full: string, what: 'source' | 'dataset'): { project: string; name: string } {
  const slash = full.indexOf('/');
  const project = slash < 0 ? '' : full.slice(0, slash);
  const name = slash < 0 ? '' : full.slice(slash + 1);
  if (!PROJECT_RE.test(project) || !NAME_RE.test(name)) {
    throw new GatewayError(
      'MAILGATE_ERR_CONFIG_INVALID',
      `${what} "${full}" must be "<project>/<name>" (project: letters, digits, "-", "_", "."; name: letters, digits, "-", "_", at most 256)`,
    );
  }
  return { project, name };
}

export function sourcePath(source: string): string {
  const { project, name } = splitResourceName(source, 'source');
  return `/api/v1/sources/${encodeURIComponent(project)}/${encodeURIComponent(name)}`;
}

export function checkModelVersion(version: ModelVersion): string {
  if (version === 'live' || version === 'staging') return version;
  if (Number.isInteger(version) && version >= 0) return String(version);
  throw new GatewayError(
    'MAILGATE_ERR_CONFIG_INVALID',
    `model version must be a non-negative integer, "live" or "staging" (got ${JSON.stringify(version)})`,
  );
}

export function predictPath(dataset: string, version: ModelVersion): string {
  const { project, name } = splitResourceName(dataset, 'dataset');
  return `/api/v1/datasets/${encodeURIComponent(project)}/${encodeURIComponent(name)}/labellers/${checkModelVersion(version)}/predict-raw-emails`;
}

export function datasetPath(dataset: string): string {
  const { project, name } = splitResourceName(dataset, 'dataset');
  return `/api/v1/datasets/${encodeURIComponent(project)}/${encodeURIComponent(name)}`;
}
