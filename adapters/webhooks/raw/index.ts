/** A raw message/rfc822 POST: a placeholder until the raw module lands (every request is refused as unsupported). */
import type { RawEntry } from '../config.js';
import type { ProviderModule } from '../provider.js';
import { refuse } from '../util.js';

export const raw: ProviderModule<RawEntry> = {
  name: 'raw',
  async verify() {
    refuse('unsupported', 'the raw provider is not implemented yet');
  },
  async normalize() {
    return [];
  },
  refusalStatus: (kind) => (kind === 'too_large' ? 413 : kind === 'unavailable' || kind === 'malformed' ? 503 : 400),
  simulate: () => {
    throw new Error('unsupported: the raw provider is not implemented yet');
  },
};
