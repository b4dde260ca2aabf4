// The agents: what each has and what our instances use of it, whether
// new instances may go there (cordon, drain, maintenance, taints), and
// the instances on it (those of namespaces the caller may not read
// counted, not named: the API's "others").

import {h, replace, badge} from '../dom.js';
import {get, page} from '../api.js';
import {keepFresh, VIEW_EVERY_MS} from '../fresh.js';
import {stream, batch} from '../events.js';
import {VirtualTable} from '../virtual.js';
import {meter} from '../charts.js';
import {age, stateKind} from '../format.js';
import {fact} from './workload.js';

function total(a) {
  return (a.master && a.master.total) || {cpus: 0, memMB: 0, diskMB: 0, ports: 0};
}

function condition(a) {
  if (a.drain) return badge(a.drain.state, 'warn');
  if (a.cordoned) return badge('cordoned', 'warn');
  if (a.master && !a.master.active) return badge('inactive', 'bad');
  if (a.maintenance) return badge('maintenance', 'warn');
  return a.schedulable ? badge('schedulable', 'ok') : badge('unschedulable', 'warn');
}

const agentLink = (a) => '/ui/agents/' + encodeURIComponent(a.hostname);

const columns = [
  {title: 'Agent', width: 'minmax(9rem, 1.5fr)', cell: (a) => h('a', {href: agentLink(a)}, a.hostname)},
  {title: 'Schedulable', width: '9rem', cell: condition},
  {title: 'CPUs', width: 'minmax(11rem, 1.5fr)', cell: (a) => meter(a.used.cpus, total(a).cpus, 'cpus')},
  {title: 'Memory', width: 'minmax(13rem, 1.5fr)', cell: (a) => meter(a.used.memMB, total(a).memMB, 'MB')},
  {title: 'Instances', width: '6rem', class: 'num', cell: (a) => String((a.instanceCount || 0) + a.others)},
  {title: 'Taints', width: 'minmax(8rem, 1fr)', cell: (a) => a.taints.join(', ')},
  {title: 'Attributes', width: 'minmax(8rem, 1fr)', cell: (a) => Object.entries(a.attributes || {}).map(([k, v]) => `${k}=${v}`).join(', ')},
  {title: 'Seen', width: '5rem', cell: (a) => a.lastSeen ? age(a.lastSeen) + ' ago' : ''},
];

// The agents' list is read a page at a time, the first rows shown as
// soon as they come, each agent's instances counted, not listed. It
// follows no instance events — a fleet's launch makes hundreds of
// thousands — nor the agents' own, which their offers rewrite every
// minute each (5,000 a minute): the rows in view are read again instead
// (fresh.js). An operator's change of an agent (its settings) shows at
// once.
const LIST_PAGE = 1000;
const SUMMARY = {summary: 'true'};
const agentPath = (host) => '/v1/agents/' + encodeURIComponent(host);

export async function agents(root) {
  let fresh = null;
  const table = new VirtualTable({label: 'agents', columns, rowKey: (a) => a.hostname, rowHeight: 34, empty: 'No agent has offered yet.',
    viewed: (first, last) => fresh && fresh.viewed(first, last)});
  const title = h('h1', {}, 'Agents');
  root.append(h('section', {class: 'fill'}, title, table.el));
  // rows are in the API's order (by ID), at by hostname.
  let rows = [];
  let reading = true; // the first read of the list is under way
  const at = new Map();
  const show = () => {
    at.clear();
    rows.forEach((a, i) => at.set(a.hostname, i));
    const schedulable = rows.filter((a) => a.schedulable).length;
    replace(title, 'Agents ', h('span', {class: 'muted'}, reading ? `${rows.length} read so far…` : `${rows.length}, ${schedulable} schedulable`));
    table.setRows(rows);
  };
  // put replaces the rows of agents read again, and adds those new to
  // the page in their place; it says whether one changed (rows drawn
  // again for nothing would also make a click on one miss).
  const put = (list) => {
    let changed = false;
    for (const a of list) {
      const i = at.get(a.hostname);
      if (i === undefined) {
        rows.splice(position(a.id || ''), 0, a);
        rows.forEach((r, j) => at.set(r.hostname, j));
      } else if (JSON.stringify(rows[i]) === JSON.stringify(a)) {
        continue;
      } else {
        rows[i] = a;
      }
      changed = true;
    }
    return changed;
  };
  // position is where the agent of id goes in rows, ordered by ID.
  const position = (id) => {
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((rows[mid].id || '') < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const load = async () => {
    const first = rows.length === 0;
    const list = [];
    let after = null;
    do {
      const p = await page('/v1/agents', 'agents', {...SUMMARY, limit: LIST_PAGE, after});
      list.push(...p.items);
      after = p.next;
      if (first) {
        rows = list;
        show();
      }
    } while (after);
    rows = list;
    reading = false;
    show();
    if (fresh) fresh.loaded();
  };
  const readView = async (from, to) => {
    const after = from > 0 ? rows[from - 1].id : undefined;
    const p = await page('/v1/agents', 'agents', {...SUMMARY, limit: to - from, after});
    const changed = put(p.items);
    if (changed) show();
    return changed;
  };
  const reread = batch(async (hosts) => {
    const list = await Promise.all([...hosts].map((host) => get(agentPath(host) + '?summary=true').catch(() => null)));
    if (list.includes(null)) return load();
    put(list);
    show();
  }, 500);
  const sub = stream.subscribe(['agentsettings'], (e) => e.type === 'reset' ? load() : reread(e.name));
  await sub.opened;
  await load();
  fresh = keepFresh({table, readView, readAll: load});
  fresh.loaded();
  return () => {
    sub.close();
    reread.cancel();
    fresh.stop();
    table.destroy();
  };
}

export async function agent(root, name) {
  const el = h('div', {class: 'agent'});
  root.append(el);
  const instances = new VirtualTable({label: 'instances on the agent', rowKey: (i) => i.taskGroupID, columns: [
    {title: 'Instance', width: 'minmax(12rem, 2fr)', cell: (i) => {
      const [ns, app] = i.app.split('/');
      return h('a', {href: `/ui/workload/${encodeURIComponent(ns)}/${encodeURIComponent(app)}/instances/${i.index}`}, `${i.app}/${i.index}`);
    }},
    {title: 'Task group', width: 'minmax(12rem, 2fr)', cell: (i) => i.taskGroupID},
    {title: 'Phase', width: '8rem', cell: (i) => badge(i.phase, stateKind(i.phase))},
    {title: 'Move', width: 'minmax(8rem, 1fr)', cell: (i) => i.successor ? 'successor' : (i.move || '')},
  ]});
  const show = (a) => {
    const t = total(a);
    replace(el,
      h('div', {class: 'crumbs'}, h('a', {href: '/ui/agents'}, 'agents')),
      h('h1', {}, a.hostname, ' ', condition(a)),
      a.reason && h('p', {class: 'message'}, a.reason),
      h('dl', {class: 'facts'}, fact('id', a.id || '—'), fact('endpoint', a.endpoint || '—'),
        fact('last seen', a.lastSeen ? age(a.lastSeen) + ' ago' : '—'), fact('taints', a.taints.join(', ') || 'none'),
        fact('disk', t.diskMB + ' MB'), fact('ports', t.ports),
        Object.entries(a.attributes || {}).map(([k, v]) => fact(k, v))),
      h('div', {class: 'meters'}, h('div', {}, 'CPUs ', meter(a.used.cpus, t.cpus, 'cpus')), h('div', {}, 'Memory ', meter(a.used.memMB, t.memMB, 'MB'))),
      a.drain && h('p', {class: 'message'}, `Drain since ${age(a.drain.since)} ago: ${a.drain.remaining} to move`,
        a.drain.kept.length ? `, kept: ${a.drain.kept.join(', ')}` : ''),
      h('h2', {}, `Instances (${a.instances.length + a.others})`),
      a.others > 0 && h('p', {class: 'muted'}, `${a.others} more of namespaces you may not read`), instances.el);
    instances.setRows(a.instances);
  };
  // As the list, it follows its settings' events and reads the agent
  // again every few seconds while shown, not on every instance event of
  // the fleet.
  let hostname = name;
  const load = async () => {
    const a = await get(agentPath(name));
    hostname = a.hostname;
    show(a);
  };
  const reread = batch(load, 500);
  const sub = stream.subscribe(['agentsettings'], (e) => (e.type === 'reset' || e.name === hostname) && reread('all'));
  await sub.opened;
  await load();
  const poll = setInterval(() => document.hidden || reread('all'), VIEW_EVERY_MS);
  return () => {
    sub.close();
    reread.cancel();
    clearInterval(poll);
    instances.destroy();
  };
}
