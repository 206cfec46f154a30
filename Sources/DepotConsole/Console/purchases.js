// Purchases: the support view. Search by transaction ID or account; what was granted, revoked, delivered, and the
// answers to Apple's refund requests; a support
// revoke or restore, each with a confirmation that says what will change. The same admin API a script uses.
import { call, paths } from './api.js';
import { h, replace, table, say, confirmAction, busy } from './dom.js';
import * as format from './format.js';

let root = null;
/** The last search (`{transaction}` or `{account}`), run again after a decision. */
let query = null;

export async function show(section) {
  root = section;
  render([], null);
  if (query) await search(query);
}

function searchForm() {
  const kind = h('select', { id: 'purchase-kind', 'aria-label': 'Search by' },
    h('option', { value: 'transaction' }, 'Transaction ID'), h('option', { value: 'account' }, 'Account'));
  if (query) kind.value = Object.keys(query)[0];
  const value = h('input', { id: 'purchase-query', required: true, maxlength: 256, autocomplete: 'off',
    placeholder: 'any transaction of the purchase, or an app account', value: query ? Object.values(query)[0] : undefined });
  const form = h('form', { class: 'panel', id: 'purchase-search', role: 'search', 'aria-labelledby': 'purchases-title' },
    h('label', { for: 'purchase-query' }, 'Find a purchase'),
    h('div', { class: 'inline' }, kind, value, h('button', { type: 'submit' }, 'Search')));
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = value.value.trim();
    if (!text) return;
    busy(event.submitter ?? form.querySelector('[type=submit]'), () => search({ [kind.value]: text }));
  });
  return form;
}

async function search(next) {
  query = next;
  const answer = await call('GET', paths.purchases(query));
  render(answer.purchases, answer.next);
  const found = answer.purchases.length;
  say(found === 0 ? 'No purchase found.' : `${found}${answer.next ? '+' : ''} purchase${found === 1 ? '' : 's'} found.`);
}

async function more(button, cursor) {
  await busy(button, async () => {
    const answer = await call('GET', paths.purchases({ ...query, after: cursor }));
    const list = document.getElementById('purchase-results');
    for (const purchase of answer.purchases) list.append(card(purchase));
    button.closest('.actions').replaceWith(moreButton(answer.next) ?? '');
  });
}

function moreButton(cursor) {
  if (!cursor) return null;
  return h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'quiet', id: 'purchases-more', onclick: (event) => more(event.target, cursor) }, 'More purchases'));
}

function render(purchases, next) {
  replace(root,
    h('h2', { id: 'purchases-title' }, 'Purchases'),
    searchForm(),
    h('div', { id: 'purchase-results' }, purchases.map(card)),
    moreButton(next),
    query && purchases.length === 0 ? h('p', { class: 'hint', id: 'purchase-none' }, 'No purchase matches.') : null);
}

function card(purchase) {
  const revoked = purchase.state === 'revoked';
  const grants = purchase.grants.map((grant) => ({
    cells: [grant.transactionId, grant.productId, format.time(grant.purchased), format.time(grant.expires), grant.source,
      grant.revoked ? format.time(grant.revoked) : '—'],
  }));
  const revocations = purchase.revocations.map((revocation) => ({
    attributes: { 'data-by': revocation.by },
    cells: [format.time(revocation.at), revocation.reason, revocation.by, revocation.transactionId ?? 'the whole purchase',
      revocation.restored ? `restored ${format.time(revocation.restored)}${revocation.restoredBy ? ` by ${revocation.restoredBy}` : ''}` : 'in force'],
  }));
  const delivered = (purchase.delivery?.versions ?? []).map((sent) => ({
    attributes: { 'data-version': `${sent.pack}/${sent.version}`, 'data-complete': String(sent.complete === true) },
    cells: [`${sent.pack} version ${sent.version}`,
      sent.totalChunks === null ? String(sent.chunks) : `${sent.chunks} of ${sent.totalChunks}`,
      h('span', { title: `${format.count(sent.deliveredBytes)} bytes` },
        sent.totalBytes === null ? format.bytes(sent.deliveredBytes) : `${format.bytes(sent.deliveredBytes)} of ${format.bytes(sent.totalBytes)}`),
      format.bytes(sent.sentBytes), sent.complete === true ? 'yes' : sent.complete === false ? 'no' : '—', format.time(sent.lastSent)],
  }));
  const answers = (purchase.consumptionAnswers ?? []).map((answer) => ({
    cells: [format.time(answer.queued), answer.transactionId, answer.state,
      answer.deliveryStatus ? [answer.deliveryStatus, answer.consumptionPercentage ?? null, answer.refundPreference ?? null].filter((part) => part !== null).join(' ') : '—',
      answer.finished ? format.time(answer.finished) : `${answer.attempts} attempt${answer.attempts === 1 ? '' : 's'}`],
  }));
  const accounts = purchase.accounts.length === 0 ? 'none'
    : purchase.accounts.map((binding) => `${binding.account} (since ${format.time(binding.bound)})`).join(', ');
  return h('article', { class: 'panel purchase', 'data-purchase': purchase.originalTransactionId, 'data-state': purchase.state },
    h('h3', {}, `Purchase ${purchase.originalTransactionId} `,
      h('span', { class: `badge ${revoked ? 'revoked' : 'live'}`, 'data-field': 'state' }, purchase.state)),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Product'), h('dd', {}, purchase.productId, purchase.pack ? ` (pack ${purchase.pack})` : ' (no pack)'),
      h('dt', {}, 'Environment'), h('dd', {}, purchase.environment),
      h('dt', {}, 'Purchased'), h('dd', {}, format.time(purchase.purchased)),
      h('dt', {}, 'Account'), h('dd', {}, accounts)),
    table('Granted: the transactions of this purchase', ['Transaction', 'Product', 'Purchased', 'Expires', 'Source', 'Revoked'], grants,
      { class: 'grants' }),
    revocations.length === 0 ? h('p', { class: 'hint' }, 'Never revoked.')
      : table('Revocations', ['When', 'Reason', 'By', 'Of', 'Now'], revocations, { class: 'revocations' }),
    delivered.length === 0 ? h('p', { class: 'hint', 'data-field': 'delivery' }, 'Nothing delivered yet.')
      : table('Delivered: chunks sent whole to this purchase’s tokens', ['Version', 'Chunks', 'Bytes', 'Sent in all', 'Complete', 'Last sent'],
        delivered, { class: 'delivery' }),
    answers.length === 0 ? null
      : table('Answers to Apple’s refund requests', ['Asked', 'Transaction', 'State', 'Answer', 'Done'], answers, { class: 'consumption' }),
    h('div', { class: 'actions' }, revoked
      ? h('button', { type: 'button', 'data-action': 'restore', onclick: (event) => decide(event.target, purchase, 'restore') }, 'Restore access')
      : h('button', { type: 'button', 'data-action': 'revoke', onclick: (event) => decide(event.target, purchase, 'revoke') }, 'Revoke access')));
}

async function decide(button, purchase, decision) {
  const what = purchase.pack ? `pack ${purchase.pack}` : purchase.productId;
  const lines = decision === 'revoke'
    ? [`Access to ${what} is taken away from purchase ${purchase.originalTransactionId}: every download token issued for it is refused as revoked (403), on every instance within a second.`,
      'It is recorded as a support decision (by admin), like a refund; the App Store is not told and no money is returned.',
      'Restore gives the access back.']
    : [`Access to ${what} comes back for purchase ${purchase.originalTransactionId}: its download tokens are honoured again on every instance within a second.`,
      `Every revocation in force is lifted${purchase.revocations.some((r) => r.by === 'apple' && !r.restored) ? ', Apple’s refund included' : ''}; the history stays.`];
  const ok = await confirmAction(decision === 'revoke' ? `Revoke purchase ${purchase.originalTransactionId}?` : `Restore purchase ${purchase.originalTransactionId}?`,
    lines, decision === 'revoke' ? 'Revoke' : 'Restore');
  if (!ok) return;
  await busy(button, async () => {
    const answer = await call('POST', decision === 'revoke' ? paths.revoke(purchase.originalTransactionId) : paths.restore(purchase.originalTransactionId));
    const current = document.querySelector(`[data-purchase="${CSS.escape(answer.originalTransactionId)}"]`);
    current?.replaceWith(card(answer));
    say(`Purchase ${answer.originalTransactionId} is ${answer.state}.`);
  });
}
