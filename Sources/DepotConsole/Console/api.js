// The admin API as the page uses it: the same requests a script sends, authenticated by the session cookie
// (sent by the browser, HttpOnly) and, for state-changing requests, the session's CSRF token.

let csrfToken = null;

/** An admin API refusal: the HTTP status and the body's `error.code` and `error.message`. */
export class APIError extends Error {
  constructor(status, code, message, response) {
    super(message || `HTTP ${status}`);
    this.status = status;
    this.code = code;
    this.response = response;
  }
}

export function setCSRFToken(token) {
  csrfToken = token;
}

/** Sends `method path` with an optional JSON body; resolves with the decoded JSON answer (null for 204). */
export async function call(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  const init = { method, headers, credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  return decode(response);
}

async function decode(response) {
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!response.ok) throw new APIError(response.status, data?.error?.code, data?.error?.message, response);
  return data;
}

/** The headers a state-changing request made outside `call` (an upload) must carry. */
export function csrfHeaders() {
  return csrfToken ? { 'X-CSRF-Token': csrfToken } : {};
}

/** Percent-encodes each segment of a relative path. */
export function encodePath(path) {
  return path.split('/').map(encodeURIComponent).join('/');
}

export const paths = {
  session: 'session',
  products: 'v1/products',
  product: (id) => `v1/products/${encodeURIComponent(id)}`,
  retire: (id) => `v1/products/${encodeURIComponent(id)}/retire`,
  unretire: (id) => `v1/products/${encodeURIComponent(id)}/unretire`,
  packs: 'v1/packs',
  file: (pack, version, path) => `v1/packs/${encodeURIComponent(pack)}/${version}/files/${encodePath(path)}`,
  upload: (pack, version) => `v1/packs/${encodeURIComponent(pack)}/${version}/upload`,
  publish: (pack, version) => `v1/packs/${encodeURIComponent(pack)}/${version}/publish`,
  promote: (pack, version) => `v1/packs/${encodeURIComponent(pack)}/${version}/promote`,
  rollback: (pack) => `v1/packs/${encodeURIComponent(pack)}/rollback`,
  prune: 'v1/prune',
  check: 'v1/check',
  traffic: 'v1/traffic',
  purchases: (query) => `v1/purchases?${new URLSearchParams(query)}`,
  revoke: (id) => `v1/purchases/${encodeURIComponent(id)}/revoke`,
  restore: (id) => `v1/purchases/${encodeURIComponent(id)}/restore`,
};
