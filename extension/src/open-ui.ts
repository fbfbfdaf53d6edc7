// The side panel and the full-tab page: open the bundled Control UI against the paired gateway, or say
// how to pair.
import browser from 'webextension-polyfill';

async function open(): Promise<void> {
  const { pairing } = await browser.storage.local.get('pairing');
  const status = document.getElementById('status')!;
  if (!pairing) {
    status.dataset.state = 'unpaired';
    status.textContent =
      'Not paired yet. Run `verity start` in a terminal and open the "Pair the Chrome extension" link it prints (chrome-extension://…/pair.html#gateway=…&token=…) in this browser.';
    return;
  }
  const built = await fetch('ui/index.html', { method: 'HEAD' }).then(
    (r) => r.ok,
    () => false,
  );
  if (!built) {
    status.dataset.state = 'unbuilt';
    status.textContent =
      'The Control UI is not built into the extension: run `npm start` (or `node scripts/build-extension.mjs`) in the Verity checkout, then reload the extension.';
    return;
  }
  // The Control UI reads the gateway and credential from this extension's pairing storage itself: nothing
  // in its URL decides where it connects.
  location.replace('ui/index.html');
}
open().catch((e: unknown) => {
  document.getElementById('status')!.textContent =
    `Could not open the Control UI: ${e instanceof Error ? e.message : String(e)}`;
});
