// The console's entry: its pages by path, and the live streams' state in
// the header.

import {route, start} from './router.js';
import {onStreamState} from './events.js';
import {overview} from './pages/overview.js';
import {workload, resolveWorkload} from './pages/workload.js';
import {rollout, recordRollouts} from './pages/rollout.js';
import {instance} from './pages/instance.js';
import {agents, agent} from './pages/agents.js';
import {events} from './pages/events.js';
import {autoscalers, autoscaler} from './pages/autoscaler.js';

const KIND = '(apps|deployments|daemonsets)';
const NAME = '([^/]+)';

route(/^\/ui\/?$/, 'workloads', overview);
route(new RegExp(`^/ui/${KIND}/${NAME}/${NAME}$`), 'workloads', workload);
route(new RegExp(`^/ui/${KIND}/${NAME}/${NAME}/rollout$`), 'workloads', rollout);
route(new RegExp(`^/ui/${KIND}/${NAME}/${NAME}/instances/(\\d+)$`), 'workloads', instance);
route(new RegExp(`^/ui/workload/${NAME}/${NAME}(/.*)?$`), 'workloads', resolveWorkload);
route(/^\/ui\/agents$/, 'agents', agents);
route(new RegExp(`^/ui/agents/${NAME}$`), 'agents', agent);
route(/^\/ui\/autoscalers$/, 'autoscalers', autoscalers);
route(new RegExp(`^/ui/autoscalers/${NAME}/${NAME}$`), 'autoscalers', autoscaler);
route(/^\/ui\/events$/, 'events', events);

const indicator = document.getElementById('stream');
onStreamState((state) => {
  indicator.textContent = {live: 'live', connecting: 'connecting…', reconnecting: 'reconnecting…', closed: 'disconnected', idle: 'idle'}[state];
  indicator.dataset.state = state;
});

recordRollouts();
start();
