/** The logger of a command: its format chosen by flag, configuration or the stream (pretty on a terminal), colours where allowed. */
import type { LevelWithSilent } from 'pino';
import { resolveLogFormat, useColors, type LogFormatChoice } from '../log-pretty.js';
import { createLogger, type Logger, type LoggerOptions } from '../logger.js';

export interface CommandLoggerOptions {
  level: LevelWithSilent;
  /** `--log-format`, else the configuration's `log_format`. */
  format: LogFormatChoice | undefined;
  /** The stream the lines end up on: it decides `auto` and colours. */
  stream: NodeJS.WritableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Where lines are written, when not straight to `stream` (a Printer that keeps them out of the progress bar). */
  destination?: { write(text: string): void };
  /** Serializers of log call fields (LoggerOptions.fields). */
  fields?: LoggerOptions['fields'];
}

export function commandLogger(o: CommandLoggerOptions): Logger {
  const format = resolveLogFormat(o.format, o.stream);
  return createLogger({
    level: o.level,
    format,
    colors: format === 'pretty' && useColors(o.stream, o.env),
    destination: (o.destination ?? o.stream) as NodeJS.WritableStream,
    ...(o.fields === undefined ? {} : { fields: o.fields }),
  });
}
