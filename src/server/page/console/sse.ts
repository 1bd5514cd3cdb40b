/**
 * The text/event-stream format (HTML Living Standard, "Server-sent events"): lines of
 * `field: value`; `event` names the event, `data` lines join with a line feed, a blank line
 * dispatches it, lines starting with `:` are comments (keep-alives). No DOM: unit-tested in Node.
 */

/** Splits a stream, fed in chunks of any size, into events: `event:` names it, `data:` lines join with \n, a blank line ends it. */
export function sseParser(onEvent: (name: string, data: string) => void): (chunk: string) => void {
  let buffer = '';
  let name = '';
  let data: string[] = [];
  return (chunk) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A CR at the end of a chunk may be the first half of a CRLF: wait for the next chunk.
      if (buffer[nl] === '\r' && nl === buffer.length - 1) break;
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (data.length) onEvent(name || 'message', data.join('\n'));
        name = '';
        data = [];
      } else if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  };
}
