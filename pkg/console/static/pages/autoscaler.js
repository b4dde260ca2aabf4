// Autoscalers: the list, and one autoscaler as the leader last decided
// for it — the bounds in force and the schedule windows that set them,
// each metric's current value, target and proposal, the conditions with
// their reasons, the last scale with the instances it removed and the
// recent decisions — with Pause and Resume (bcsctl autoscale), updated
// as the leader writes its status.

import {h, replace, badge} from '../dom.js';
import {all, get, post, kindPath, readOnly} from '../api.js';
import {stream, batch} from '../events.js';
import {notify} from '../router.js';
import {VirtualTable} from '../virtual.js';
import {age, clock, number} from '../format.js';
import {fact} from './workload.js';

const TYPES = ['autoscaler', 'autoscalerstatus'];

export function autoscalerLink(a) {
  return `/ui/autoscalers/${encodeURIComponent(a.namespace)}/${encodeURIComponent(a.name)}`;
}

function targetLink(a) {
  const t = a.spec.spec.target;
  return h('a', {href: `/ui/${kindPath(t.kind)}/${encodeURIComponent(a.namespace)}/${encodeURIComponent(t.name)}`, class: 'target-link'}, `${t.kind}/${t.name}`);
}

// metricName is a metric's name as the status names it: its own, a
// resource's, or "buffer".
function metricName(m) {
  return m.name || (m.type === 'resource' && m.resource ? m.resource.name : m.type);
}

// metricTarget is what a metric aims at, as its spec says.
function metricTarget(m) {
  if (m.resource && m.resource.targetAverageUtilization) return m.resource.targetAverageUtilization + '%';
  if (m.resource && m.resource.targetAverageValue) return number(m.resource.targetAverageValue) + ' (avg)';
  if (m.buffer) return m.buffer.bufferSize + ' free';
  if (m.targetAverageValue) return number(m.targetAverageValue) + ' (avg)';
  if (m.targetValue) return number(m.targetValue);
  return '';
}

function metricStatus(a, name) {
  return ((a.status && a.status.metrics) || []).find((s) => s.name === name);
}

function current(s) {
  if (!s || s.current === undefined || s.current === null) return '?';
  return number(s.current) + (s.targetType === 'Utilization' ? '%' : '');
}

function metricsSummary(a) {
  return (a.spec.spec.metrics || []).map((m) => `${metricName(m)}: ${current(metricStatus(a, metricName(m)))}/${metricTarget(m)}`).join(', ');
}

// trouble are the conditions not as a working autoscaler has them.
function trouble(a) {
  return ((a.status && a.status.conditions) || []).filter((c) => (c.type === 'ScalingLimited') === (c.status === 'True'));
}

// stateBadges say what keeps it from scaling: paused, a dry run, a
// condition in trouble, or no decision yet.
function stateBadges(a) {
  const s = a.spec.spec;
  return [
    s.paused && badge('paused', 'warn'),
    s.dryRun && badge('dry run', 'warn'),
    !a.status && badge('no decision yet', 'muted'),
    ...trouble(a).map((c) => badge(c.reason, c.type === 'ScalingLimited' ? 'warn' : 'bad')),
  ];
}

const columns = [
  {title: 'Name', width: 'minmax(9rem, 1.5fr)', cell: (a) => h('a', {href: autoscalerLink(a), class: 'autoscaler-link'}, a.name)},
  {title: 'Namespace', width: 'minmax(7rem, 1fr)', cell: (a) => a.namespace},
  {title: 'Target', width: 'minmax(10rem, 1.5fr)', cell: targetLink},
  {title: 'Bounds', width: '6rem', class: 'num', cell: (a) => a.status ? `${a.status.bounds.min}–${a.status.bounds.max}` : ''},
  {title: 'Current', width: '5rem', class: 'num', cell: (a) => a.status ? String(a.status.currentReplicas) : ''},
  {title: 'Desired', width: '5rem', class: 'num', cell: (a) => a.status ? String(a.status.desiredReplicas) : ''},
  {title: 'Metrics', width: 'minmax(12rem, 2fr)', cell: metricsSummary},
  {title: 'Last scale', width: '6rem', cell: (a) => a.status && a.status.lastScale ? age(a.status.lastScale.at) + ' ago' : 'never'},
  {title: 'State', width: 'minmax(10rem, 1.5fr)', cell: (a) => stateBadges(a)},
];

export async function autoscalers(root) {
  const selected = new URLSearchParams(location.search).get('namespace') || '';
  const title = h('h1', {}, 'Autoscalers', selected ? ` in ${selected}` : '');
  const table = new VirtualTable({label: 'autoscalers', columns, rowKey: (a) => `${a.namespace}/${a.name}`,
    empty: 'No autoscalers: bcsctl apply -f examples/autoscaler.json'});
  root.append(h('section', {class: 'fill'}, title, table.el));
  const load = async () => table.setRows(await all('/v1/autoscalers', 'autoscalers', {namespace: selected}));
  const reread = batch(load, 1000);
  const sub = stream.subscribe(TYPES, () => reread('all'), selected);
  await sub.opened;
  await load();
  return () => {
    sub.close();
    reread.cancel();
    table.destroy();
  };
}

// table is a small table of rows, each a list of cells.
function table(id, headers, rows, empty) {
  if (!rows.length) return h('p', {class: 'muted', id}, empty);
  return h('table', {class: 'plain', id},
    h('thead', {}, h('tr', {}, headers.map((t) => h('th', {}, t)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
}

function removed(list) {
  return (list || []).map((r) => `${r.id} (${r.why})`).join(', ');
}

function boundsFacts(a) {
  const s = a.spec.spec;
  const st = a.status;
  const windows = st ? (st.bounds.windows || []) : [];
  return [
    fact('spec bounds', `${s.minReplicas === undefined ? 1 : s.minReplicas}–${s.maxReplicas}`),
    fact('in force', st ? `${st.bounds.min}–${st.bounds.max}` : '—'),
    fact('windows open', windows.length ? windows.map((w) => `${w.name} until ${clock(w.until)}`).join(', ') : 'none'),
    fact('current', st ? st.currentReplicas : '—'),
    fact('desired', st ? st.desiredReplicas : '—'),
    fact('interval', (s.intervalSeconds || 15) + 's'),
    fact('last scale', st && st.lastScale ? `${st.lastScale.from} → ${st.lastScale.to}, ${age(st.lastScale.at)} ago` : 'never'),
  ];
}

function metricsTable(a) {
  return table('metrics', ['Metric', 'Type', 'Current', 'Target', 'Proposal', 'Message'], (a.spec.spec.metrics || []).map((m) => {
    const s = metricStatus(a, metricName(m));
    return [metricName(m), m.type, current(s), metricTarget(m), s && s.proposal !== undefined ? String(s.proposal) : '', (s && s.message) || ''];
  }), 'No metrics.');
}

function conditionsTable(a) {
  const conds = (a.status && a.status.conditions) || [];
  return table('conditions', ['Condition', 'Status', 'Reason', 'Since', 'Message'], conds.map((c) => [
    c.type, badge(c.status, (c.type === 'ScalingLimited') === (c.status === 'True') ? 'warn' : 'ok'), c.reason,
    age(c.lastTransitionTime) + ' ago', c.message || '']), 'No decision yet: the leading scheduler has not evaluated it.');
}

function scheduleTable(a) {
  const open = new Set(((a.status && a.status.bounds.windows) || []).map((w) => w.name));
  return table('schedule', ['Window', 'Start', 'End', 'Zone', 'Min', 'Max', ''], (a.spec.spec.schedule || []).map((w) => [
    w.name, h('code', {}, w.start), h('code', {}, w.end), w.timeZone || 'UTC',
    w.minReplicas === undefined ? '' : String(w.minReplicas), w.maxReplicas === undefined ? '' : String(w.maxReplicas),
    open.has(w.name) ? badge('open', 'ok') : '']), 'No schedule windows.');
}

// decisionsTable lists the recent decisions newest first.
function decisionsTable(a) {
  const decisions = ((a.status && a.status.decisions) || []).slice().reverse();
  return table('decisions', ['Age', 'Current', 'Proposal', 'Desired', 'Acted', 'Why', 'Removed'], decisions.map((d) => [
    age(d.at), String(d.current), String(d.proposal), String(d.desired), d.acted ? badge('scaled', 'ok') : badge('no', 'muted'),
    d.why, removed(d.removed)]), 'No decisions yet.');
}

function pauseButton(base, a, reread) {
  const paused = a.spec.spec.paused;
  const op = paused ? 'resume' : 'pause';
  return h('div', {class: 'buttons'}, h('button', {
    type: 'button', id: 'autoscaler-' + op, 'data-op': op, disabled: readOnly(),
    onclick: async (e) => {
      e.target.disabled = true;
      try {
        await post(`${base}/${op}`);
        notify(`${op}: done`, 'info');
      } catch (err) {
        notify(`${op}: ${err.message}`);
      }
      reread('all');
    },
  }, paused ? 'Resume' : 'Pause'));
}

export async function autoscaler(root, ns, name) {
  const base = `/v1/autoscalers/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`;
  const el = h('div', {class: 'autoscaler'});
  root.append(el);
  const show = (a) => {
    const st = a.status;
    replace(el,
      h('div', {class: 'crumbs'}, h('a', {href: '/ui/autoscalers?namespace=' + encodeURIComponent(ns)}, 'autoscalers'), ' / ', ns),
      h('h1', {}, a.name, ' ', stateBadges(a)),
      h('p', {}, 'Sizes ', targetLink(a)),
      st && st.message && h('p', {class: 'message', id: 'autoscaler-message'}, st.message),
      pauseButton(base, a, reread),
      h('dl', {class: 'facts', id: 'bounds'}, boundsFacts(a)),
      h('section', {class: 'panel'}, h('h2', {}, 'Metrics'), metricsTable(a)),
      h('section', {class: 'panel'}, h('h2', {}, 'Conditions'), conditionsTable(a)),
      h('section', {class: 'panel'}, h('h2', {}, 'Schedule'), scheduleTable(a)),
      st && st.lastScale && h('section', {class: 'panel', id: 'last-scale'}, h('h2', {}, 'Last scale'),
        h('p', {}, `${st.lastScale.from} → ${st.lastScale.to} at ${clock(st.lastScale.at)}: ${st.lastScale.reason}`,
          st.lastScale.removed ? `; removed ${removed(st.lastScale.removed)}` : '')),
      h('section', {class: 'panel'}, h('h2', {}, 'Recent decisions'), decisionsTable(a)));
  };
  const load = async () => show(await get(base));
  const reread = batch(load, 500);
  const sub = stream.subscribe(TYPES, (e) => {
    if (e.type === 'reset' || e.name === name) reread('all');
  }, ns);
  await sub.opened;
  await load();
  return () => {
    sub.close();
    reread.cancel();
  };
}

// autoscalerOf is the autoscaler sizing a workload, or null.
export async function autoscalerOf(ns, name) {
  const list = await all('/v1/autoscalers', 'autoscalers', {namespace: ns});
  return list.find((a) => a.spec.spec.target.name === name) || null;
}
