// A table that renders only the rows in view: 100,000 instances or 5,000
// agents scroll as smoothly as ten. Rows have one height; the scroller's
// spacer is as tall as every row together.

import {h, replace} from './dom.js';

const OVERSCAN = 8;

export class VirtualTable {
  // columns: [{title, width (CSS grid track), cell(row, index) → Node or text}]
  // rowKey(row) names a row for data-key; missing(first, last) is called
  // for the rows in view that are not loaded yet (rowAt returned
  // undefined); viewed(first, last) after each drawing of the rows in
  // view, rows first to last (excluded), those a page may read again.
  constructor({columns, rowHeight = 30, rowKey, missing, viewed, rowClass, empty = 'Nothing here.', label}) {
    this.columns = columns;
    this.rowHeight = rowHeight;
    this.rowKey = rowKey;
    this.missing = missing;
    this.viewed = viewed;
    this.shown = {first: 0, last: 0};
    this.rowClass = rowClass;
    this.count = 0;
    this.rowAt = () => undefined;
    // A bare fr track would grow with its widest cell, row by row: every
    // track is bounded below by its own minimum, never by the content.
    const template = columns.map((c) => (c.width || '1fr').replace(/^([\d.]+fr)$/, 'minmax(0, $1)')).join(' ');
    this.header = h('div', {class: 'vt-row vt-head', role: 'row'},
      columns.map((c) => h('div', {class: ['vt-cell', c.class], role: 'columnheader'}, c.title)));
    this.header.style.gridTemplateColumns = template;
    this.template = template;
    // The header scrolls with the rows (sticky), so that both have the
    // same width whether or not a scroll bar shows.
    this.body = h('div', {class: 'vt-rows', role: 'rowgroup'});
    this.spacer = h('div', {class: 'vt-spacer'}, this.body);
    this.empty = h('p', {class: 'vt-empty', hidden: true}, empty);
    this.scroller = h('div', {class: 'vt-scroll', onscroll: () => this.schedule()}, this.header, this.empty, this.spacer);
    this.el = h('div', {class: 'vt', role: 'table', 'aria-label': label, 'aria-rowcount': 0}, this.scroller);
    this.frame = null;
    this.resize = new ResizeObserver(() => this.schedule());
    this.resize.observe(this.scroller);
  }

  // setRows shows rows (an array), or count rows read by rowAt(index).
  setRows(rows) {
    this.setCount(rows.length, (i) => rows[i]);
  }

  setCount(count, rowAt) {
    this.count = count;
    this.rowAt = rowAt;
    this.el.setAttribute('aria-rowcount', count);
    this.spacer.style.height = count * this.rowHeight + 'px';
    this.empty.hidden = count > 0;
    this.render();
  }

  // refresh renders the rows in view again (their data changed).
  refresh() {
    this.schedule();
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = null;
      this.render();
    });
  }

  render() {
    const top = Math.max(0, this.scroller.scrollTop - this.header.offsetHeight);
    const height = this.scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / this.rowHeight) - OVERSCAN);
    const last = Math.min(this.count, Math.ceil((top + height) / this.rowHeight) + OVERSCAN);
    const rows = [];
    let missing = false;
    for (let i = first; i < last; i++) {
      const row = this.rowAt(i);
      if (row === undefined) missing = true;
      rows.push(this.renderRow(row, i));
    }
    replace(this.body, rows);
    this.body.style.transform = `translateY(${first * this.rowHeight}px)`;
    this.shown = {first, last};
    if (missing && this.missing) this.missing(first, last);
    if (this.viewed) this.viewed(first, last);
  }

  // inView is the rows drawn: first to last (excluded).
  inView() {
    return this.shown;
  }

  renderRow(row, index) {
    const el = h('div', {class: ['vt-row', row && this.rowClass && this.rowClass(row)], role: 'row', 'aria-rowindex': index + 1});
    el.style.gridTemplateColumns = this.template;
    el.style.height = this.rowHeight + 'px';
    if (row === undefined) {
      el.append(h('div', {class: 'vt-cell vt-loading', role: 'cell'}, '…'));
      return el;
    }
    if (this.rowKey) el.dataset.key = this.rowKey(row);
    for (const c of this.columns) el.append(h('div', {class: ['vt-cell', c.class], role: 'cell'}, c.cell(row, index)));
    return el;
  }

  destroy() {
    this.resize.disconnect();
    cancelAnimationFrame(this.frame);
  }
}
