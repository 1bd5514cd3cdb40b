/**
 * What both stores' schema migrations share: a migration's shape, the version rules (a schema
 * newer than this mailgate knows is refused; a failed migration names itself) and the SQL that
 * is the same in both dialects.
 */
import { GatewayError } from '../errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The newest version of a list (0 when empty). */
export const latestVersion = (migrations: readonly Migration[]): number => Math.max(0, ...migrations.map((m) => m.version));

/** Refuses a schema written by a newer mailgate: an older one must not write to it. */
export function checkNotNewer(found: number, latest: number): void {
  if (found > latest) {
    throw new GatewayError(
      'MAILGATE_ERR_STORE_MIGRATION',
      `the store schema is version ${found}, newer than this mailgate knows (${latest}): upgrade mailgate`,
    );
  }
}

/** A step of bringing the schema up to date that failed: `step` names it (`migration 3 (…)`). */
function schemaStepFailed(step: string, err: unknown): GatewayError {
  const message = err instanceof Error ? err.message : String(err);
  return new GatewayError('MAILGATE_ERR_STORE_MIGRATION', `${step} failed: ${message}`, { cause: err });
}

export function migrationFailed(m: Migration, err: unknown): GatewayError {
  return schemaStepFailed(`migration ${m.version} (${m.name})`, err);
}

/**
 * A backend's schema in one text (each store's fresh-schema.ts): what its own migrations (`own`)
 * leave, at `version`. A new store (at version 0) migrated by that list gets it in one step,
 * recorded as every migration applied; any other list, an older store, or a text behind the
 * migrations (one added, the text not yet) runs the migrations instead.
 */
export interface SchemaText {
  own: readonly Migration[];
  version: number;
}

/** Whether a store at version `found`, brought up to date by `migrations`, gets the schema text instead. */
export function takesSchemaText(text: SchemaText, found: number, migrations: readonly Migration[]): boolean {
  return found === 0 && migrations === text.own && latestVersion(migrations) === text.version;
}

/** The failure of creating a new store's schema from its text. */
export function schemaTextFailed(text: SchemaText, err: unknown): GatewayError {
  return schemaStepFailed(`creating the schema (version ${text.version})`, err);
}

/** Migration 8's indexes of the console's search rows and states, in both dialects. */
export const CONSOLE_INDEXES_SQL = `
      CREATE INDEX outbox_search_adapter ON outbox_search (adapter, id);
      CREATE INDEX outbox_search_account ON outbox_search (adapter, account, id) WHERE account IS NOT NULL;
      CREATE INDEX outbox_search_sender ON outbox_search (s_sender) WHERE s_sender IS NOT NULL;
      CREATE INDEX outbox_search_name ON outbox_search (s_name) WHERE s_name IS NOT NULL;
      CREATE INDEX outbox_search_subject ON outbox_search (s_subject) WHERE s_subject IS NOT NULL;
      CREATE INDEX outbox_search_message_id ON outbox_search (s_message_id) WHERE s_message_id IS NOT NULL;
      CREATE INDEX outbox_search_comment_id ON outbox_search (s_comment_id);
      CREATE INDEX outbox_console_route_id ON outbox (route, id);
      CREATE INDEX outbox_search_route_adapter ON outbox_search (route, adapter);
      CREATE INDEX outbox_unchanged ON outbox (id) WHERE status = 'delivered' AND outcome = 'unchanged';`;

/** Migration 8's attempts table, its columns' types given (`BIGINT`/`INTEGER` ids, `TIMESTAMPTZ`/`INTEGER` times). */
export function attemptsTableSql(id: string, time: string): string {
  return `
      CREATE TABLE outbox_attempts (
        item_id ${id} NOT NULL REFERENCES outbox (id) ON DELETE CASCADE,
        route TEXT NOT NULL,
        at ${time} NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('delivered', 'unchanged', 'retry', 'dead')),
        code TEXT,
        message TEXT,
        delay_ms INTEGER
      );
      CREATE INDEX outbox_attempts_item ON outbox_attempts (item_id, at);
      CREATE INDEX outbox_attempts_at ON outbox_attempts (at);`;
}
