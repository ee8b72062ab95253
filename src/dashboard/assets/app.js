/* global document, navigator, window, setTimeout */
// Progressive enhancements only: every action works without this file.
// - Copy buttons (hidden without JavaScript) copy the secret shown once.
// - data-confirm buttons ask before submitting.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const input = document.getElementById(button.dataset.copy);
    if (!input) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      input.select();
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        document.execCommand('copy');
      }
      const label = button.textContent;
      button.textContent = button.dataset.copied || label;
      setTimeout(() => { button.textContent = label; }, 2000);
    });
  }
  for (const button of document.querySelectorAll('button[data-confirm]')) {
    button.addEventListener('click', (event) => {
      if (!window.confirm(button.dataset.confirm)) event.preventDefault();
    });
  }
});
