// The agents: what each has and what our instances use of it, whether
// new instances may go there (cordon, drain, maintenance, taints), and
// the instances on it (those of namespaces the caller may not read
// counted, not named: the API's "others").

import {h, replace, badge} from '../dom.js';
import {get, all} from '../api.js';
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
  {title: 'Instances', width: '6rem', class: 'num', cell: (a) => String(a.instances.length + a.others)},
  {title: 'Taints', width: 'minmax(8rem, 1fr)', cell: (a) => a.taints.join(', ')},
  {title: 'Attributes', width: 'minmax(8rem, 1fr)', cell: (a) => Object.entries(a.attributes || {}).map(([k, v]) => `${k}=${v}`).join(', ')},
  {title: 'Seen', width: '5rem', cell: (a) => a.lastSeen ? age(a.lastSeen) + ' ago' : ''},
];

export async function agents(root) {
  const table = new VirtualTable({label: 'agents', columns, rowKey: (a) => a.hostname, rowHeight: 34, empty: 'No agent has offered yet.'});
  const title = h('h1', {}, 'Agents');
  root.append(h('section', {class: 'fill'}, title, table.el));
  const load = async () => {
    const list = await all('/v1/agents', 'agents');
    const schedulable = list.filter((a) => a.schedulable).length;
    replace(title, 'Agents ', h('span', {class: 'muted'}, `${list.length}, ${schedulable} schedulable`));
    table.setRows(list);
  };
  const reread = batch(load, 3000);
  const sub = stream.subscribe(['agent', 'agentsettings', 'instance'], () => reread('all'));
  await sub.opened;
  await load();
  return () => {
    sub.close();
    reread.cancel();
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
  const load = async () => show(await get('/v1/agents/' + encodeURIComponent(name)));
  const reread = batch(load, 2000);
  const sub = stream.subscribe(['agent', 'agentsettings', 'instance'], () => reread('all'));
  await sub.opened;
  await load();
  return () => {
    sub.close();
    reread.cancel();
    instances.destroy();
  };
}
