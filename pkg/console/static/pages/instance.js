// One instance: where it runs, its state and health, why it waits for a
// launch, what the rollout or a move does to it, each container or
// process as its executor reports it and the last lines it wrote, and
// what a person does to it — restart, reload, reschedule, stop, start,
// exec — through the routes bcsctl uses. A read-only caller gets no buttons (the API
// would refuse them too).

import {h, replace, badge} from '../dom.js';
import {get, page, post, text, workloadPath, readOnly} from '../api.js';
import {stream} from '../events.js';
import {notify} from '../router.js';
import {stateKind, shortState, ports, health, age} from '../format.js';
import {fact, pendingChart, allocatedBadge} from './workload.js';
import {workloadLink} from './overview.js';

// LOG_LINES of each log are shown, read from its last LOG_TAIL bytes.
const LOG_LINES = 50;
const LOG_TAIL = 16384;

// EXEC_TIMEOUT bounds a command run from the page, as bcsctl exec's.
const EXEC_TIMEOUT = '30s';

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

// allocation says who allocated the instance, since when and why.
function allocation(a) {
  const by = a.source === 'probe' ? 'the autoscaler\'s probe' : `${a.by || 'the API'}`;
  return `by ${by}, ${age(a.since)} ago${a.note ? ': ' + a.note : ''}`;
}

function summary(el, w, inst) {
  replace(el,
    h('div', {class: 'crumbs'}, h('a', {href: workloadLink(w)}, `${w.namespace}/${w.name}`), ' / instance'),
    h('h1', {}, `${w.name}/${inst.id} `, badge(inst.pending ? 'pending' : shortState(inst.state), inst.pending ? 'warn' : stateKind(inst.state)),
      inst.allocated && ' ', inst.allocated && allocatedBadge(inst.allocated)),
    inst.message && h('p', {class: 'message'}, inst.message),
    h('dl', {class: 'facts'},
      fact('task group', inst.taskGroupID || '—'), fact('agent', inst.host || '—'), fact('host ports', ports(inst.ports) || '—'),
      fact('revision', inst.revision), fact('ready', inst.ready ? 'yes' : 'no'), fact('health', health(inst) || '—'),
      fact('restarts', inst.restarts), inst.previousTaskGroupID && fact('previous', inst.previousTaskGroupID),
      inst.allocated && fact('allocated', allocation(inst.allocated))));
}

function panels(el, inst) {
  replace(el,
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

const taskNames = (inst) => (inst.tasks || []).map((t) => t.name).join(', ');
const running = (inst) => inst.state === 'TASK_RUNNING' && !!inst.taskGroupID;
const taskGroupPath = (inst, op) => `/v1/taskgroups/${encodeURIComponent(inst.taskGroupID)}/${op}`;

// ACTIONS are bcsctl instance's; confirm says what a destructive one
// does before it is sent.
const ACTIONS = [
  {op: 'restart', label: 'Restart', enabled: running,
    confirm: (what, inst) => `Restart ${what} on ${inst.host}? Its tasks (${taskNames(inst)}) are stopped and started again there.`},
  {op: 'reload', label: 'Reload', enabled: running},
  {op: 'reschedule', label: 'Reschedule', enabled: (inst) => !!inst.taskGroupID && !inst.pending && !inst.move,
    confirm: (what, inst) => `Reschedule ${what} off ${inst.host}? A successor starts on another agent, then this one is killed.`},
  {op: 'stop', label: 'Stop', enabled: (inst) => !!inst.taskGroupID && !inst.stopped,
    confirm: (what) => `Stop ${what}? Its tasks are killed and nothing relaunches it until Start.`},
  {op: 'start', label: 'Start', enabled: (inst) => !!inst.stopped},
];

// actions are the buttons of ACTIONS; update enables those the instance
// allows.
function actions(what, current) {
  const buttons = ACTIONS.map((a) => h('button', {type: 'button', id: 'instance-' + a.op, 'data-op': a.op, onclick: async (e) => {
    const inst = current();
    if (a.confirm && !confirm(a.confirm(what, inst))) return;
    e.target.disabled = true;
    try {
      await post(taskGroupPath(inst, a.op));
      notify(`${a.op} of ${what} (${inst.taskGroupID}) requested`, 'info');
    } catch (err) {
      notify(`${a.op}: ${err.message}`);
    }
    update(current());
  }}, a.label));
  const update = (inst) => buttons.forEach((b, i) => {
    b.disabled = !ACTIONS[i].enabled(inst);
  });
  return {el: h('div', {class: 'buttons', id: 'instance-actions'}, buttons), update};
}

// lastLines is the last n lines of a log's tail; its first line is cut
// when the tail was full.
function lastLines(log, n) {
  const lines = log.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  if (new TextEncoder().encode(log).length >= LOG_TAIL) lines.shift();
  return lines.slice(-n);
}

async function logBlock(inst, t, stream) {
  let body;
  try {
    const lines = lastLines(await text(taskGroupPath(inst, 'logs'), {task: t.name, stream, tail: LOG_TAIL}), LOG_LINES);
    body = lines.length ? h('pre', {class: 'log', 'data-stream': stream}, lines.join('\n')) : h('p', {class: 'muted'}, 'Nothing written.');
  } catch (err) {
    body = h('p', {class: 'error'}, err.message);
  }
  return h('div', {class: 'log-stream'}, h('h4', {}, stream), body);
}

// logs is the panel of each task's last lines of stdout and stderr,
// read when asked (read).
function logs(current) {
  const refresh = h('button', {type: 'button', id: 'logs-refresh', onclick: () => read()}, 'Refresh');
  const body = h('div', {class: 'logs'});
  const el = h('section', {class: 'panel', id: 'logs'},
    h('h2', {class: 'panel-head'}, 'Logs', h('span', {class: 'muted'}, `the last ${LOG_LINES} lines of each task's stdout and stderr`), refresh), body);
  let reading = 0;
  const read = async () => {
    const inst = current();
    const mine = ++reading;
    if (!inst.taskGroupID || !(inst.tasks || []).length) {
      refresh.disabled = false;
      replace(body, h('p', {class: 'muted'}, 'Not launched.'));
      return;
    }
    refresh.disabled = true;
    const tasks = await Promise.all(inst.tasks.map(async (t) => h('article', {class: 'task-logs', 'data-task': t.name},
      h('h3', {}, t.name), h('div', {class: 'log-streams'}, await Promise.all(['stdout', 'stderr'].map((s) => logBlock(inst, t, s)))))));
    if (mine !== reading) return; // a newer read shows
    refresh.disabled = false;
    replace(body, tasks);
    for (const pre of body.querySelectorAll('pre.log')) pre.scrollTop = pre.scrollHeight;
  };
  return {el, read};
}

// exec is the form that runs a command in a task of the instance and
// shows what it wrote and its exit code.
function exec(current) {
  const taskSelect = h('select', {id: 'exec-task', 'aria-label': 'task'});
  const command = h('input', {id: 'exec-command', type: 'text', required: true, autocomplete: 'off', spellcheck: 'false',
    placeholder: 'ls -l', 'aria-label': 'command'});
  const run = h('button', {type: 'submit', id: 'exec-run'}, 'Run');
  const result = h('div', {id: 'exec-result'});
  const form = h('form', {class: 'exec-form', onsubmit: async (e) => {
    e.preventDefault();
    const inst = current();
    const line = command.value;
    run.disabled = true;
    replace(result, h('p', {class: 'muted'}, 'Running ', h('code', {}, line), '…'));
    try {
      const res = await post(taskGroupPath(inst, 'exec'), {task: taskSelect.value, command: ['/bin/sh', '-c', line], timeout: EXEC_TIMEOUT});
      // A command that did not run to its end (refused, timed out) has
      // no exit code of its own.
      const exited = res.ok || res.exitCode > 0;
      replace(result,
        h('p', {}, h('code', {}, '$ ' + line), ' ', badge(exited ? 'exit ' + res.exitCode : 'failed', res.ok ? 'ok' : 'bad'), ' ',
          h('span', {class: 'muted'}, `in ${res.task}`)),
        h('pre', {class: 'log', id: 'exec-output'}, res.output),
        res.truncated && h('p', {class: 'muted'}, 'The output was longer; this is its beginning.'),
        res.error && h('p', {class: 'error', id: 'exec-error'}, res.error));
    } catch (err) {
      replace(result, h('p', {class: 'error', id: 'exec-error'}, err.message));
    }
    update(current());
  }}, taskSelect, command, run);
  const update = (inst) => {
    const names = (inst.tasks || []).map((t) => t.name);
    if (names.join('\n') !== [...taskSelect.options].map((o) => o.value).join('\n')) {
      replace(taskSelect, names.map((n) => h('option', {value: n}, n)));
    }
    taskSelect.hidden = names.length < 2;
    run.disabled = !running(inst);
  };
  const el = h('section', {class: 'panel', id: 'exec'}, h('h2', {}, 'Exec'),
    h('p', {class: 'muted'}, 'Runs ', h('code', {}, '/bin/sh -c COMMAND'), ' in the container, or next to the process as its user, as ',
      h('code', {}, 'bcsctl exec'), ' does.'),
    form, result);
  return {el, update};
}

export async function instance(root, kind, ns, name, id) {
  const base = workloadPath(kind, ns, name);
  const w = {...(await get(base + '?summary=true')), path: kind};
  let current = null;
  const what = `${ns}/${name}/${id}`;
  const writer = !readOnly();
  const head = h('div', {class: 'instance-head'});
  const buttons = writer && actions(what, () => current);
  const details = h('div', {class: 'instance-panels'});
  const logPanel = logs(() => current);
  const execPanel = writer && exec(() => current);
  const el = h('div', {class: 'instance'});
  const show = (inst) => {
    const launched = !current || current.taskGroupID !== inst.taskGroupID;
    current = inst;
    summary(head, w, inst);
    panels(details, inst);
    if (buttons) buttons.update(inst);
    if (execPanel) execPanel.update(inst);
    if (launched) logPanel.read();
  };
  root.append(el);
  // An instance's event carries no allocation (allocations are events
  // of their own): it keeps the one of its launch.
  const sub = stream.subscribe(['instance', 'allocation'], (e) => {
    if (e.name !== `${name}/${id}` || !current) return;
    if (e.type === 'instance' && e.object) {
      show({...e.object, allocated: e.object.taskGroupID === current.taskGroupID ? current.allocated : undefined});
    } else if (e.type === 'allocation') {
      show({...current, allocated: e.object && e.object.taskGroupID === current.taskGroupID ? e.object : undefined});
    }
  }, ns, name);
  await sub.opened;
  const p = await page(base + '/instances', 'instances', {limit: 1, after: Number(id) > 0 ? Number(id) - 1 : undefined});
  const inst = p.items.find((i) => i.id === Number(id));
  if (!inst) {
    replace(el, h('p', {class: 'error'}, `${ns}/${name} has no instance ${id}.`));
  } else {
    replace(el, head, buttons && buttons.el, details, logPanel.el, execPanel && execPanel.el);
    show(inst);
  }
  return () => sub.close();
}
