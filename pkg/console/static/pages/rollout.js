// A workload's rollout: the strategy, the canary steps with the current
// one marked, the partition, updated and ready counts over time, the
// hook runs with their measurements, and the buttons bcsctl's rollout
// pause, resume, promote and abort press.

import {h, replace, badge} from '../dom.js';
import {get, post, all, workloadPath, readOnly, KINDS} from '../api.js';
import {stream, batch} from '../events.js';
import {notify} from '../router.js';
import {lineChart} from '../charts.js';
import {stateKind, age, clock} from '../format.js';
import {head, fact} from './workload.js';

// The counts of each rollout seen since the console opened, by
// namespace/name: the chart of counts over time.
const history = new Map();
const MAX_POINTS = 2000;

function record(ns, name, ro) {
  if (!ro) return;
  const key = `${ns}/${name}`;
  let points = history.get(key) || [];
  if (points.length && points[points.length - 1].revision !== ro.updateRevision) points = [];
  const last = points[points.length - 1];
  if (!last || last.updated !== ro.updated || last.ready !== ro.ready || last.updatedReady !== ro.updatedReady) {
    points.push({t: Date.now(), revision: ro.updateRevision, updated: ro.updated, ready: ro.ready, updatedReady: ro.updatedReady});
    if (points.length > MAX_POINTS) points.shift();
  }
  history.set(key, points);
}

// recordRollouts records the rollouts the console is sent for its pages
// (the workloads list, a workload's page) for as long as it is open, so
// that a rollout page shows the counts from before it opened.
export function recordRollouts() {
  stream.follow(['rollout'], (e) => {
    if (e.type === 'rollout' && e.action !== 'delete') record(e.namespace, e.name, e.object);
  });
}

export function strategyOf(w) {
  const spec = (w.spec && w.spec.spec) || {};
  if (spec.updateStrategy) return spec.updateStrategy;
  if (spec.strategy) return {type: spec.strategy.type, ...(spec.strategy.rollingUpdate || {})};
  return {type: 'RollingUpdate'};
}

function stepLabel(step) {
  if (step.partition !== undefined) return `partition ${step.partition}: update instances ≥ ${step.partition}`;
  if (step.pause) return step.pause.duration ? `pause ${step.pause.duration}s` : 'pause until promote';
  if (step.hook) return `hook ${step.hook.templateName}`;
  return JSON.stringify(step);
}

function steps(strategy, ro) {
  const list = (strategy.canary && strategy.canary.steps) || [];
  if (!list.length) return h('p', {class: 'muted'}, 'No canary steps: the strategy updates every instance in one pass.');
  const current = ro ? ro.currentStepIndex : 0;
  const done = ro && (ro.phase === 'Completed' || ro.phase === 'Aborted');
  return h('ol', {class: 'steps', id: 'steps'}, list.map((step, i) => h('li', {
    class: ['step', i < current && 'step-done', i === current && !done && 'step-current'],
    'data-step': i,
    'aria-current': i === current && !done ? 'step' : undefined,
  }, h('span', {class: 'step-index'}, i + 1), stepLabel(step))));
}

function counts(ns, name, ro) {
  const points = history.get(`${ns}/${name}`) || [];
  const series = ['updated', 'updatedReady', 'ready'].map((k) => ({
    name: k, class: 'series-' + k, points: points.map((p) => ({t: p.t, v: p[k]})),
  }));
  return lineChart(series, {max: ro ? ro.replicas : 1, title: 'Instances updated and ready since the console opened'});
}

function hookRuns(runs) {
  if (!runs.length) return h('p', {class: 'muted'}, 'No hook runs.');
  return h('div', {class: 'hookruns'}, runs.map((run) => h('article', {class: 'hookrun', 'data-hookrun': run.name},
    h('h3', {}, run.name, ' ', badge(run.status.phase, stateKind(run.status.phase)),
      h('span', {class: 'muted'}, ` ${run.spec.templateName}${run.spec.owner ? ', ' + run.spec.owner.kind + ' of revision ' + run.spec.owner.revision : ''}`)),
    run.status.message && h('p', {class: 'message'}, run.status.message),
    (run.status.metricResults || []).map((m) => h('div', {class: 'metric'},
      h('h4', {}, m.name, ' ', badge(m.phase, stateKind(m.phase)),
        h('span', {class: 'muted'}, ` ${m.successful} successful, ${m.failed} failed, ${m.inconclusive} inconclusive, ${m.error} errors`)),
      h('ol', {class: 'measurements'}, (m.measurements || []).map((x) => h('li', {class: 'measurement'},
        badge(x.phase, stateKind(x.phase)), ' ', h('code', {}, x.value || '—'), ' ',
        h('span', {class: 'muted'}, clock(x.startedAt)), x.message ? ' ' + x.message : ''))))))));
}

const OPS = [
  {op: 'pause', label: 'Pause', enabled: (ro) => !ro.paused},
  {op: 'resume', label: 'Resume', enabled: (ro) => ro.paused},
  {op: 'promote', label: 'Promote', enabled: (ro) => ro.wait && ro.wait.kind !== 'hook'},
  {op: 'abort', label: 'Abort', enabled: (ro) => ro.currentRevision !== ro.updateRevision && !ro.aborted},
];

function buttons(base, ro, reread) {
  return h('div', {class: 'buttons'}, OPS.map(({op, label, enabled}) => h('button', {
    type: 'button', id: 'rollout-' + op, 'data-op': op,
    disabled: readOnly() || !ro || !enabled(ro),
    onclick: async (e) => {
      if (op === 'abort' && !confirm('Abort the rollout: every instance goes back to the stable revision?')) return;
      e.target.disabled = true;
      try {
        await post(`${base}/${op}`);
        notify(`${op}: accepted`, 'info');
      } catch (err) {
        notify(`${op}: ${err.message}`);
      }
      reread('all');
    },
  }, label)));
}

export async function rollout(root, kind, ns, name) {
  const base = workloadPath(kind, ns, name);
  const headEl = h('header', {class: 'workload-head'});
  const body = h('div', {class: 'rollout'});
  const runsEl = h('section', {class: 'panel', id: 'hookruns'});
  root.append(headEl, body, runsEl);
  let w = null;

  const show = () => {
    const ro = w.status.rollout;
    const strategy = strategyOf(w);
    head(headEl, w, 'rollout');
    replace(body,
      h('section', {class: 'panel', id: 'rollout-status', 'data-phase': ro ? ro.phase : ''},
        h('h2', {}, 'Rollout ', ro && badge(ro.phase, stateKind(ro.phase))),
        ro && h('p', {class: 'message', id: 'rollout-message'}, ro.message),
        ro && ro.wait && h('p', {class: 'wait'}, `Waits for ${ro.wait.kind} since ${age(ro.wait.since)} ago`,
          ro.wait.until ? `, until ${clock(ro.wait.until)}` : '', ro.wait.message ? `: ${ro.wait.message}` : ''),
        buttons(base, ro, reread),
        h('dl', {class: 'facts'},
          fact('strategy', strategy.type), fact('partition', ro ? ro.partition : strategy.partition || 0),
          fact('maxUnavailable', ro ? ro.maxUnavailable : ''), fact('maxSurge', ro ? ro.maxSurge : ''),
          fact('replicas', ro ? ro.replicas : w.instances), fact('updated', ro ? ro.updated : ''),
          fact('updatedReady', ro ? ro.updatedReady : ''), fact('ready', ro ? ro.ready : ''),
          fact('revision', ro ? `${ro.currentRevision} → ${ro.updateRevision}` : w.version))),
      h('section', {class: 'panel'}, h('h2', {}, 'Steps'), steps(strategy, ro)),
      h('section', {class: 'panel', id: 'counts'}, h('h2', {}, 'Counts over time'), counts(ns, name, ro)));
  };

  const reread = batch(async () => {
    w = {...(await get(base + '?summary=true')), path: kind};
    record(ns, name, w.status.rollout);
    show();
  }, 300);
  const rereadRuns = batch(async () => {
    replace(runsEl, h('h2', {}, 'Hook runs'), hookRuns(await all('/v1/hookruns', 'hookruns', {namespace: ns, owner: name})));
  }, 1000);

  const sub = stream.subscribe(['rollout', 'hookrun', KINDS[kind].event], (e) => {
    if (e.type === 'reset') {
      reread('all');
      rereadRuns('all');
    } else if (e.type === 'hookrun') {
      if (e.object && e.object.spec.owner && e.object.spec.owner.app === name) rereadRuns('all');
    } else if (e.name === name) {
      reread('all');
    }
  }, ns);
  await sub.opened;
  w = {...(await get(base + '?summary=true')), path: kind};
  record(ns, name, w.status.rollout);
  show();
  rereadRuns('all');
  // The chart's time axis moves on while nothing changes.
  const tick = setInterval(() => {
    const el = document.getElementById('counts');
    if (el && w) replace(el, h('h2', {}, 'Counts over time'), counts(ns, name, w.status.rollout));
  }, 5000);
  return () => {
    sub.close();
    reread.cancel();
    rereadRuns.cancel();
    clearInterval(tick);
  };
}
