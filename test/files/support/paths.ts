import { fileURLToPath } from 'node:url';

export const SAMPLES = fileURLToPath(new URL('../../../samples/files/', import.meta.url));
export const sample = (rel: string): string => `${SAMPLES}${rel}`;
