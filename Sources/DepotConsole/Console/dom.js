// Small DOM helpers: elements built from data (text is always set as text, never parsed as HTML).

/** An element `tag` with attributes (`class`, `data-*`, `aria-*`, `on*` handlers, `hidden`...) and children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      element.addEventListener(name.slice(2), value);
    } else if (name === 'value') {
      element.value = value;
    } else {
      element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces the children of `element`. */
export function replace(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** A table with a caption, header cells and rows of cells (each cell: text, a node, or an array of them). */
export function table(caption, headers, rows, attributes = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', attributes,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, headers.map((header) => h('th', { scope: 'col' }, header)))),
      h('tbody', {}, rows.map((row) => h('tr', row.attributes ?? {}, row.cells.map((cell, index) =>
        index === 0 ? h('th', { scope: 'row' }, cell) : h('td', {}, cell)))))));
}

/** Says something in the status line (announced to screen readers). */
export function say(text, kind = 'info') {
  const status = document.getElementById('status');
  status.textContent = text;
  status.dataset.kind = kind;
}

/**
 * Asks for confirmation in the modal dialog: `lines` say what will change. Resolves true when confirmed.
 * Escape or Cancel resolve false; focus returns where it was.
 */
export function confirmAction(title, lines, confirmLabel = 'Confirm') {
  const dialog = document.getElementById('confirm');
  const previous = document.activeElement;
  document.getElementById('confirm-title').textContent = title;
  replace(document.getElementById('confirm-text'), lines.map((line) => h('p', {}, line)));
  document.getElementById('confirm-ok').textContent = confirmLabel;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'ok');
      if (previous instanceof HTMLElement) previous.focus();
    }, { once: true });
    dialog.returnValue = 'cancel';
    dialog.showModal();
    document.getElementById('confirm-cancel').focus();
  });
}

/** Runs `work` with `button` disabled, reporting a failure in the status line. */
export async function busy(button, work) {
  button.disabled = true;
  try {
    return await work();
  } catch (error) {
    say(error.message, 'error');
    return undefined;
  } finally {
    button.disabled = false;
  }
}
