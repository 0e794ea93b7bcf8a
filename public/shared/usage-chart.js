// Requests per UTC day as stacked bars (successful, errors) with labelled axes: inline SVG, no
// library, drawn at the container's own width so the labels keep their size on a phone.

const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** A "nice" axis maximum (1, 2 or 5 times a power of ten) at or above `peak`, and its step. */
function axis(peak) {
  const rough = Math.max(1, peak) / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(
    1,
    [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough),
  );
  return { step, max: step * Math.ceil(Math.max(1, peak) / step) };
}

const drawn = new WeakMap();

/**
 * Draws `daily` ([{ date, requests, errors }]) into `container`, and again when its width changes (a
 * panel not shown yet has no width: it is drawn again once it has one).
 */
export function drawChart(container, daily) {
  if (!drawn.has(container)) {
    new ResizeObserver(() => {
      const last = drawn.get(container);
      if (last?.days && container.clientWidth > 0 && container.clientWidth !== last.width) {
        drawChart(container, last.days);
      }
    }).observe(container);
  }
  drawn.set(container, { days: daily, width: container.clientWidth });
  const width = Math.max(280, Math.round(container.clientWidth || 720));
  const height = width < 500 ? 180 : 220;
  const left = 44;
  const bottom = 24;
  const top = 8;
  const plotWidth = width - left - 8;
  const plotHeight = height - top - bottom;
  const { step, max } = axis(Math.max(0, ...daily.map((d) => d.requests)));
  const chart = svg('svg', { viewBox: `0 0 ${width} ${height}`, 'aria-hidden': 'true' });
  for (let value = 0; value <= max; value += step) {
    const y = top + plotHeight - (value / max) * plotHeight;
    chart.append(svg('line', { x1: left, x2: width - 8, y1: y, y2: y, class: 'grid' }));
    chart.append(svg('text', { x: left - 6, y: y + 4, 'text-anchor': 'end' }, value.toLocaleString()));
  }
  const slot = plotWidth / Math.max(1, daily.length);
  const labelEvery = Math.ceil(daily.length / Math.max(2, Math.floor(plotWidth / 70)));
  daily.forEach((day, i) => {
    const x = left + i * slot + slot * 0.15;
    const barWidth = Math.max(1, slot * 0.7);
    const okHeight = ((day.requests - day.errors) / max) * plotHeight;
    const errorHeight = (day.errors / max) * plotHeight;
    const base = top + plotHeight;
    const group = svg('g', {});
    group.append(svg('title', {}, `${day.date}: ${day.requests} requests, ${day.errors} errors`));
    group.append(svg('rect', { x, width: barWidth, y: base - okHeight, height: okHeight, class: 'ok' }));
    group.append(
      svg('rect', {
        x,
        width: barWidth,
        y: base - okHeight - errorHeight,
        height: errorHeight,
        class: 'failed',
      }),
    );
    chart.append(group);
    if (i % labelEvery === 0) {
      chart.append(
        svg('text', { x: x + barWidth / 2, y: height - 6, 'text-anchor': 'middle' }, day.date.slice(5)),
      );
    }
  });
  container.replaceChildren(chart);
  container.setAttribute(
    'aria-label',
    `Requests per day from ${daily[0]?.date ?? ''} to ${daily.at(-1)?.date ?? ''}: ${daily
      .map((d) => `${d.date} ${d.requests}`)
      .join(', ')}`,
  );
}
