// An application's, deployment's or daemonset's page: its state and
// counts, why an instance waits, and its instances as a grid read a page
// at a time, updated live.

import {h, replace, badge} from '../dom.js';
import {get, page, workloadPath, KINDS} from '../api.js';
import {stream, batch} from '../events.js';
import {navigate, notify} from '../router.js';
import {VirtualTable} from '../virtual.js';
import {barChart} from '../charts.js';
import {stateKind, shortState, ports, health, age} from '../format.js';
import {revision, workloadLink} from './overview.js';
import {autoscalerOf, autoscalerLink} from './autoscaler.js';

const PAGE = 500;

// head shows a workload's name, state, counts and the tabs of its pages.
export function head(el, w, tab) {
  const c = w.status.counts || {running: 0, ready: 0, unhealthy: 0, pending: 0};
  const ro = w.status.rollout;
  replace(el,
    h('div', {class: 'crumbs'}, h('a', {href: '/ui/?namespace=' + encodeURIComponent(w.namespace)}, w.namespace), ' / ', KINDS[w.path].title),
    h('h1', {}, w.name, ' ', badge(w.status.state, stateKind(w.status.state)), ro && badge('rollout ' + ro.phase, stateKind(ro.phase))),
    w.status.message && h('p', {class: 'message'}, w.status.message),
    h('dl', {class: 'facts'},
      fact('running', `${c.running}/${w.instances}`), fact('ready', c.ready), fact('unhealthy', c.unhealthy),
      fact('pending', c.pending), fact('revision', revision(w)), fact('updated', age(w.updatedAt) + ' ago')),
    h('nav', {class: 'tabs'},
      h('a', {href: workloadLink(w), class: tab === 'instances' && 'active'}, 'Instances'),
      h('a', {href: workloadLink(w, '/rollout'), class: tab === 'rollout' && 'active', id: 'rollout-tab'}, 'Rollout')));
}

// allocatedBadge marks an instance a game session runs on: no scale-down
// or rollout removes it until it is released.
export function allocatedBadge(a) {
  const by = a.source === 'probe' ? 'its autoscaler\'s probe' : a.by || 'the API';
  return h('span', {class: 'badge badge-info allocated', title: `allocated by ${by} ${age(a.since)} ago${a.note ? ': ' + a.note : ''}`}, 'allocated');
}

export function fact(name, value) {
  return h('div', {class: 'fact', 'data-fact': name}, h('dt', {}, name), h('dd', {}, String(value)));
}

// pendingChart shows why an instance waits: how many agents each reason
// turned away.
export function pendingChart(inst) {
  const p = inst.pending;
  return h('div', {class: 'pending-why', 'data-instance': inst.id},
    h('p', {}, `Instance ${inst.id} fits ${p.fit} of ${p.agents} agents`, p.lastEvaluated ? ` (evaluated ${age(p.lastEvaluated)} ago)` : '', ':'),
    barChart(p.reasons.map((r) => ({label: r.reason, value: r.count})), {title: 'Agents turned away, by reason', unit: ''}));
}

function executor(inst) {
  return (inst.tasks || []).map((t) => {
    if (t.container) return `${t.name}: ${t.container.status}${t.container.pid ? ' pid ' + t.container.pid : ''}${t.container.ipAddress ? ' ' + t.container.ipAddress : ''}`;
    if (t.process) return `${t.name}: pid ${t.process.pid || '-'}`;
    return `${t.name}: ${shortState(t.state)}`;
  }).join('; ');
}

function instanceColumns(w) {
  return [
    {title: 'ID', width: '4rem', class: 'num', cell: (i) => h('a', {href: workloadLink(w, '/instances/' + i.id)}, String(i.id))},
    {title: 'State', width: '12rem', cell: (i) => [badge(i.pending ? 'pending' : shortState(i.state), i.pending ? 'warn' : stateKind(i.state)),
      i.allocated && ' ', i.allocated && allocatedBadge(i.allocated)]},
    {title: 'Agent', width: 'minmax(7rem, 1fr)', cell: (i) => i.host ? h('a', {href: '/ui/agents/' + encodeURIComponent(i.host)}, i.host) : ''},
    {title: 'Host ports', width: 'minmax(7rem, 1fr)', cell: (i) => ports(i.ports)},
    {title: 'Rev', width: '4rem', class: 'num', cell: (i) => String(i.revision)},
    {title: 'Ready', width: '5rem', cell: (i) => i.ready ? badge('ready', 'ok') : badge('no', 'muted')},
    {title: 'Health', width: '7rem', cell: (i) => {
      const text = health(i);
      return text && badge(text, text === 'unhealthy' ? 'bad' : text === 'healthy' ? 'ok' : 'muted');
    }},
    {title: 'Restarts', width: '5rem', class: 'num', cell: (i) => String(i.restarts)},
    {title: 'Executor', width: 'minmax(10rem, 2fr)', cell: executor},
    {title: 'Message', width: 'minmax(10rem, 2fr)', cell: (i) => i.update ? `${i.update.mode} to ${i.update.version}: ${i.update.message || ''}` : (i.message || '')},
  ];
}

// InstanceList holds the instances read so far, by ID, and reads the
// next page when the grid shows rows past them.
class InstanceList {
  constructor(base, onChange) {
    this.base = base;
    this.onChange = onChange;
    this.items = [];
    this.next = undefined; // undefined: nothing read yet; null: all read
    this.loading = null;
  }

  get complete() {
    return this.next === null;
  }

  async more() {
    if (this.loading || this.complete) return this.loading;
    this.loading = page(this.base + '/instances', 'instances', {limit: PAGE, after: this.next}).then((p) => {
      this.items.push(...p.items.filter((i) => !this.items.length || i.id > this.items[this.items.length - 1].id));
      this.next = p.next;
      this.loading = null;
      this.onChange();
    }).catch((err) => {
      this.loading = null; // the next rows shown ask again
      notify('reading instances: ' + err.message);
    });
    return this.loading;
  }

  reset() {
    this.items = [];
    this.next = undefined;
    return this.more();
  }

  position(id) {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.items[mid].id < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // allocate takes an allocation event: the instance it names was
  // allocated or released.
  allocate(e) {
    const id = Number(e.name.slice(e.name.lastIndexOf('/') + 1));
    const at = this.position(id);
    if (at >= this.items.length || this.items[at].id !== id) return;
    const inst = this.items[at];
    const mine = e.object && e.object.taskGroupID === inst.taskGroupID;
    this.items[at] = {...inst, allocated: e.action === 'delete' || !mine ? undefined : e.object};
  }

  // apply takes an instance event: an instance changed, came or went.
  apply(e) {
    const id = Number(e.name.slice(e.name.lastIndexOf('/') + 1));
    const at = this.position(id);
    const found = at < this.items.length && this.items[at].id === id;
    if (e.action === 'delete') {
      if (found) this.items.splice(at, 1);
    } else if (found) {
      this.items[at] = e.object;
    } else if (this.complete || at < this.items.length) {
      this.items.splice(at, 0, e.object);
    }
  }
}

export async function workload(root, kind, ns, name) {
  const base = workloadPath(kind, ns, name);
  let w = {...(await get(base + '?summary=true')), path: kind};
  const headEl = h('header', {class: 'workload-head'});
  const pending = h('section', {class: 'panel', id: 'pending', hidden: true});
  const table = new VirtualTable({label: 'instances', columns: instanceColumns(w), rowKey: (i) => String(i.id),
    rowClass: (i) => 'state-' + (i.pending ? 'pending' : shortState(i.state)), missing: () => list.more(), empty: 'No instances.'});
  const sizedBy = h('p', {class: 'autoscaled', id: 'autoscaled', hidden: true});
  root.append(headEl, sizedBy, pending, h('section', {class: 'fill'}, h('h2', {}, 'Instances'), table.el));
  head(headEl, w, 'instances');
  showAutoscaler(sizedBy, ns, name);

  const showGrid = () => {
    const total = Math.max(w.instances, (w.status.rollout && w.status.rollout.total) || 0);
    const count = list.complete ? list.items.length : Math.max(list.items.length + 1, total);
    table.setCount(count, (i) => list.items[i]);
    const waiting = list.items.find((i) => i.pending);
    pending.hidden = !waiting;
    if (waiting) replace(pending, h('h2', {}, 'Why it is pending'), pendingChart(waiting));
  };
  const list = new InstanceList(base, showGrid);

  const rereadHead = batch(async () => {
    w = {...(await get(base + '?summary=true')), path: kind};
    head(headEl, w, 'instances');
  }, 1000);
  let frame = null;
  const sub = stream.subscribe(['instance', 'allocation', 'rollout', KINDS[kind].event], (e) => {
    if (e.type === 'reset') {
      list.reset();
      rereadHead('all');
      return;
    }
    if (e.type === 'instance' || e.type === 'allocation') {
      if (!e.name.startsWith(name + '/')) return;
      if (e.type === 'instance') list.apply(e);
      else list.allocate(e);
      frame = frame || requestAnimationFrame(() => {
        frame = null;
        showGrid();
      });
    } else if (e.name !== name) {
      return;
    } else if (e.action === 'delete' && e.type !== 'rollout') {
      navigate('/ui/?namespace=' + encodeURIComponent(ns));
      return;
    }
    rereadHead('all');
  }, ns, name);
  await sub.opened;
  await list.more();
  return () => {
    sub.close();
    rereadHead.cancel();
    cancelAnimationFrame(frame);
    table.destroy();
  };
}

// showAutoscaler links the autoscaler that sizes the workload, if one
// does; a caller who may not list them sees no link.
async function showAutoscaler(el, ns, name) {
  const a = await autoscalerOf(ns, name).catch(() => null);
  if (!a) return;
  el.hidden = false;
  replace(el, 'Sized by autoscaler ', h('a', {href: autoscalerLink(a), id: 'autoscaler-link'}, a.name),
    a.status ? ` (bounds ${a.status.bounds.min}–${a.status.bounds.max}, ${a.status.desiredReplicas} desired)` : '',
    a.spec.spec.paused ? ' ' : '', a.spec.spec.paused ? badge('paused', 'warn') : '');
}

// resolveWorkload finds the kind of the workload a path names (an
// agent's instance says only namespace/name) and goes to its page.
export async function resolveWorkload(root, ns, name, rest = '') {
  for (const kind of Object.keys(KINDS)) {
    try {
      await get(workloadPath(kind, ns, name) + '?summary=true');
      navigate(`/ui/${kind}/${encodeURIComponent(ns)}/${encodeURIComponent(name)}${rest}`, {replaceState: true});
      return;
    } catch (err) {
      if (err.status !== 404) throw err;
    }
  }
  replace(root, h('p', {class: 'error'}, `No workload ${ns}/${name}.`));
}
