/**
 * The runtime's API endpoint for a configured `api.url`: built without a request, whatever the
 * URL holds (the HTTP client's warm-up at start never depends on the configured address).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { apiEndpoint } from '../../src/runtime/api.js';

function configWith(url: string) {
  return loadConfig({
    overrides: { api: { url, token: 't0ken' }, routes: [{ name: 'support', source: 'acme/support' }] } as never,
  });
}

describe('API endpoint of a configured api.url', () => {
  it('starts for a URL with credentials in it (a fetch Request refuses to be built from one)', async () => {
    const url = 'https://user:secret@api.example.invalid/reinfer_';
    expect(() => new Request(url)).toThrow();
    const endpoint = await apiEndpoint(configWith(url), createLogger(false), false);
    expect(typeof endpoint.client.syncRawEmails).toBe('function');
    expect(endpoint.emulatorUrl).toBeUndefined();
  });
});
