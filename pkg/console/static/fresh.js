// Lists too large to follow event by event — 5,000 agents whose
// instances change by the hundred thousand while a fleet launches, every
// workload of a fleet — are kept fresh by reading again the rows in view,
// a bounded page, every few seconds and as they scroll into view, and
// the whole list once in a while (rows come and go). A page that is not
// shown reads nothing.

// How often the rows in view are read again, and the whole list.
export const VIEW_EVERY_MS = 5000;
export const LIST_EVERY_MS = 120000;
// How long rows scrolled into view wait for the scroll to stop.
const SCROLL_SETTLE_MS = 250;

// keepFresh calls readView(first, last) for the rows table shows (first
// to last, excluded) every viewEvery ms and when rows not read for that
// long come into view, and readAll every allEvery ms; one read at a time.
// It returns the function that stops it; the table's viewed option must
// be the returned viewed.
export function keepFresh({table, readView, readAll, viewEvery = VIEW_EVERY_MS, allEvery = LIST_EVERY_MS}) {
  let read = {first: 0, last: 0, at: 0}; // the last window read
  let busy = null;
  let settle = null;
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
    await readView(first, last);
  });
  const viewTimer = setInterval(view, viewEvery);
  const allTimer = setInterval(() => run(readAll), allEvery);
  const viewed = (first, last) => {
    const stale = first < read.first || last > read.last || Date.now() - read.at >= viewEvery;
    if (!stale) return;
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
      clearInterval(viewTimer);
      clearInterval(allTimer);
      clearTimeout(settle);
    },
  };
}
