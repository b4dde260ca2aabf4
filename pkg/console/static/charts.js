// Plain SVG and CSS pictures: resource bars, a bar chart of counts, a
// chart of counts over time.

import {h, svg} from './dom.js';
import {number, clock} from './format.js';

// meter is used of total as a bar, with the figures beside it.
export function meter(used, total, unit) {
  const share = total > 0 ? Math.min(1, used / total) : 0;
  const fill = h('span', {class: ['meter-fill', share > 0.9 ? 'meter-high' : share > 0.7 ? 'meter-mid' : '']});
  fill.style.width = (share * 100).toFixed(1) + '%';
  const label = total > 0 ? `${number(used)} / ${number(total)} ${unit}` : `${number(used)} ${unit}`;
  return h('span', {class: 'meter', title: label, role: 'meter', 'aria-valuenow': used, 'aria-valuemax': total || 0},
    h('span', {class: 'meter-track'}, fill), h('span', {class: 'meter-label'}, label));
}

// barChart draws items [{label, value}] as horizontal bars, longest
// first, each labelled with its count.
export function barChart(items, {title, unit = ''} = {}) {
  const sorted = [...items].sort((a, b) => b.value - a.value);
  const max = Math.max(1, ...sorted.map((i) => i.value));
  const barHeight = 22;
  const labelWidth = 260;
  const width = 640;
  const chart = svg('svg', {class: 'bar-chart', viewBox: `0 0 ${width} ${sorted.length * barHeight + 4}`, role: 'img', 'aria-label': title},
    sorted.map((item, i) => {
      const y = i * barHeight + 2;
      const length = Math.max(2, (item.value / max) * (width - labelWidth - 60));
      return svg('g', {class: 'bar', 'data-label': item.label, 'data-value': item.value},
        svg('text', {x: labelWidth - 8, y: y + 15, 'text-anchor': 'end', class: 'bar-label'}, item.label),
        svg('rect', {x: labelWidth, y: y + 3, width: length, height: barHeight - 6, rx: 3}),
        svg('text', {x: labelWidth + length + 6, y: y + 15, class: 'bar-value'}, item.value + unit));
    }));
  return h('figure', {class: 'chart'}, title && h('figcaption', {}, title), chart);
}

// lineChart draws series [{name, class, points: [{t (ms), v}]}] over
// time, up to max on the y axis, as steps (a count holds until it changes).
export function lineChart(series, {max, title}) {
  const width = 640;
  const height = 160;
  const pad = {left: 34, right: 10, top: 10, bottom: 22};
  const times = series.flatMap((s) => s.points.map((p) => p.t));
  if (times.length === 0) return h('p', {class: 'muted'}, 'No counts recorded yet.');
  const t0 = Math.min(...times);
  const t1 = Math.max(Date.now(), t0 + 1000);
  const top = Math.max(1, max, ...series.flatMap((s) => s.points.map((p) => p.v)));
  const x = (t) => pad.left + ((t - t0) / (t1 - t0)) * (width - pad.left - pad.right);
  const y = (v) => height - pad.bottom - (v / top) * (height - pad.top - pad.bottom);
  const paths = series.map((s) => {
    let d = '';
    s.points.forEach((p, i) => {
      d += i === 0 ? `M${x(p.t)},${y(p.v)}` : `H${x(p.t)}V${y(p.v)}`;
    });
    const last = s.points[s.points.length - 1];
    if (last) d += `H${x(t1)}`;
    return svg('path', {d, class: ['series', s.class], 'data-series': s.name});
  });
  const axis = [
    svg('line', {x1: pad.left, y1: y(0), x2: width - pad.right, y2: y(0), class: 'axis'}),
    svg('text', {x: pad.left - 6, y: y(top) + 4, 'text-anchor': 'end', class: 'tick'}, top),
    svg('text', {x: pad.left - 6, y: y(0) + 4, 'text-anchor': 'end', class: 'tick'}, 0),
    svg('text', {x: pad.left, y: height - 4, class: 'tick'}, clock(t0)),
    svg('text', {x: width - pad.right, y: height - 4, 'text-anchor': 'end', class: 'tick'}, clock(t1)),
  ];
  const legend = h('div', {class: 'legend'}, series.map((s) => h('span', {class: ['legend-item', s.class]}, s.name)));
  return h('figure', {class: 'chart'}, title && h('figcaption', {}, title),
    svg('svg', {class: 'line-chart', viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title}, axis, paths), legend);
}
