// Building the DOM. Text always goes in as text nodes: nothing the API
// answers is ever parsed as HTML.

const SVG = 'http://www.w3.org/2000/svg';

function build(el, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') el.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (name === 'dataset') Object.assign(el.dataset, value);
    else if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else if (name === 'style') Object.assign(el.style, value);
    else el.setAttribute(name, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// h('a', {href: '/ui/', class: 'x'}, 'text', child…) is an HTML element.
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

// svg('rect', {x: 0}) is an SVG element.
export function svg(tag, attrs, ...children) {
  return build(document.createElementNS(SVG, tag), attrs, children);
}

// replace makes children the only content of el.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// badge is a word in a coloured pill; its class says which colour.
export function badge(text, kind) {
  return h('span', {class: ['badge', kind && 'badge-' + kind]}, text);
}
