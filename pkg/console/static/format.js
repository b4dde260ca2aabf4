// How values read on the page.

export function age(time) {
  if (!time) return '';
  const seconds = Math.max(0, Math.round((Date.now() - new Date(time).getTime()) / 1000));
  if (seconds < 60) return seconds + 's';
  if (seconds < 3600) return Math.floor(seconds / 60) + 'm';
  if (seconds < 86400) return Math.floor(seconds / 3600) + 'h';
  return Math.floor(seconds / 86400) + 'd';
}

export function clock(time) {
  return new Date(time).toLocaleTimeString([], {hour12: false});
}

export function number(n, digits = 1) {
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

// stateKind is the colour of an instance's, application's or rollout's
// state.
export function stateKind(state) {
  switch (state) {
    case 'TASK_RUNNING': case 'Running': case 'Completed': case 'Healthy': case 'Successful': return 'ok';
    case 'TASK_FAILED': case 'TASK_LOST': case 'TASK_ERROR': case 'TASK_DROPPED': case 'TASK_GONE':
    case 'Failed': case 'Aborted': case 'Error': case 'Unhealthy': return 'bad';
    case 'Paused': case 'Pending': case 'Inconclusive': case 'Deleting': case 'TASK_KILLING': return 'warn';
    default: return 'info';
  }
}

// shortState drops Mesos' TASK_ prefix.
export function shortState(state) {
  return (state || 'pending').replace(/^TASK_/, '').toLowerCase();
}

// ports reads {http: 31001} as "http 31001".
export function ports(map) {
  return Object.entries(map || {}).map(([name, port]) => name + ' ' + port).join(', ');
}

// health reads an instance's healthy and remoteHealthy verdicts.
export function health(inst) {
  if (inst.healthy === false || inst.remoteHealthy === false) return 'unhealthy';
  if (inst.healthy === true || inst.remoteHealthy === true) return 'healthy';
  return inst.state === 'TASK_RUNNING' ? 'no checks' : '';
}
