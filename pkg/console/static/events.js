// One stream of GET /v1/events for the whole console. Pages subscribe to
// the event types they show, and the stream asks the API for those only.
// A page lists the state once its stream is open, and so misses nothing;
// the browser resumes a broken stream from the last event it saw.

const TYPES = ['app', 'deployment', 'daemonset', 'instance', 'rollout', 'hookrun', 'agent', 'agentsettings',
  'engine', 'notifycallback', 'notification'];

class Stream {
  constructor() {
    this.subscribers = new Set();
    this.source = null;
    this.query = null;
    this.stateListeners = new Set();
  }

  // subscribe calls handler with each event {id, type, action, namespace,
  // name, object} of types (in namespace, when given), and with
  // {type: 'reset'} when changes were lost (list the state again). It
  // returns the unsubscribe function and a promise of the stream being
  // open: a page lists the state after it, and so misses nothing.
  subscribe(types, handler, namespace = '') {
    const sub = {types: new Set(types), namespace, handler};
    this.subscribers.add(sub);
    const opened = this.connect();
    return {
      opened,
      close: () => {
        this.subscribers.delete(sub);
        this.connect();
      },
    };
  }

  onState(listener) {
    this.stateListeners.add(listener);
  }

  setState(state) {
    for (const listener of this.stateListeners) listener(state);
  }

  wanted() {
    const types = new Set();
    const namespaces = new Set();
    for (const sub of this.subscribers) {
      sub.types.forEach((t) => types.add(t));
      namespaces.add(sub.namespace);
    }
    if (types.size === 0) return null;
    const params = new URLSearchParams({type: [...types].sort().join(',')});
    if (namespaces.size === 1 && !namespaces.has('')) params.set('namespace', [...namespaces][0]);
    return params;
  }

  connect() {
    const params = this.wanted();
    const query = params && params.toString();
    if (query === this.query && this.source) return this.opened;
    if (this.source) this.source.close();
    this.source = null;
    this.query = query;
    if (!params) {
      this.setState('idle');
      return Promise.resolve();
    }
    const source = new EventSource('/v1/events?' + params.toString());
    this.source = source;
    this.setState('connecting');
    this.opened = new Promise((resolve) => source.addEventListener('open', () => {
      this.setState('live');
      resolve();
    }, {once: true}));
    source.addEventListener('error', () => this.setState(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'));
    for (const type of TYPES) source.addEventListener(type, (e) => this.dispatch(e));
    for (const type of ['reset', 'overflow']) {
      source.addEventListener(type, () => {
        for (const sub of this.subscribers) sub.handler({type: 'reset'});
      });
    }
    return this.opened;
  }

  dispatch(e) {
    const event = JSON.parse(e.data);
    for (const sub of this.subscribers) {
      if (sub.types.has(event.type) && (!sub.namespace || sub.namespace === event.namespace)) sub.handler(event);
    }
  }
}

export const stream = new Stream();

// throttle calls fn at most once per wait ms, with the latest arguments:
// a fleet's thousands of changes a second refresh a view a few times.
export function throttle(fn, wait) {
  let timer = null;
  let pending = null;
  return (...args) => {
    pending = args;
    if (timer) return;
    timer = setTimeout(() => {
      timer = null;
      fn(...pending);
    }, wait);
  };
}

// batch collects keys and calls fn with the set of them at most once per
// wait ms.
export function batch(fn, wait) {
  let keys = new Set();
  let timer = null;
  const flush = () => {
    timer = null;
    const now = keys;
    keys = new Set();
    fn(now);
  };
  const add = (key) => {
    keys.add(key);
    if (!timer) timer = setTimeout(flush, wait);
  };
  add.cancel = () => clearTimeout(timer);
  return add;
}
