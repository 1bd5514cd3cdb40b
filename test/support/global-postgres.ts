/**
 * vitest globalSetup: one PostgreSQL server for the whole test run. Test files create their
 * own databases on it with createTestDatabase() (test/support/postgres.ts).
 * Set MAILGATE_TEST_POSTGRES_URL to an admin URL to use an existing server instead.
 */
import type { TestProject } from 'vitest/node';
import { startPostgres } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.MAILGATE_TEST_POSTGRES_URL;
  if (given !== undefined && given !== '') {
    project.provide('postgresUrl', given);
    return async () => undefined;
  }
  const server = await startPostgres();
  // Workers inherit the environment; provide() serves tests that prefer inject().
  process.env.MAILGATE_TEST_POSTGRES_URL = server.url;
  project.provide('postgresUrl', server.url);
  return async () => {
    delete process.env.MAILGATE_TEST_POSTGRES_URL;
    await server.stop();
  };
}
