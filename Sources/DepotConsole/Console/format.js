// Numbers, sizes, rates and times for people.

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `1536` → `1.5 KiB`. */
export function bytes(value) {
  let size = Number(value);
  let unit = 0;
  while (Math.abs(size) >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${size} B` : `${size.toFixed(size >= 100 ? 0 : 1)} ${units[unit]}`;
}

/** Bytes per second. */
export function rate(bytesPerSecond) {
  return `${bytes(Math.round(bytesPerSecond))}/s`;
}

/** Seconds as `1 h 02 min`, `3 min 05 s`, `12 s`. */
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '—';
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${s} s`;
}

/** An integer with thousands separators. */
export function count(value) {
  return Number(value).toLocaleString('en-US');
}

/** A share as a percentage, `—` without a whole. */
export function percent(part, whole) {
  return whole > 0 ? `${((100 * part) / whole).toFixed(1)} %` : '—';
}

/** A version's chunking (`{"method": "content", "average": N, ...}` or `{"method": "fixed", "size": N}`). */
export function chunking(value) {
  if (!value) return '—';
  return value.method === 'content' ? `content-defined, ${bytes(value.average)} average` : `fixed, ${bytes(value.size)}`;
}

/** An ISO 8601 time as the local time of day, to the second. */
export function clock(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString('en-GB');
}

/** An ISO 8601 time as local date and time. */
export function time(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}
