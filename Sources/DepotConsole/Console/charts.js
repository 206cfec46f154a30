// Small SVG charts drawn here (no library, nothing fetched from elsewhere).
const svgNS = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(svgNS, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return element;
}

/**
 * Bars of `values` (one per time bucket, oldest first) labelled by `labels`, scaled to the largest. `describe`
 * names the chart for screen readers; each bar has a tooltip (`<title>`).
 */
export function bars(values, labels, describe, formatValue = String) {
  const width = 300;
  const height = 80;
  const max = Math.max(1, ...values);
  const step = width / Math.max(1, values.length);
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height + 14}`, class: 'chart', role: 'img', 'aria-label': describe });
  chart.append(svg('line', { x1: 0, y1: height, x2: width, y2: height, class: 'axis' }));
  values.forEach((value, index) => {
    const barHeight = (value / max) * height;
    chart.append(svg('rect', {
      x: (index * step + step * 0.1).toFixed(2), y: (height - barHeight).toFixed(2),
      width: Math.max(0.5, step * 0.8).toFixed(2), height: barHeight.toFixed(2), class: 'bar',
    }, svg('title', {}, `${labels[index]}: ${formatValue(value)}`)));
  });
  chart.append(svg('text', { x: 0, y: height + 12, class: 'label' }, labels[0] ?? ''));
  chart.append(svg('text', { x: width, y: height + 12, class: 'label end' }, `max ${formatValue(max)}`));
  return chart;
}

/** A horizontal gauge: `used` of `total`, with the reserve marked at `total − reserve`. */
export function gauge(free, total, reserve, describe) {
  const width = 300;
  const used = Math.max(0, total - free);
  const scale = (value) => (total > 0 ? (value / total) * width : 0);
  return svg('svg', { viewBox: `0 0 ${width} 24`, class: 'chart gauge', role: 'img', 'aria-label': describe },
    svg('rect', { x: 0, y: 4, width, height: 16, class: 'track' }),
    svg('rect', { x: 0, y: 4, width: scale(used).toFixed(2), height: 16, class: 'used' }),
    svg('rect', { x: (width - scale(reserve)).toFixed(2), y: 4, width: scale(reserve).toFixed(2), height: 16, class: 'reserve' },
      svg('title', {}, 'the reserve publishing keeps free')),
    svg('line', { x1: (width - scale(reserve)).toFixed(2), y1: 0, x2: (width - scale(reserve)).toFixed(2), y2: 24, class: 'reserve-mark' }));
}
