// The panel the node terminal (terminal.js) and the session player (player.js) dock at
// the bottom of the window: a header naming what it shows, with its controls, above
// the screen the terminal or the player draws in. Only one is docked at a time; each
// script closes its own before it opens another.

/** A quiet button of a docked panel's header. */
export function headerButton(text, testid) {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'button button-quiet';
  button.textContent = text;
  button.dataset.testid = testid;
  return button;
}

/**
 * Docks a panel: `section.terminal-panel` (with `kind`'s class too, when given) named
 * `label` for assistive technology and `title` in its header, with `controls` after
 * the title and the screen (`div.terminal-screen`, likewise) below.
 */
export function dock({ kind, label, testid, title, controls }) {
  const panel = document.createElement('section');
  panel.className = kind ? `terminal-panel ${kind}-panel` : 'terminal-panel';
  panel.setAttribute('role', 'region');
  panel.setAttribute('aria-label', label);
  panel.dataset.testid = testid;
  const header = document.createElement('header');
  const heading = document.createElement('strong');
  heading.textContent = title;
  header.append(heading, ...controls);
  const screen = document.createElement('div');
  screen.className = kind ? `terminal-screen ${kind}-screen` : 'terminal-screen';
  panel.append(header, screen);
  document.body.append(panel);
  document.body.classList.add('terminal-docked');
  return { panel, screen };
}

/** Takes a docked panel away. */
export function undock(panel) {
  panel.remove();
  document.body.classList.remove('terminal-docked');
}
