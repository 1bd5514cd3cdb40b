/**
 * Folder names to folder ids: a well-known name (`inbox`, `sentitems`, `archive`, …) as Graph
 * resolves it in every mailbox language, or a path below one (`inbox/Support/Tier 2`) whose
 * further segments are matched against child folders' names exactly. Display names of system
 * folders are localised, so they are never used to find one.
 */
import { GatewayError } from '../../src/errors.js';
import type { MailboxClient } from './client.js';

interface FolderJson {
  id: string;
  displayName?: string;
}

async function json<T>(client: MailboxClient, path: string, signal: AbortSignal): Promise<T> {
  const res = await client.request(path, { signal });
  return JSON.parse(res.body.toString('utf8')) as T;
}

/** The id of `path`; a missing segment is MAILGATE_ERR_GRAPH_NOT_FOUND naming it. */
export async function resolveFolder(client: MailboxClient, path: string, signal: AbortSignal): Promise<string> {
  const [root, ...rest] = path.split('/');
  let folder = await json<FolderJson>(client, `/mailFolders/${encodeURIComponent(root!.toLowerCase())}?$select=id,displayName`, signal);
  let walked = root!;
  for (const name of rest) {
    let link: string | undefined = `/mailFolders/${encodeURIComponent(folder.id)}/childFolders?$select=id,displayName&$top=250`;
    let found: FolderJson | undefined;
    while (link !== undefined && found === undefined) {
      const page: { value?: FolderJson[]; '@odata.nextLink'?: string } = await json(client, link, signal);
      found = (page.value ?? []).find((c) => c.displayName === name);
      link = page['@odata.nextLink'];
    }
    if (found === undefined)
      throw new GatewayError('MAILGATE_ERR_GRAPH_NOT_FOUND', `folder "${name}" not found below ${walked}`, { status: 404 });
    folder = found;
    walked = `${walked}/${name}`;
  }
  return folder.id;
}
