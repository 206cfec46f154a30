// Uploads a version's files: SHA-256 of each file computed here (crypto.subtle) and sent as X-Content-SHA256,
// pieces of 4 MiB sent with Content-Range, and after a network error or a reload the upload asks the server how
// much of each file arrived (GET on the file's upload path, Upload-Offset) and continues from there.
import { csrfHeaders, paths } from './api.js';

const pieceBytes = 4 * 1024 * 1024;
const storageKey = 'depot.upload';

class NetworkError extends Error {}

/** The unfinished upload this browser remembers (pack, version, file names and sizes; never a credential). */
export function remembered() {
  try {
    return JSON.parse(localStorage.getItem(storageKey) ?? 'null');
  } catch {
    return null;
  }
}

export function forget() {
  localStorage.removeItem(storageKey);
}

function hex(buffer) {
  return [...new Uint8Array(buffer)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * One version's upload. `files` are `{path, file}`; `onEvent` gets `{type, ...}`: `hashing`, `progress` (per file
 * and total bytes, rate, seconds left), `interrupted`, `resumed` (at an offset), `file-done`, `done`, `failed`.
 * Every event is also dispatched on `window` as a `depot-upload` CustomEvent.
 */
export class Upload {
  constructor(pack, version, files, onEvent) {
    this.pack = pack;
    this.version = version;
    this.files = files.map((entry) => ({ ...entry, size: entry.file.size, sent: 0, sha256: null }));
    this.total = this.files.reduce((sum, entry) => sum + entry.size, 0);
    this.onEvent = onEvent;
    this.samples = [];
  }

  emit(event) {
    this.onEvent(event);
    window.dispatchEvent(new CustomEvent('depot-upload', { detail: event }));
  }

  get sentTotal() {
    return this.files.reduce((sum, entry) => sum + entry.sent, 0);
  }

  async run() {
    localStorage.setItem(storageKey, JSON.stringify({
      pack: this.pack, version: this.version, files: this.files.map(({ path, size }) => ({ path, size })),
    }));
    for (const entry of this.files) {
      this.emit({ type: 'hashing', path: entry.path });
      if (globalThis.crypto?.subtle) entry.sha256 = hex(await crypto.subtle.digest('SHA-256', await entry.file.arrayBuffer()));
    }
    for (const entry of this.files) await this.send(entry);
    forget();
    this.emit({ type: 'done', bytes: this.total });
  }

  url(entry) {
    return paths.file(this.pack, this.version, entry.path);
  }

  /** How many bytes of `entry` the server holds (0 when it holds another size: that upload starts again). */
  async received(entry) {
    const response = await fetch(this.url(entry), { method: 'GET', credentials: 'same-origin', cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status} asking how much of ${entry.path} arrived`);
    const status = await response.json();
    if (status.complete) return status.size === entry.size ? entry.size : 0;
    return status.size === entry.size ? status.receivedBytes : 0;
  }

  async send(entry) {
    if (entry.size === 0) {
      await this.put(entry, entry.file, null);
      this.emit({ type: 'file-done', path: entry.path });
      return;
    }
    entry.sent = await this.withRetries(entry, () => this.received(entry));
    if (entry.sent > 0) this.emit({ type: 'resumed', path: entry.path, offset: entry.sent });
    while (entry.sent < entry.size) {
      const first = entry.sent;
      const last = Math.min(first + pieceBytes, entry.size) - 1;
      try {
        const answer = await this.put(entry, entry.file.slice(first, last + 1), `bytes ${first}-${last}/${entry.size}`);
        if (answer.status === 409 && answer.offset !== null) {
          // The server holds another length than this piece assumed (a request the browser retried on its own
          // after a dropped connection, say): continue where its copy ends.
          entry.sent = Number(answer.offset);
          this.emit({ type: 'resumed', path: entry.path, offset: entry.sent });
        } else if (answer.status === 409) {
          // Another piece of this file is still being taken in (a connection that dropped a moment ago).
          await sleep(500);
          entry.sent = await this.withRetries(entry, () => this.received(entry));
          this.emit({ type: 'resumed', path: entry.path, offset: entry.sent });
        } else if (answer.status >= 400) {
          throw new Error(answer.body?.error?.message ?? `HTTP ${answer.status} uploading ${entry.path}`);
        } else {
          entry.sent = last + 1;
        }
      } catch (error) {
        if (!(error instanceof NetworkError)) throw error;
        entry.sent = first;
        this.emit({ type: 'interrupted', path: entry.path, offset: first });
        entry.sent = await this.withRetries(entry, () => this.received(entry));
        this.emit({ type: 'resumed', path: entry.path, offset: entry.sent });
      }
      this.progress(entry);
    }
    this.emit({ type: 'file-done', path: entry.path });
  }

  /** Retries `work` after network errors, waiting 0.5 s, 1 s, 2 s ... up to 5 s between tries, for two minutes. */
  async withRetries(entry, work) {
    const deadline = Date.now() + 120000;
    for (let wait = 500; ; wait = Math.min(wait * 2, 5000)) {
      try {
        return await work();
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`The server is unreachable; the upload of ${entry.path} stopped at ${entry.sent} bytes.`);
        await sleep(wait);
      }
    }
  }

  put(entry, body, range) {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      const base = entry.sent;
      request.open('PUT', this.url(entry));
      request.setRequestHeader('Content-Type', 'application/octet-stream');
      for (const [name, value] of Object.entries(csrfHeaders())) request.setRequestHeader(name, value);
      if (range) request.setRequestHeader('Content-Range', range);
      if (entry.sha256) request.setRequestHeader('X-Content-SHA256', entry.sha256);
      request.upload.addEventListener('progress', (event) => {
        entry.sent = base + event.loaded;
        this.progress(entry);
      });
      request.addEventListener('load', () => {
        let parsed = null;
        try {
          parsed = JSON.parse(request.responseText);
        } catch {
          parsed = null;
        }
        resolve({ status: request.status, body: parsed, offset: request.getResponseHeader('Upload-Offset') });
      });
      request.addEventListener('error', () => reject(new NetworkError('network error')));
      request.addEventListener('abort', () => reject(new NetworkError('aborted')));
      request.send(body);
    });
  }

  progress(entry) {
    const now = performance.now();
    const sent = this.sentTotal;
    this.samples.push({ now, sent });
    while (this.samples.length > 2 && now - this.samples[0].now > 5000) this.samples.shift();
    const first = this.samples[0];
    const seconds = (now - first.now) / 1000;
    const rate = seconds > 0.2 ? Math.max(0, sent - first.sent) / seconds : 0;
    this.emit({
      type: 'progress', path: entry.path, fileSent: entry.sent, fileSize: entry.size, sent, total: this.total, rate,
      secondsLeft: rate > 0 ? (this.total - sent) / rate : Infinity,
    });
  }
}

/** The files of a drop: plain files, and the contents of dropped folders (paths relative to the folder). */
export async function droppedFiles(dataTransfer) {
  const entries = [...dataTransfer.items].map((item) => item.webkitGetAsEntry?.()).filter(Boolean);
  if (entries.length === 0) return [...dataTransfer.files].map((file) => ({ path: file.name, file }));
  const out = [];
  for (const entry of entries) {
    if (entry.isDirectory) {
      await walkFolder(entry, '', out);
    } else {
      const file = await new Promise((resolve, reject) => { entry.file(resolve, reject); });
      out.push({ path: file.name, file });
    }
  }
  return out;
}

async function walkFolder(directory, prefix, out) {
  const reader = directory.createReader();
  for (;;) {
    const batch = await new Promise((resolve, reject) => { reader.readEntries(resolve, reject); });
    if (batch.length === 0) return;
    for (const child of batch) {
      if (child.isDirectory) {
        await walkFolder(child, `${prefix}${child.name}/`, out);
      } else {
        const file = await new Promise((resolve, reject) => { child.file(resolve, reject); });
        out.push({ path: prefix + file.name, file });
      }
    }
  }
}

/** The files of an `<input type=file>`; a folder input's paths drop the folder's own name. */
export function chosenFiles(input) {
  return [...input.files].map((file) => {
    const relative = file.webkitRelativePath;
    return { path: relative ? relative.split('/').slice(1).join('/') : file.name, file };
  });
}
