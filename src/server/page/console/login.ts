/// <reference lib="dom" />
/** Sign-in: checks a key against GET /api/status before keeping it (see api.ts for where it is kept). */
import { adminEnabled, get, setKey, url } from './api.js';
import { byId } from './dom.js';

export function setupLogin(onSignedIn: () => void): void {
  const input = byId<HTMLInputElement>('login-key');
  const error = byId('login-error');
  const go = async (): Promise<void> => {
    const key = input.value.trim();
    if (!key) {
      error.hidden = false;
      error.textContent = 'Enter a key.';
      return input.focus();
    }
    setKey(key);
    const res = await get<unknown>(url('status'));
    if (!res.ok) {
      setKey('');
      error.hidden = false;
      error.textContent = `${res.error.code}: ${res.error.message}`;
      return input.focus();
    }
    error.hidden = true;
    input.value = '';
    onSignedIn();
  };
  byId('login-go').addEventListener('click', () => void go());
  input.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') void go();
  });
}

export function showLogin(): void {
  byId('login').hidden = false;
  const error = byId('login-error');
  if (!adminEnabled()) {
    error.hidden = false;
    error.textContent = 'The admin API is disabled on this server: set server.api_keys in mailgate.yaml. The drop zone may still work.';
  }
  byId('login-key').focus();
}
