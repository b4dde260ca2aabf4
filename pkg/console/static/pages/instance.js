// One instance: where it runs, its state and health, why it waits for a
// launch, what the rollout or a move does to it, and each container or
// process as its executor reports it.

import {h, replace, badge} from '../dom.js';
import {get, page, workloadPath} from '../api.js';
import {stream} from '../events.js';
import {stateKind, shortState, ports, health, age} from '../format.js';
import {fact, pendingChart} from './workload.js';
import {workloadLink} from './overview.js';

function executorFacts(t) {
  const status = t.container || t.process || {};
  return Object.entries(status).filter(([, v]) => v !== '' && v !== null && typeof v !== 'object')
    .map(([k, v]) => fact(k, v)).concat(status.ports ? [fact('ports', ports(status.ports))] : []);
}

function task(t) {
  return h('article', {class: 'task', 'data-task': t.name},
    h('h3', {}, t.name, ' ', badge(shortState(t.state), stateKind(t.state)),
      t.healthy === false ? badge('unhealthy', 'bad') : t.healthy === true ? badge('healthy', 'ok') : ''),
    h('p', {class: 'muted'}, t.id, t.message ? ' — ' + t.message : ''),
    h('dl', {class: 'facts'}, executorFacts(t)));
}

function show(el, w, inst) {
  replace(el,
    h('div', {class: 'crumbs'}, h('a', {href: workloadLink(w)}, `${w.namespace}/${w.name}`), ' / instance'),
    h('h1', {}, `${w.name}/${inst.id} `, badge(inst.pending ? 'pending' : shortState(inst.state), inst.pending ? 'warn' : stateKind(inst.state))),
    inst.message && h('p', {class: 'message'}, inst.message),
    h('dl', {class: 'facts'},
      fact('task group', inst.taskGroupID || '—'), fact('agent', inst.host || '—'), fact('host ports', ports(inst.ports) || '—'),
      fact('revision', inst.revision), fact('ready', inst.ready ? 'yes' : 'no'), fact('health', health(inst) || '—'),
      fact('restarts', inst.restarts), inst.previousTaskGroupID && fact('previous', inst.previousTaskGroupID)),
    inst.pending && h('section', {class: 'panel', id: 'pending'}, h('h2', {}, 'Why it is pending'), pendingChart(inst)),
    inst.update && h('section', {class: 'panel'}, h('h2', {}, 'Update'),
      h('p', {}, `${inst.update.mode} to revision ${inst.update.version} since ${age(inst.update.since)} ago`,
        inst.update.message ? ': ' + inst.update.message : '', inst.update.error ? ' — ' + inst.update.error : '')),
    inst.move && h('section', {class: 'panel'}, h('h2', {}, 'Move'),
      h('p', {}, `${inst.move.reason} from ${inst.move.fromHost}${inst.move.toHost ? ' to ' + inst.move.toHost : ''}`,
        inst.move.successor ? `: successor on ${inst.move.successor.host || '(not placed)'}` : '')),
    (inst.remoteChecks || []).length > 0 && h('section', {class: 'panel'}, h('h2', {}, 'Remote checks'),
      h('ul', {}, inst.remoteChecks.map((c) => h('li', {}, badge(c.healthy ? 'healthy' : 'unhealthy', c.healthy ? 'ok' : 'bad'), ' ', c.name, c.message ? ': ' + c.message : '')))),
    h('section', {class: 'panel', id: 'tasks'}, h('h2', {}, 'Tasks'),
      (inst.tasks || []).length ? inst.tasks.map(task) : h('p', {class: 'muted'}, 'Not launched.')));
}

export async function instance(root, kind, ns, name, id) {
  const base = workloadPath(kind, ns, name);
  const w = {...(await get(base + '?summary=true')), path: kind};
  const el = h('div', {class: 'instance'});
  root.append(el);
  const sub = stream.subscribe(['instance'], (e) => {
    if (e.type === 'instance' && e.name === `${name}/${id}` && e.object) show(el, w, e.object);
  }, ns);
  await sub.opened;
  const p = await page(base + '/instances', 'instances', {limit: 1, after: Number(id) > 0 ? Number(id) - 1 : undefined});
  const inst = p.items.find((i) => i.id === Number(id));
  if (!inst) replace(el, h('p', {class: 'error'}, `${ns}/${name} has no instance ${id}.`));
  else show(el, w, inst);
  return () => sub.close();
}
