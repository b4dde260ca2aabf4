// The fleet: namespaces, and every application, deployment and daemonset
// with its state, instances running of desired, readiness, health,
// revision and rollout, updated as they change (the counts of those in
// view every few seconds).

import {h, replace, badge} from '../dom.js';
import {all, get, page, KINDS, kindPath, workloadPath} from '../api.js';
import {keepFresh} from '../fresh.js';
import {stream, batch} from '../events.js';
import {VirtualTable} from '../virtual.js';
import {stateKind} from '../format.js';

export function revision(v) {
  const ro = v.status.rollout;
  if (ro && ro.currentRevision && ro.updateRevision && ro.currentRevision !== ro.updateRevision) {
    return `${ro.currentRevision} → ${ro.updateRevision}`;
  }
  return String(v.version);
}

export function workloadLink(w, suffix = '') {
  return `/ui/${w.path}/${encodeURIComponent(w.namespace)}/${encodeURIComponent(w.name)}${suffix}`;
}

const columns = [
  {title: 'Name', width: 'minmax(10rem, 2fr)', cell: (w) => h('a', {href: workloadLink(w), class: 'workload-link'}, w.name)},
  {title: 'Namespace', width: 'minmax(8rem, 1fr)', cell: (w) => w.namespace},
  {title: 'Kind', width: '7rem', cell: (w) => w.kind},
  {title: 'State', width: '8rem', cell: (w) => badge(w.status.state, stateKind(w.status.state))},
  {title: 'Running', width: '7rem', class: 'num', cell: (w) => `${counts(w).running}/${w.instances}`},
  {title: 'Ready', width: '5rem', class: 'num', cell: (w) => String(counts(w).ready)},
  {title: 'Health', width: '8rem', cell: (w) => health(w)},
  {title: 'Pending', width: '5rem', class: 'num', cell: (w) => counts(w).pending ? badge(String(counts(w).pending), 'warn') : '0'},
  {title: 'Revision', width: '6rem', class: 'num', cell: revision},
  {title: 'Rollout', width: 'minmax(8rem, 1fr)', cell: (w) => w.status.rollout ? badge(w.status.rollout.phase, stateKind(w.status.rollout.phase)) : ''},
];

function counts(w) {
  return w.status.counts || {running: 0, ready: 0, unhealthy: 0, pending: 0};
}

function health(w) {
  const c = counts(w);
  if (c.unhealthy) return badge(`${c.unhealthy} unhealthy`, 'bad');
  return c.running ? badge('healthy', 'ok') : '';
}

export async function overview(root) {
  const selected = new URLSearchParams(location.search).get('namespace') || '';
  // Workloads by "namespace/name": a name is one workload of one kind.
  const workloads = new Map();
  const namespaces = h('ul', {class: 'namespaces', id: 'namespaces'});
  const title = h('h1', {}, 'Workloads', selected ? ` in ${selected}` : '');
  let fresh = null;
  const table = new VirtualTable({label: 'workloads', columns, rowKey: (w) => `${w.namespace}/${w.name}`,
    viewed: (first, last) => fresh && fresh.viewed(first, last), empty: 'No workloads yet: bcsctl apply -f examples/process.json'});
  root.append(h('div', {class: 'layout'},
    h('aside', {class: 'side'}, h('h2', {}, 'Namespaces'), namespaces),
    h('section', {class: 'fill'}, title, table.el)));

  let frame = null;
  let rows = [];
  const show = () => {
    frame = null;
    rows = [...workloads.values()].filter((w) => !selected || w.namespace === selected)
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    table.setRows(rows);
    showNamespaces(namespaces, workloads, selected);
  };

  // The workloads' counts are not followed by instance events: a
  // fleet's launch makes hundreds of thousands, every namespace's. The
  // rows in view are read again instead, a bounded page of each kind
  // (fresh.js); a workload's own changes come as events.
  const readView = async (first, last) => {
    const before = rows[first - 1];
    const after = before ? `${before.namespace}/${before.name}` : undefined;
    let changed = false;
    await Promise.all(Object.entries(KINDS).map(async ([path, kind]) => {
      const p = await page(`/v1/${path}`, kind.list, {summary: 'true', namespace: selected, after, limit: last - first});
      for (const w of p.items) {
        const key = `${w.namespace}/${w.name}`;
        const next = {...w, path};
        if (JSON.stringify(workloads.get(key)) === JSON.stringify(next)) continue;
        workloads.set(key, next);
        changed = true;
      }
    }));
    if (changed) show();
    return changed;
  };
  // A workload new to the page is read for its counts, a second's new
  // ones together.
  const readNew = batch(async (keys) => {
    await Promise.all([...keys].map(async (key) => {
      const w = workloads.get(key);
      if (!w) return;
      try {
        workloads.set(key, {...(await get(workloadPath(w.path, w.namespace, w.name) + '?summary=true')), path: w.path});
      } catch (err) {
        if (err.status === 404) workloads.delete(key);
      }
    }));
    show();
  }, 1000);

  const load = async () => {
    const lists = await Promise.all(Object.entries(KINDS).map(async ([path, kind]) =>
      (await all(`/v1/${path}`, kind.list, {summary: 'true'})).map((w) => ({...w, path}))));
    workloads.clear();
    for (const w of lists.flat()) workloads.set(`${w.namespace}/${w.name}`, w);
    show();
    if (fresh) fresh.loaded();
  };

  const sub = stream.subscribe(['app', 'deployment', 'daemonset', 'rollout'], (e) => {
    if (e.type === 'reset') {
      load();
      return;
    }
    const key = `${e.namespace}/${e.name}`;
    const w = workloads.get(key);
    switch (e.type) {
      case 'rollout':
        if (w) w.status.rollout = e.object;
        break;
      default:
        if (e.action === 'delete') workloads.delete(key);
        else {
          const next = {...e.object, path: kindPath(e.type)};
          next.status = {...e.object.status, counts: w && w.status.counts, rollout: w && w.status.rollout};
          workloads.set(key, next);
          if (!w) readNew(key);
        }
    }
    frame = frame || requestAnimationFrame(show);
  });
  await sub.opened;
  await load();
  fresh = keepFresh({table, readView, readAll: load});
  fresh.loaded();
  return () => {
    sub.close();
    readNew.cancel();
    fresh.stop();
    cancelAnimationFrame(frame);
    table.destroy();
  };
}

function showNamespaces(list, workloads, selected) {
  const byNamespace = new Map();
  for (const w of workloads.values()) {
    const n = byNamespace.get(w.namespace) || {workloads: 0, running: 0, desired: 0};
    n.workloads++;
    n.running += counts(w).running;
    n.desired += w.instances;
    byNamespace.set(w.namespace, n);
  }
  const item = (ns, label, n) => h('li', {class: (ns === selected) && 'selected'},
    h('a', {href: ns ? `/ui/?namespace=${encodeURIComponent(ns)}` : '/ui/', 'data-namespace': ns}, label),
    n && h('span', {class: 'muted'}, ` ${n.workloads} · ${n.running}/${n.desired}`));
  replace(list, item('', 'all namespaces'),
    [...byNamespace.keys()].sort().map((ns) => item(ns, ns, byNamespace.get(ns))));
}
