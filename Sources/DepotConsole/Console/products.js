// Products: the catalog as a table; edit a title and description; retire and un-retire; a new product with its
// first pack (the upload form of the packs section, filled in).
import { call, paths } from './api.js';
import { h, replace, table, say, confirmAction, busy } from './dom.js';
import * as format from './format.js';
import { startNewProduct } from './packs.js';

const types = ['non-consumable', 'consumable', 'non-renewing', 'auto-renewable'];
let root = null;

export async function show(section) {
  root = section;
  replace(section, h('h2', { id: 'products-title' }, 'Products'), h('p', { class: 'hint' }, 'Loading…'));
  await render();
}

async function render() {
  const [{ products }, { packs }] = await Promise.all([call('GET', paths.products), call('GET', paths.packs)]);
  const packsByID = new Map(packs.map((pack) => [pack.id, pack]));
  const rows = products.map((product) => {
    const pack = product.pack ? packsByID.get(product.pack) : undefined;
    const live = pack?.versions.find((version) => version.state === 'live');
    return {
      attributes: { 'data-product': product.id },
      cells: [
        product.id,
        product.type,
        h('span', { 'data-field': 'title' }, product.title),
        h('span', { class: `badge ${product.status}`, 'data-field': 'status' }, product.status),
        product.pack ?? '—',
        live ? String(live.version) : '—',
        live ? h('span', { title: `${format.count(live.bytes)} bytes` }, format.bytes(live.bytes)) : '—',
        h('span', { class: 'row-actions' },
          h('button', { type: 'button', class: 'quiet', onclick: () => edit(product) }, 'Edit'),
          product.status === 'retired'
            ? h('button', { type: 'button', 'data-action': 'unretire', onclick: (event) => setStatus(event.target, product, false) }, 'Un-retire')
            : h('button', { type: 'button', 'data-action': 'retire', onclick: (event) => setStatus(event.target, product, true) }, 'Retire')),
      ],
    };
  });
  replace(root,
    h('h2', { id: 'products-title' }, 'Products'),
    table(`${products.length} products (live and retired)`,
      ['ID', 'Type', 'Title', 'Status', 'Pack', 'Live version', 'Download size', 'Actions'], rows, { id: 'products-table' }),
    h('div', { id: 'product-editor' }),
    newProductForm());
}

async function setStatus(button, product, retire) {
  const ok = await confirmAction(retire ? `Retire ${product.id}?` : `Un-retire ${product.id}?`, retire
    ? ['The product leaves the product lists (products_v1.json and products_v2.json); it can no longer be bought.',
      'Players who bought it keep their access and can still download its pack.']
    : ['The product comes back into the product lists and can be bought again.'], retire ? 'Retire' : 'Un-retire');
  if (!ok) return;
  await busy(button, async () => {
    const answer = await call('POST', retire ? paths.retire(product.id) : paths.unretire(product.id));
    say(`${answer.id} is ${answer.status}.`);
    await render();
  });
}

function edit(product) {
  const title = h('input', { id: 'edit-title', value: product.title, required: true, maxlength: 200 });
  const description = h('textarea', { id: 'edit-description', rows: 3 });
  description.value = product.description ?? '';
  const form = h('form', { class: 'panel', 'aria-labelledby': 'edit-heading' },
    h('h3', { id: 'edit-heading' }, `Edit ${product.id}`),
    h('label', { for: 'edit-title' }, 'Title'), title,
    h('label', { for: 'edit-description' }, 'Description'), description,
    h('div', { class: 'actions' },
      h('button', { type: 'button', class: 'quiet', onclick: () => replace(document.getElementById('product-editor')) }, 'Cancel'),
      h('button', { type: 'submit' }, 'Save')));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const changes = [];
    if (title.value !== product.title) changes.push(`Title: “${product.title}” → “${title.value}”.`);
    if (description.value !== (product.description ?? '')) changes.push('The description changes.');
    if (changes.length === 0) {
      say('Nothing changed.');
      return;
    }
    const ok = await confirmAction(`Save ${product.id}?`, [...changes, 'The catalog is rewritten; the product lists show the new text within 2 s.'], 'Save');
    if (!ok) return;
    await busy(event.submitter ?? form.querySelector('[type=submit]'), async () => {
      await call('PATCH', paths.product(product.id), { title: title.value, description: description.value });
      say(`${product.id} saved.`);
      await render();
    });
  });
  replace(document.getElementById('product-editor'), form);
  title.focus();
}

function newProductForm() {
  const field = (id, label, input) => [h('label', { for: id }, label), input];
  const form = h('form', { class: 'panel', id: 'new-product', 'aria-labelledby': 'new-product-heading' },
    h('h3', { id: 'new-product-heading' }, 'New product with its first pack'),
    field('new-id', 'Product ID', h('input', { id: 'new-id', required: true, pattern: '[A-Za-z0-9._\\-]{1,255}', placeholder: 'com.example.game.level9' })),
    field('new-type', 'Type', h('select', { id: 'new-type' }, types.map((type) => h('option', { value: type }, type)))),
    field('new-title', 'Title', h('input', { id: 'new-title', required: true })),
    field('new-description', 'Description', h('textarea', { id: 'new-description', rows: 2 })),
    field('new-pack', 'Pack ID', h('input', { id: 'new-pack', required: true, pattern: '[A-Za-z0-9_\\-][A-Za-z0-9._\\-]{0,127}', placeholder: 'level9' })),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Continue to upload')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = (id) => document.getElementById(id).value;
    startNewProduct({ id: value('new-id'), type: value('new-type'), title: value('new-title'), description: value('new-description'), pack: value('new-pack') });
  });
  return form;
}
