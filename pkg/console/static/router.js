// Pages by path, without reloads: links under /ui/ are followed by
// rendering the page their path names; back and forward work.

import {h, replace} from './dom.js';

const routes = [];
// current stops the page shown; generation counts the pages rendered, so
// that a page still loading when another is asked for is stopped once it
// is ready.
let current = null;
let generation = 0;

// route maps a path pattern (groups are its parameters) to a page: a
// function (root, ...params) that renders into root and returns what
// stops it (its subscriptions, timers).
export function route(pattern, section, page) {
  routes.push({pattern, section, page});
}

export function navigate(url, {replaceState = false} = {}) {
  if (replaceState) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  render();
}

export function render() {
  if (current) current();
  current = null;
  const mine = ++generation;
  notify('');
  // Each page renders into a root of its own: one still loading when
  // another is asked for writes only into its detached root.
  const root = h('div', {class: 'page'});
  document.getElementById('page').replaceChildren(root);
  const path = location.pathname;
  for (const r of routes) {
    const m = path.match(r.pattern);
    if (!m) continue;
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.section === r.section);
    const params = m.slice(1).map((p) => p && decodeURIComponent(p));
    Promise.resolve(r.page(root, ...params)).then((stop) => {
      if (mine === generation) current = stop || null;
      else if (stop) stop();
    }).catch((err) => {
      if (mine === generation) replace(root, h('p', {class: 'error'}, String(err.message || err)));
    });
    return;
  }
  replace(root, h('p', {class: 'error'}, 'No page at ' + path + '.'));
}

// notify shows a message above the page ("" hides it).
export function notify(message, kind = 'error') {
  const el = document.getElementById('notice');
  el.hidden = !message;
  el.className = 'notice notice-' + kind;
  el.textContent = message;
}

export function start() {
  document.addEventListener('click', (e) => {
    const a = e.target.closest('a[href]');
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || a.target) return;
    const url = new URL(a.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/ui/') || url.pathname.startsWith('/ui/assets/')) return;
    e.preventDefault();
    if (url.pathname + url.search !== location.pathname + location.search) navigate(url.pathname + url.search);
  });
  window.addEventListener('popstate', render);
  render();
}
