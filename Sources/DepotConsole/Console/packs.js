// Packs: every version with its size, files, chunking, state and publish time; promote, roll back, prune; and
// the upload of a new version (dragged files or a folder), then publish or stage it.
import { call, paths } from './api.js';
import { h, replace, table, say, confirmAction, busy } from './dom.js';
import * as format from './format.js';
import { Upload, remembered, forget, droppedFiles, chosenFiles } from './upload.js';

let root = null;
let selected = null;
/** The product a new pack is for (from the products section's form), until its first version is published. */
let newProduct = null;

export async function show(section) {
  root = section;
  replace(section, h('h2', { id: 'packs-title' }, 'Packs'), h('p', { class: 'hint' }, 'Loading…'));
  await render();
}

/** Opens the upload of version 1 of a new product's pack. */
export function startNewProduct(product) {
  newProduct = product;
  selected = product.pack;
  if (location.hash === '#packs') render();
  else location.hash = '#packs';
}

async function render() {
  const [{ packs }, { products }] = await Promise.all([call('GET', paths.packs), call('GET', paths.products)]);
  const rows = packs.map((pack) => ({
    attributes: { 'data-pack': pack.id },
    cells: [
      h('button', { type: 'button', class: 'link', onclick: () => { selected = pack.id; render(); } }, pack.id),
      pack.live === null ? '—' : String(pack.live),
      String(pack.versions.length),
      String(pack.versions.filter((version) => version.state === 'staged').length),
    ],
  }));
  const pack = packs.find((candidate) => candidate.id === selected);
  const product = products.find((candidate) => candidate.pack === selected)
    ?? (newProduct && newProduct.pack === selected ? newProduct : null);
  replace(root,
    h('h2', { id: 'packs-title' }, 'Packs'),
    interruptedNotice(),
    table(`${packs.length} packs`, ['Pack', 'Live version', 'Versions', 'Staged'], rows, { id: 'packs-table' }),
    selected ? detail(selected, pack, product) : h('p', { class: 'hint' }, 'Choose a pack to see its versions and upload a new one.'));
}

function interruptedNotice() {
  const upload = remembered();
  if (!upload) return null;
  return h('div', { class: 'notice', id: 'interrupted-upload', role: 'note' },
    h('p', {}, `An upload of pack ${upload.pack} version ${upload.version} did not finish (${upload.files.map((file) => file.path).join(', ')}). `
      + 'Choose the same files again: it continues where it stopped.'),
    h('div', { class: 'actions' },
      h('button', { type: 'button', onclick: () => { selected = upload.pack; render(); } }, `Continue ${upload.pack} version ${upload.version}`),
      h('button', { type: 'button', class: 'quiet', onclick: () => { forget(); render(); } }, 'Forget it')));
}

function detail(packID, pack, product) {
  const versions = pack?.versions ?? [];
  const live = pack?.live ?? null;
  const rows = [...versions].sort((a, b) => b.version - a.version).map((version) => ({
    attributes: { 'data-version': version.version, 'data-state': version.state },
    cells: [
      String(version.version),
      h('span', { class: `badge ${version.state}` }, version.state),
      String(version.files),
      h('span', { title: `${format.count(version.bytes)} bytes` }, format.bytes(version.bytes)),
      format.chunking(version.chunking),
      format.time(version.published),
      versionActions(packID, version, live),
    ],
  }));
  const next = Math.max(0, ...versions.map((version) => version.version)) + 1;
  return h('div', { class: 'pack-detail', id: 'pack-detail', 'data-pack': packID },
    h('h3', {}, `Pack ${packID}`, product ? h('span', { class: 'hint' }, ` — ${product.id}: ${product.title}`) : null),
    versions.length ? table(`Versions of ${packID}`, ['Version', 'State', 'Files', 'Size', 'Chunking', 'Published', 'Actions'], rows, { id: 'versions-table' })
      : h('p', { class: 'hint' }, 'No version yet.'),
    versions.length ? pruneForm(packID) : null,
    product ? uploadPanel(packID, next, product) : h('p', { class: 'hint' }, 'No product unlocks this pack; add one in Products first.'));
}

function versionActions(packID, version, live) {
  if (version.state === 'staged') {
    return h('button', { type: 'button', 'data-action': 'promote', onclick: (event) => promote(event.target, packID, version.version, live) }, 'Promote');
  }
  if (version.state === 'previous') {
    return h('button', { type: 'button', 'data-action': 'rollback', class: 'quiet', onclick: (event) => rollback(event.target, packID, version.version, live) }, 'Roll back to this');
  }
  return '';
}

async function promote(button, packID, version, live) {
  const ok = await confirmAction(`Promote ${packID} version ${version}?`, [
    `Version ${version} becomes live${live === null ? '' : ` instead of version ${live}`}.`,
    'products_v2.json and new downloads show it within 2 s; players on an older version update by delta.',
  ], 'Promote');
  if (!ok) return;
  await busy(button, async () => {
    const answer = await call('POST', paths.promote(packID, version));
    say(`${answer.pack} version ${answer.version} is live.`);
    await render();
  });
}

async function rollback(button, packID, version, live) {
  const ok = await confirmAction(`Roll ${packID} back to version ${version}?`, [
    `A new version with version ${version}'s files becomes live, replacing version ${live}.`,
    `Version ${live} stays on disk (as previous) until it is pruned; players update to the new version by delta.`,
  ], 'Roll back');
  if (!ok) return;
  await busy(button, async () => {
    const answer = await call('POST', paths.rollback(packID), { to: version });
    say(`${answer.pack} version ${answer.version} (the files of version ${version}) is live.`);
    await render();
  });
}

function pruneForm(packID) {
  const keep = h('input', { id: 'prune-keep', type: 'number', min: 1, value: 2, required: true });
  const form = h('form', { class: 'inline', id: 'prune-form' },
    h('label', { for: 'prune-keep' }, 'Keep the newest'), keep, h('span', {}, 'versions'),
    h('button', { type: 'submit', class: 'quiet' }, 'Prune…'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector('button');
    await busy(button, async () => {
      const body = { keep: Number(keep.value), pack: packID };
      const preview = await call('POST', paths.prune, { ...body, dryRun: true });
      if (preview.removed.length === 0) {
        say(`Nothing to prune in ${packID}: the live and staged versions are never removed.`);
        return;
      }
      const lines = preview.removed.map((entry) => `Version ${entry.version} (${format.bytes(entry.bytes)}) is deleted.`);
      if (!await confirmAction(`Prune ${packID}?`, [...lines, 'The live and staged versions stay.'], 'Prune')) return;
      const answer = await call('POST', paths.prune, { ...body, dryRun: false });
      say(`Pruned ${answer.removed.length} version(s) of ${packID}.`);
      await render();
    });
  });
  return form;
}

function uploadPanel(packID, version, product) {
  const progress = h('div', { id: 'upload-progress', 'aria-live': 'polite' });
  const list = h('ul', { id: 'upload-files', class: 'files' });
  const fileInput = h('input', { type: 'file', id: 'upload-input', multiple: true });
  const folderInput = h('input', { type: 'file', id: 'upload-folder', webkitdirectory: true, multiple: true });
  const versionInput = h('input', { type: 'number', id: 'upload-version', min: 1, value: version });
  const publish = h('div', { id: 'publish-panel' });
  let chosen = [];

  const choose = (files) => {
    chosen = files;
    replace(list, files.map((entry) => h('li', { 'data-path': entry.path },
      h('span', { class: 'name' }, entry.path), h('span', { class: 'size' }, format.bytes(entry.file.size)),
      h('progress', { max: entry.file.size || 1, value: 0, 'aria-label': `${entry.path} uploaded` }))));
    start.disabled = files.length === 0;
  };
  const start = h('button', { type: 'button', id: 'upload-start', disabled: true }, 'Upload');
  const zone = h('div', { class: 'drop-zone', id: 'drop-zone', tabindex: 0, role: 'group', 'aria-label': 'Drop files or a folder here' },
    h('p', {}, 'Drop files or a folder here, or choose them:'),
    h('label', { for: 'upload-input' }, 'Files'), fileInput,
    h('label', { for: 'upload-folder' }, 'A folder'), folderInput);
  zone.addEventListener('dragover', (event) => { event.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', async (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    choose(await droppedFiles(event.dataTransfer));
  });
  fileInput.addEventListener('change', () => choose(chosenFiles(fileInput)));
  folderInput.addEventListener('change', () => choose(chosenFiles(folderInput)));

  start.addEventListener('click', () => busy(start, async () => {
    const upload = new Upload(packID, Number(versionInput.value), chosen, (event) => showProgress(event, list, progress));
    await upload.run();
    say(`Uploaded ${chosen.length} file(s) into ${packID} version ${upload.version}.`);
    replace(publish, publishForm(packID, upload.version, product));
  }));

  return h('section', { class: 'panel', 'aria-labelledby': 'upload-heading' },
    h('h4', { id: 'upload-heading' }, `Upload a new version of ${packID}`),
    h('label', { for: 'upload-version' }, 'Version'), versionInput,
    zone, list, h('div', { class: 'actions' }, start), progress, publish);
}

function showProgress(event, list, progress) {
  if (event.type === 'progress') {
    const bar = list.querySelector(`li[data-path="${CSS.escape(event.path)}"] progress`);
    if (bar) bar.value = event.fileSent;
    replace(progress,
      h('progress', { id: 'upload-total', max: event.total || 1, value: event.sent, 'aria-label': 'Total uploaded' }),
      h('p', { id: 'upload-figures' }, `${format.bytes(event.sent)} of ${format.bytes(event.total)} · ${format.rate(event.rate)} · `
        + `${format.duration(event.secondsLeft)} left`));
  } else if (event.type === 'interrupted') {
    say(`The connection dropped while sending ${event.path}; retrying…`, 'warning');
  } else if (event.type === 'resumed') {
    say(`Continuing ${event.path} from ${format.bytes(event.offset)}.`);
  } else if (event.type === 'hashing') {
    say(`Computing the SHA-256 of ${event.path}…`);
  }
}

function publishForm(packID, version, product) {
  const chunking = h('select', { id: 'publish-chunking' }, h('option', { value: 'content' }, 'content-defined (small updates)'),
    h('option', { value: 'fixed' }, 'fixed 1 MiB'));
  const send = async (button, stage) => {
    const lines = stage
      ? [`Version ${version} of ${packID} is published but not live: the product lists do not change.`,
        'Testers fetch it with ?staged=true; promote it to make it live.']
      : [`Version ${version} of ${packID} becomes live for ${product.id} (“${product.title}”).`,
        'products_v2.json and new downloads show it within 2 s; players on an older version update by delta.'];
    if (!await confirmAction(stage ? `Stage version ${version}?` : `Publish version ${version}?`, lines, stage ? 'Stage' : 'Publish')) return;
    await busy(button, async () => {
      const answer = await call('POST', paths.publish(packID, version), {
        id: product.id, type: product.type, title: product.title, description: product.description, chunking: chunking.value, stage,
      });
      if (newProduct && newProduct.pack === packID) newProduct = null;
      say(`${answer.pack} version ${answer.version} is ${stage ? 'staged' : 'live'} (${answer.files} files, ${format.bytes(answer.downloadBytes)}).`);
      await render();
    });
  };
  const discard = async (button) => {
    if (!await confirmAction(`Discard the upload of version ${version}?`, ['The uploaded files are deleted; nothing was published.'], 'Discard')) return;
    await busy(button, async () => {
      await call('DELETE', paths.upload(packID, version));
      say(`The upload of ${packID} version ${version} was discarded.`);
      await render();
    });
  };
  return h('div', { class: 'publish' },
    h('label', { for: 'publish-chunking' }, 'Chunking'), chunking,
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'publish-live', onclick: (event) => send(event.target, false) }, 'Publish live'),
      h('button', { type: 'button', id: 'publish-stage', onclick: (event) => send(event.target, true) }, 'Stage'),
      h('button', { type: 'button', class: 'quiet', id: 'publish-discard', onclick: (event) => discard(event.target) }, 'Discard upload')));
}
