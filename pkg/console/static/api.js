// The REST API, as bcsctl uses it. The session cookie authenticates each
// request; the console's header lets writes through (a page of another
// site cannot send it).

const CONSOLE_HEADER = {'X-BCS-Console': '1'};

// APIError is an answer other than 2xx, in the API's error shape.
export class APIError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    const details = (error.details || []).join('; ');
    super((error.message || 'HTTP ' + status) + (details ? ': ' + details : ''));
    this.status = status;
    this.code = error.code;
  }
}

// request sends a request and returns its answer, or throws the API's
// error of an answer other than 2xx.
async function request(method, path, {body, signal} = {}) {
  const init = {method, headers: {...CONSOLE_HEADER}, credentials: 'same-origin', signal};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (resp.status === 401) {
    // The session ended (a logout elsewhere, a new token file).
    window.location.assign('/ui/login');
  }
  if (!resp.ok) throw new APIError(resp.status, await resp.json().catch(() => null));
  return resp;
}

const json = (resp) => resp.json().catch(() => null);

export const get = async (path) => json(await request('GET', path));
export const post = async (path, body) => json(await request('POST', path, {body}));
// text reads a route that answers text/plain (a task's logs).
export const text = async (path, params = {}) => (await request('GET', withQuery(path, params))).text();
// open starts reading a route that answers as it goes (the event
// stream); signal ends it.
export const openStream = (path, signal) => request('GET', path, {signal});

// readOnly: the caller may change nothing (the shell says its role); an
// operator reads only its own namespaces, and so writes what it sees.
export function readOnly() {
  return document.body.dataset.role === 'read-only';
}

function withQuery(path, params) {
  const query = new URLSearchParams(Object.entries(params).filter(([, v]) => v !== undefined && v !== null && v !== ''));
  const text = query.toString();
  return text ? path + (path.includes('?') ? '&' : '?') + text : path;
}

// page reads one page of a list: its items under key, and the next
// page's cursor (the ?after= the API answered as next), if any.
export async function page(path, key, params = {}) {
  const data = await get(withQuery(path, params));
  return {items: data[key] || [], next: data.next || null};
}

// LIST_PAGE is how many items a list is read at a time, as bcsctl does.
const LIST_PAGE = 500;

// all reads every page of a list.
export async function all(path, key, params = {}) {
  const items = [];
  let after = null;
  do {
    const p = await page(path, key, {limit: LIST_PAGE, ...params, after});
    items.push(...p.items);
    after = p.next;
  } while (after);
  return items;
}

// The workload kinds, by the path the API serves them at.
export const KINDS = {
  apps: {list: 'apps', event: 'app', title: 'application'},
  deployments: {list: 'deployments', event: 'deployment', title: 'deployment'},
  daemonsets: {list: 'daemonsets', event: 'daemonset', title: 'daemonset'},
};

// kindPath is the API path of a workload of an event type or kind.
export function kindPath(kind) {
  switch (kind) {
    case 'deployment': return 'deployments';
    case 'daemonset': return 'daemonsets';
    default: return 'apps';
  }
}

export function workloadPath(kind, ns, name) {
  return `/v1/${kind}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
}
