// Traffic at a glance: requests, downloads, bytes sent, Apple calls and their outcomes, the 304 share of the
// product lists, over the last hour and the last day, refreshed every 5 s; free disk space with the reserve.
import { call, paths } from './api.js';
import { h, replace } from './dom.js';
import * as format from './format.js';
import { bars, gauge } from './charts.js';

const refreshMilliseconds = 5000;
let timer = null;
let root = null;
let span = 'hour';

export async function show(section) {
  root = section;
  replace(section, h('h2', { id: 'traffic-title' }, 'Traffic'), h('p', { class: 'hint' }, 'Loading…'));
  await refresh();
  clearInterval(timer);
  timer = setInterval(() => { refresh().catch(() => {}); }, refreshMilliseconds);
}

export function hide() {
  clearInterval(timer);
  timer = null;
  root = null;
}

function appleCalls(counts) {
  return counts.apple.reduce((sum, outcome) => sum + outcome.count, 0);
}

const metrics = [
  { key: 'requests', label: 'Requests', value: (c) => c.requests, show: format.count },
  { key: 'downloads', label: 'Downloads (pack files)', value: (c) => c.downloads, show: format.count },
  { key: 'bytesSent', label: 'Bytes sent', value: (c) => c.bytesSent, show: format.bytes },
  { key: 'appleCalls', label: 'Calls to Apple', value: appleCalls, show: format.count },
  { key: 'listNotModified', label: '304 share of the product lists', value: (c) => c.listNotModified, whole: (c) => c.listRequests, share: true },
];

/** Sums `counts` field by field (Apple outcomes by name). */
function sum(list) {
  const total = { requests: 0, downloads: 0, bytesSent: 0, packBytes: 0, listRequests: 0, listNotModified: 0, apple: [] };
  const outcomes = new Map();
  for (const counts of list) {
    for (const key of Object.keys(total)) if (key !== 'apple') total[key] += counts[key];
    for (const outcome of counts.apple) outcomes.set(outcome.outcome, (outcomes.get(outcome.outcome) ?? 0) + outcome.count);
  }
  total.apple = [...outcomes].sort().map(([outcome, count]) => ({ outcome, count }));
  return total;
}

/** The buckets of the span (the minute under way last), grouped for the chart: 60 of a minute, or 48 of 30 minutes. */
function series(report, minutes) {
  const buckets = [...report.minutes, report.current].slice(-minutes);
  if (minutes <= 60) return buckets.map((bucket) => ({ label: format.time(bucket.start), counts: bucket.counts }));
  const groups = [];
  for (let index = 0; index < buckets.length; index += 30) {
    const group = buckets.slice(index, index + 30);
    groups.push({ label: format.time(group[0].start), counts: sum(group.map((bucket) => bucket.counts)) });
  }
  return groups;
}

async function refresh() {
  const report = await call('GET', paths.traffic);
  if (!root) return;
  const minutes = span === 'hour' ? 60 : 1440;
  const points = series(report, minutes);
  const totals = sum(points.map((point) => point.counts));
  const cards = metrics.map((metric) => {
    const value = metric.value(totals);
    const text = metric.share ? format.percent(value, metric.whole(totals)) : metric.show(value);
    const values = points.map((point) => (metric.share
      ? (point.counts.listRequests ? (100 * point.counts.listNotModified) / point.counts.listRequests : 0)
      : metric.value(point.counts)));
    return h('article', { class: 'card', 'data-metric': metric.key, 'data-window': span, 'data-value': String(value) },
      h('h3', {}, metric.label),
      h('p', { class: 'figure' }, text, metric.share ? h('span', { class: 'hint' }, ` of ${format.count(metric.whole(totals))}`) : null),
      bars(values, points.map((point) => point.label), `${metric.label} over the last ${span}`,
        metric.share ? (v) => `${v.toFixed(1)} %` : metric.show));
  });
  const outcomes = totals.apple.length
    ? h('ul', { class: 'outcomes', id: 'apple-outcomes' }, totals.apple.map((outcome) =>
      h('li', { 'data-outcome': outcome.outcome, 'data-value': String(outcome.count) }, `${outcome.outcome}: ${format.count(outcome.count)}`)))
    : h('p', { class: 'hint' }, 'No calls to Apple in this span.');
  const disk = report.disk;
  replace(root,
    h('h2', { id: 'traffic-title' }, 'Traffic'),
    h('div', { class: 'segmented', role: 'group', 'aria-label': 'Span' },
      ['hour', 'day'].map((name) => h('button', {
        type: 'button', 'aria-pressed': String(span === name), 'data-span': name,
        onclick: () => { span = name; refresh(); },
      }, `Last ${name}`))),
    h('p', { class: 'hint', id: 'traffic-updated' }, `Updated ${format.clock(report.now)}; refreshed every 5 s.`),
    h('div', { class: 'cards' }, cards),
    h('section', { 'aria-labelledby': 'apple-heading' }, h('h3', { id: 'apple-heading' }, 'Apple calls by outcome'), outcomes),
    h('section', { 'aria-labelledby': 'disk-heading', id: 'disk', 'data-free': String(disk.contentFreeBytes), 'data-reserve': String(disk.contentReserveBytes) },
      h('h3', { id: 'disk-heading' }, 'Content volume'),
      gauge(disk.contentFreeBytes, disk.contentTotalBytes, disk.contentReserveBytes, 'Used space, with the reserve marked'),
      h('p', {}, `${format.bytes(disk.contentFreeBytes)} free of ${format.bytes(disk.contentTotalBytes)}; `
        + `publishing keeps ${format.bytes(disk.contentReserveBytes)} free (the marked reserve). Data volume: ${format.bytes(disk.dataFreeBytes)} free.`)));
}
