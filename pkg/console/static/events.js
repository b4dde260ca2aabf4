// One stream of GET /v1/events for the whole console (a browser opens
// few connections to one server, for every tab together). Pages subscribe
// to the event types they show, in the namespace or of the workload they
// show, and the stream asks the API for those only: a workload's page of
// a namespace of 100,000 instances is not sent them all.
// A page lists the state once its stream is open (or, when it is slow to
// open, at once and again when it opens), and so misses nothing;
// the browser resumes a broken stream from the last event it saw. A page
// that shows history (the events page) follows a stream of its own that
// starts earlier (replay).

import {openStream} from './api.js';

// How long a page waits for its stream to open before it lists the state.
const OPEN_WAIT_MS = 5000;

// The header shows one state for every stream open: the worst of them.
const STATE_ORDER = ['idle', 'live', 'connecting', 'reconnecting', 'closed'];
const streams = new Set();
const stateListeners = new Set();

export function onStreamState(listener) {
  stateListeners.add(listener);
}

function reportState() {
  let worst = 'idle';
  for (const s of streams) if (STATE_ORDER.indexOf(s.state) > STATE_ORDER.indexOf(worst)) worst = s.state;
  for (const listener of stateListeners) listener(worst);
}

class Stream {
  // after is the event ID the stream starts after; null: from now.
  constructor(after = null) {
    this.after = after;
    this.subscribers = new Set();
    this.source = null;
    this.query = null;
    this.state = 'idle';
    streams.add(this);
  }

  // subscribe calls handler with each event {id, type, action, namespace,
  // name, revision, object} of types (in namespace, when given; of the
  // workload of that name in it, its instances, allocations and rollout,
  // when given too), and with {type: 'reset', message} when changes were
  // lost (list the state again). It returns the unsubscribe function and
  // a promise of the stream being open: a page lists the state after it,
  // and so misses nothing.
  subscribe(types, handler, namespace = '', workload = '') {
    const sub = {types: new Set(types), namespace, workload, handler};
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

  setState(state) {
    this.state = state;
    reportState();
  }

  // follow calls handler with each event of types the stream is sent for
  // its other subscribers: it widens neither the stream's types nor its
  // scope (the agents page is not sent every rollout of a launching
  // fleet for it).
  follow(types, handler) {
    return this.subscribe(types, handler, null);
  }

  wanted() {
    const types = new Set();
    const scopes = new Set();
    for (const sub of this.subscribers) {
      if (sub.namespace === null) continue;
      sub.types.forEach((t) => types.add(t));
      scopes.add(JSON.stringify([sub.namespace, sub.namespace && sub.workload]));
    }
    if (types.size === 0) return null;
    const params = new URLSearchParams({type: [...types].sort().join(',')});
    const [namespace, workload] = scopes.size === 1 ? JSON.parse([...scopes][0]) : ['', ''];
    if (namespace) params.set('namespace', namespace);
    if (workload) params.set('workload', workload);
    if (this.after !== null) params.set('lastEventId', this.after);
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
      if (this.after !== null) streams.delete(this); // a replay ended
      return Promise.resolve();
    }
    const source = new EventSource('/v1/events?' + params.toString());
    this.source = source;
    this.setState('connecting');
    // A page lists the state once the stream is open, or after
    // OPEN_WAIT_MS if it is slow to open (a loaded server, a proxy that
    // holds the headers): it shows the state meanwhile, the header saying
    // "connecting…", and lists it again once the stream opens, so that
    // nothing between the two is missed.
    this.opened = new Promise((resolve) => {
      let late = false;
      const wait = setTimeout(() => {
        late = true;
        resolve();
      }, OPEN_WAIT_MS);
      source.addEventListener('open', () => {
        clearTimeout(wait);
        this.setState('live');
        if (late) {
          for (const sub of this.subscribers) sub.handler({type: 'reset', message: 'the event stream opened late: listed again'});
        }
        resolve();
      }, {once: true});
    });
    source.addEventListener('error', () => this.setState(source.readyState === EventSource.CLOSED ? 'closed' : 'reconnecting'));
    // The types asked for are the ones listened to: a page's new type
    // needs no list kept here.
    for (const type of params.get('type').split(',')) source.addEventListener(type, (e) => this.dispatch(e));
    for (const type of ['reset', 'overflow']) {
      source.addEventListener(type, (e) => {
        const {message} = JSON.parse(e.data || '{}');
        for (const sub of this.subscribers) sub.handler({type: 'reset', message});
      });
    }
    return this.opened;
  }

  dispatch(e) {
    const event = JSON.parse(e.data);
    for (const sub of this.subscribers) {
      if (sub.types.has(event.type) && inScope(sub, event)) sub.handler(event);
    }
  }
}

// inScope reports whether event is in the namespace and workload sub
// asked for.
function inScope(sub, event) {
  if (!sub.namespace) return true;
  if (sub.namespace !== event.namespace) return false;
  return !sub.workload || event.name === sub.workload || event.name.startsWith(sub.workload + '/');
}

export const stream = new Stream();

// replay is a stream of its own that starts after the event ID after:
// it sends the history since then, then goes on live. It ends when its
// last subscription closes.
export function replay(after) {
  return new Stream(after);
}

// head is the ID the event stream starts at now, the store's revision:
// GET /v1/events opens with a message of it alone, read and closed here.
export async function head() {
  const abort = new AbortController();
  try {
    const resp = await openStream('/v1/events', abort.signal);
    const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('\n\n')) {
      const {value, done} = await reader.read();
      if (done) break;
      text += value;
    }
    const id = text.match(/^id: (\S+)$/m);
    if (!id) throw new Error('the event stream did not say where it starts');
    return id[1];
  } finally {
    abort.abort();
  }
}

// revisionOf is the store revision of an event ID ("1234.2" or "1234").
export function revisionOf(id) {
  return Number(String(id).split('.')[0]);
}

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
