/**
 * Only the store URL, with the same precedence as loadConfig (default < file < MAILGATE_STORE <
 * flag), reading nothing else: the commands that only read the store (`status`, `dlq`,
 * `predictions`, `mailboxes`, `compact`, `backup`) need neither the API token nor the adapters'
 * secrets, nor the schema of settings they do not read: a URL that is text (or none) is taken as
 * the schema's `store` takes it, and only another value loads the schema, to explain it.
 */
import { GatewayError } from '../errors.js';
import { DEFAULT_STORE_URL } from './defaults.js';
import type { LoadOptions } from './merge.js';
import { interpolate, readConfigSource } from './source.js';

export async function loadStoreUrl(options: LoadOptions = {}): Promise<string> {
  const env = options.env ?? {};
  const flag = options.overrides?.['store'];
  if (typeof flag === 'string') return flag;
  const fromEnv = env['MAILGATE_STORE'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const source = options.file === undefined ? undefined : readConfigSource(options.file);
  const written = source?.settings['store'];
  const store = written === undefined ? undefined : interpolate(written, env, ['store']);
  if (store === undefined) return DEFAULT_STORE_URL;
  if (typeof store === 'string') return store;
  const [{ StoreSchema }, { explainIssues }] = await Promise.all([import('./sections.js'), import('./explain.js')]);
  const result = StoreSchema.safeParse(store);
  if (result.success) return result.data;
  const locate = source?.locate;
  const issues = explainIssues(result.error, { schema: StoreSchema, input: store, at: ['store'], ...(locate && { locate }) });
  throw new GatewayError('MAILGATE_ERR_CONFIG_INVALID', `${options.file ?? 'configuration'} is invalid:\n${issues}`);
}
