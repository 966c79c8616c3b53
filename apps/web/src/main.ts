/**
 * The page: sets up the tensor backend (WebGPU, else WebAssembly), then the Ask panel (the trained
 * multi-hop agent over the search corpus) and the Train panel (the reveal toy trained in the tab).
 */
import { AskPanel } from './ask-panel.js';
import { type PageBackend, setUpBackend } from './backend.js';
import { fetchSearchData } from './checkpoint.js';
import { TrainPanel } from './train-panel.js';

const $ = (id: string) => document.getElementById(id)!;

function tabs(): void {
  const buttons = [...document.querySelectorAll<HTMLButtonElement>('.tab')];
  for (const button of buttons)
    button.addEventListener('click', () => {
      for (const other of buttons) {
        const selected = other === button;
        other.setAttribute('aria-selected', String(selected));
        $(other.dataset.panel!).hidden = !selected;
      }
    });
}

async function main(): Promise<void> {
  tabs();
  const backendLine = $('backend');
  let backend: PageBackend;
  try {
    const params = new URLSearchParams(location.search);
    const prefer = params.get('backend') === 'wasm' ? 'wasm' : 'auto';
    backend = await setUpBackend(prefer, { relaxedSimd: params.get('simd') !== '128' });
  } catch (e) {
    backendLine.textContent = `No tensor backend started: ${(e as Error).message}`;
    backendLine.dataset.state = 'error';
    return;
  }
  backendLine.textContent = `Computing on ${backend.line}.`;
  backendLine.dataset.state = backend.kind;
  new TrainPanel(backend);
  (document.getElementById('train-start') as HTMLButtonElement).disabled = false;
  try {
    const ask = new AskPanel(backend, await fetchSearchData());
    await ask.start();
  } catch (e) {
    const policy = $('policy');
    policy.textContent = `The search corpus did not load: ${(e as Error).message}`;
    policy.dataset.state = 'error';
  }
}

void main();
