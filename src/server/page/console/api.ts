/// <reference lib="dom" />
/**
 * The console's calls to the admin API. The admin key is kept in sessionStorage (this tab only,
 * gone when it closes; never a cookie, so no other site can make the browser send it) and sent
 * as `Authorization: Bearer`. A 401 forgets the key and asks for it again.
 */

export interface ApiError {
  code: string;
  message: string;
}
export type Result<T> = { ok: true; data: T } | { ok: false; status: number; error: ApiError };

const KEY = 'mailgate.console.key';
let onUnauthorized: () => void = () => undefined;

export function adminEnabled(): boolean {
  return document.documentElement.getAttribute('data-admin') === 'enabled';
}

export function storedKey(): string {
  try {
    return sessionStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

export function setKey(key: string): void {
  try {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage refused (private mode): the key lives as long as the page.
  }
  memoryKey = key;
  // The drop zone (preview/app.js) reads its own key field: keep it in step.
  const field = document.getElementById('key');
  if (field instanceof HTMLInputElement) field.value = key;
}
let memoryKey = storedKey();

export function currentKey(): string {
  return memoryKey;
}

export function whenUnauthorized(f: () => void): void {
  onUnauthorized = f;
}

export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return { Accept: 'application/json', Authorization: 'Bearer ' + memoryKey, ...extra };
}

/** `/api/<path>?<query>`; undefined and empty query values are left out. */
export function url(path: string, query: Record<string, string | number | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return '/api/' + path + (s ? '?' + s : '');
}

async function send<T>(method: string, target: string, body?: unknown): Promise<Result<T>> {
  let res: Response;
  try {
    const headers = authHeaders(body === undefined ? {} : { 'Content-Type': 'application/json' });
    const init: RequestInit = { method, headers, credentials: 'omit', cache: 'no-store' };
    if (body !== undefined) init.body = JSON.stringify(body);
    res = await fetch(target, init);
  } catch (err) {
    return { ok: false, status: 0, error: { code: 'NETWORK', message: String((err instanceof Error && err.message) || err) } };
  }
  const t = await res.text();
  let data: unknown;
  try {
    data = JSON.parse(t);
  } catch {
    data = { error: { code: 'HTTP_' + res.status, message: t.slice(0, 500) } };
  }
  if (res.status === 401) onUnauthorized();
  if (res.ok) return { ok: true, data: data as T };
  const error = (data as { error?: ApiError }).error ?? { code: 'HTTP_' + res.status, message: res.statusText };
  return { ok: false, status: res.status, error };
}

export const get = <T>(target: string): Promise<Result<T>> => send<T>('GET', target);
export const post = <T>(target: string, body?: unknown): Promise<Result<T>> => send<T>('POST', target, body);
export const del = <T>(target: string): Promise<Result<T>> => send<T>('DELETE', target);

/** Fetches with the key and hands the bytes to the browser as a download (a plain link could not send the key). */
export async function download(target: string, filename: string): Promise<ApiError | undefined> {
  let res: Response;
  try {
    res = await fetch(target, { headers: authHeaders({ Accept: '*/*' }), credentials: 'omit', cache: 'no-store' });
  } catch (err) {
    return { code: 'NETWORK', message: String(err) };
  }
  if (!res.ok) {
    if (res.status === 401) onUnauthorized();
    const body = (await res.json().catch(() => ({}))) as { error?: ApiError };
    return body.error ?? { code: 'HTTP_' + res.status, message: res.statusText };
  }
  const href = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = href;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return undefined;
}
