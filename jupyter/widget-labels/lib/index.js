// A JupyterLab extension of one job: give ipywidgets' controls that have no accessible name one.
//
// ipywidgets draws a slider with noUiSlider and passes it no handle attributes, so the handle
// (role="slider", the element that takes the keyboard) has no name: a screen reader says only
// its number, and axe-core reports "ARIA input fields must have an accessible name". Each
// slider's description is already on the page, in the widget's .widget-label: the handle is
// named after it (aria-label). Likewise the Play widget's buttons show only an icon: each is
// named after its icon (play, pause, stop, repeat). Every such control on the page is named as
// it is drawn.

const HANDLES = '.widget-slider .noUi-handle[role="slider"]';
const ICON_BUTTONS = 'button.jupyter-button:not([aria-label]):not([title])';
const ICON_NAMES = { play: 'play', pause: 'pause', stop: 'stop', retweet: 'repeat' };

function nameHandles(root) {
  for (const handle of root.querySelectorAll(HANDLES)) {
    const slider = handle.closest('.widget-slider');
    const label = slider && slider.querySelector('.widget-label');
    const name = label ? label.textContent.trim() : '';
    if (name && handle.getAttribute('aria-label') !== name) {
      handle.setAttribute('aria-label', name);
    }
  }
}

function nameIconButtons(root) {
  for (const button of root.querySelectorAll(ICON_BUTTONS)) {
    const icon = button.querySelector('i.fa');
    const kind = icon && [...icon.classList].find(c => c.startsWith('fa-'));
    if (kind && !button.textContent.trim()) {
      const name = kind.slice(3);
      button.setAttribute('aria-label', ICON_NAMES[name] || name.replace(/-/g, ' '));
    }
  }
}

const plugin = {
  id: 'minigraph-widget-labels:plugin',
  description: "Names ipywidgets' slider handles and icon buttons for screen readers.",
  autoStart: true,
  activate: () => {
    const nameAll = () => {
      nameHandles(document.body);
      nameIconButtons(document.body);
    };
    let pending = false;
    const observer = new MutationObserver(() => {
      if (!pending) {              // one pass per frame, however many nodes changed
        pending = true;
        requestAnimationFrame(() => {
          pending = false;
          nameAll();
        });
      }
    });
    observer.observe(document.body, { childList: true, subtree: true, characterData: true });
    nameAll();
  }
};

export default plugin;
