// Lists too large to follow event by event — 5,000 agents whose
// instances change by the hundred thousand while a fleet launches, every
// workload of a fleet — are kept fresh by reading again the rows in view,
// a bounded page, every few seconds and as they scroll into view, and
// the whole list once in a while (rows come and go). While the rows in
// view stay the same, they are read less and less often, down to once
// every VIEW_IDLE_MS. A page that is not shown reads nothing.

// How often the rows in view are read again (while they change, and at
// the least), and the whole list.
export const VIEW_EVERY_MS = 5000;
const VIEW_IDLE_MS = 30000;
export const LIST_EVERY_MS = 120000;
// How long rows scrolled into view wait for the scroll to stop.
const SCROLL_SETTLE_MS = 250;

// keepFresh calls readView(first, last) for the rows table shows (first
// to last, excluded; it answers whether one changed) every viewEvery ms,
// less often while none changes, and when rows not read for viewEvery
// come into view, and readAll every allEvery ms; one read at a time. It
// returns viewed, which must be the table's viewed option, loaded, to
// call when the whole list was read, and stop.
export function keepFresh({table, readView, readAll, viewEvery = VIEW_EVERY_MS, allEvery = LIST_EVERY_MS}) {
  let read = {first: 0, last: 0, at: 0}; // the last window read
  let busy = null;
  let settle = null;
  let wait = viewEvery;
  let viewTimer = null;
  const run = (fn) => {
    if (busy || document.hidden) return;
    busy = fn().catch(() => {}).finally(() => {
      busy = null;
    });
  };
  const view = () => run(async () => {
    const {first, last} = table.inView();
    if (last <= first) return;
    read = {first, last, at: Date.now()};
    const changed = await readView(first, last);
    wait = changed ? viewEvery : Math.min(2 * wait, VIEW_IDLE_MS);
  });
  const tick = () => {
    view();
    viewTimer = setTimeout(tick, wait);
  };
  viewTimer = setTimeout(tick, wait);
  const allTimer = setInterval(() => run(readAll), allEvery);
  const viewed = (first, last) => {
    const stale = first < read.first || last > read.last || Date.now() - read.at >= viewEvery;
    if (!stale) return;
    wait = viewEvery;
    clearTimeout(settle);
    settle = setTimeout(view, SCROLL_SETTLE_MS);
  };
  return {
    viewed,
    // loaded says the whole list was just read: the rows in view too.
    loaded: () => {
      read = {first: 0, last: Infinity, at: Date.now()};
    },
    stop: () => {
      clearTimeout(viewTimer);
      clearInterval(allTimer);
      clearTimeout(settle);
    },
  };
}
