// The console's shell: sign-in and sign-out, and the sections (one visible at a time, chosen by the URL's hash).
import { call, paths, setCSRFToken, APIError } from './api.js';
import { say } from './dom.js';
import * as products from './products.js';
import * as packs from './packs.js';
import * as traffic from './traffic.js';
import * as purchases from './purchases.js';

const sections = { products, packs, purchases, traffic };
let current = null;

function showOnly(id) {
  for (const view of document.querySelectorAll('.view')) view.hidden = view.id !== id;
}

async function route() {
  const name = sections[location.hash.slice(1)] ? location.hash.slice(1) : 'products';
  if (current && current !== sections[name]) current.hide?.();
  current = sections[name];
  showOnly(`view-${name}`);
  for (const link of document.querySelectorAll('#nav a')) {
    if (link.dataset.view === name) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  await current.show(document.getElementById(`view-${name}`));
}

function signedIn(answer) {
  setCSRFToken(answer.csrfToken);
  document.getElementById('nav').hidden = false;
  document.getElementById('sign-out').hidden = false;
  document.body.dataset.signedIn = 'true';
  window.addEventListener('hashchange', route);
  return route();
}

function signedOut(message) {
  setCSRFToken(null);
  current?.hide?.();
  current = null;
  window.removeEventListener('hashchange', route);
  document.getElementById('nav').hidden = true;
  document.getElementById('sign-out').hidden = true;
  document.body.dataset.signedIn = 'false';
  showOnly('view-sign-in');
  if (message) say(message);
  document.getElementById('sign-in-token').focus();
}

async function signIn(event) {
  event.preventDefault();
  const input = document.getElementById('sign-in-token');
  const error = document.getElementById('sign-in-error');
  const button = event.target.querySelector('button');
  const token = input.value;
  // The token leaves the field at once: it is sent in this one request body and kept nowhere.
  input.value = '';
  error.textContent = '';
  button.disabled = true;
  try {
    const answer = await call('POST', paths.session, { token });
    say('Signed in.');
    await signedIn(answer);
  } catch (failure) {
    if (failure instanceof APIError && failure.status === 429) {
      const wait = failure.response.headers.get('Retry-After');
      error.textContent = `Too many wrong tokens; try again in ${wait} s.`;
    } else if (failure instanceof APIError && failure.status === 401) {
      error.textContent = 'That is not the admin token.';
    } else {
      error.textContent = failure.message;
    }
    input.focus();
  } finally {
    button.disabled = false;
  }
}

async function signOut() {
  try {
    await call('DELETE', paths.session);
  } catch (failure) {
    say(failure.message, 'error');
  }
  signedOut('Signed out.');
}

// A request refused because the session ended (expired, signed out elsewhere) brings the sign-in back.
window.addEventListener('unhandledrejection', (event) => {
  if (event.reason instanceof APIError && event.reason.status === 401) {
    event.preventDefault();
    signedOut('The session has ended; sign in again.');
  }
});

async function start() {
  document.getElementById('sign-in-form').addEventListener('submit', signIn);
  document.getElementById('sign-out').addEventListener('click', signOut);
  const answer = await call('GET', paths.session);
  if (answer.signedIn) await signedIn(answer);
  else signedOut();
}

start().catch((failure) => say(failure.message, 'error'));
