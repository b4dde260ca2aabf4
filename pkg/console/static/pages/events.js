// The event stream: the recent history the caller may read, then every
// change as it happens, newest first, the last few thousand kept.

import {h, badge} from '../dom.js';
import {head, replay, revisionOf} from '../events.js';
import {VirtualTable} from '../virtual.js';
import {clock, stateKind, shortState} from '../format.js';

const KEEP = 5000;
// HISTORY is how many store revisions back the page starts, as
// bcsctl events does: every write of the store is one, and the API
// leaves out what the caller may not read.
const HISTORY = 2000;
const TYPES = ['app', 'deployment', 'daemonset', 'instance', 'rollout', 'hookrun', 'autoscaler', 'autoscalerstatus', 'allocation', 'agent', 'agentsettings', 'engine', 'notification'];

function summary(e) {
  const o = e.object;
  if (!o) return '';
  switch (e.type) {
    case 'instance': return [shortState(o.state), o.host, o.pending ? `pending: fits ${o.pending.fit}/${o.pending.agents}` : '', o.message].filter(Boolean).join(' · ');
    case 'rollout': return `${o.phase}: ${o.message}`;
    case 'hookrun': return `${o.status.phase}${o.status.message ? ': ' + o.status.message : ''}`;
    case 'app': case 'deployment': case 'daemonset': return `${o.status.state} · version ${o.version} · ${o.instances} instances`;
    case 'agent': return o.hostname;
    case 'autoscalerstatus': return `${o.currentReplicas} → ${o.desiredReplicas}${o.message ? ': ' + o.message : ''}`;
    case 'allocation': return `allocated (${o.source}${o.by ? ' by ' + o.by : ''})${o.note ? ': ' + o.note : ''}`;
    default: return '';
  }
}

function kindOf(e) {
  const o = e.object;
  if (!o) return 'muted';
  return stateKind((o.status && o.status.state) || o.phase || o.state);
}

export async function events(root) {
  const received = [];
  let paused = false;
  const shown = new Set(TYPES);
  const table = new VirtualTable({label: 'events', rowKey: (e) => e.id, empty: 'No recent change; waiting for the next…', columns: [
    // An event says no time: those of the history came before the page.
    {title: 'Time', width: '6rem', cell: (e) => e.at ? clock(e.at) : h('span', {class: 'muted', title: 'before the page opened'}, 'earlier')},
    {title: 'Type', width: '8rem', cell: (e) => badge(e.type, kindOf(e))},
    {title: 'Action', width: '5rem', cell: (e) => e.action},
    {title: 'Namespace', width: 'minmax(7rem, 1fr)', cell: (e) => e.namespace},
    {title: 'Name', width: 'minmax(10rem, 1.5fr)', cell: (e) => e.name},
    {title: 'What', width: 'minmax(16rem, 4fr)', cell: summary},
    {title: 'ID', width: '7rem', class: 'muted', cell: (e) => e.id},
  ]});
  const filter = () => table.setRows(received.filter((e) => shown.has(e.type)));
  const toggles = h('div', {class: 'toggles'}, TYPES.map((t) => h('label', {},
    h('input', {type: 'checkbox', checked: true, 'data-type': t, onchange: (ev) => {
      if (ev.target.checked) shown.add(t);
      else shown.delete(t);
      filter();
    }}), ' ', t)));
  const pause = h('button', {type: 'button', id: 'events-pause', onclick: () => {
    paused = !paused;
    pause.textContent = paused ? 'Follow' : 'Pause';
    if (!paused) filter();
  }}, 'Pause');
  const count = h('span', {class: 'muted', id: 'events-count'}, '0 events');
  root.append(h('section', {class: 'fill'}, h('h1', {}, 'Events ', count), h('div', {class: 'toolbar'}, pause, toggles), table.el));

  // The history is what the stream replays up to the revision it is at
  // now; what comes after is live.
  const now = revisionOf(await head());
  let frame = null;
  const sub = replay(String(Math.max(0, now - HISTORY))).subscribe(TYPES, (e) => {
    const at = e.type === 'reset' || e.revision > now ? Date.now() : null;
    received.unshift(e.type === 'reset' ? {type: 'reset', id: '', action: 'reset', namespace: '', name: e.message || 'changes were lost', at} : {...e, at});
    if (received.length > KEEP) received.pop();
    count.textContent = `${received.length} events`;
    if (!paused) frame = frame || requestAnimationFrame(() => {
      frame = null;
      filter();
    });
  });
  await sub.opened;
  filter();
  return () => {
    sub.close();
    cancelAnimationFrame(frame);
    table.destroy();
  };
}
