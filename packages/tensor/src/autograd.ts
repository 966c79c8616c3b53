/**
 * Reverse-mode autograd. Each op that takes a tensor requiring grad gives its output a Node: the inputs it
 * came from, the tensors it saved, and a backward function written with ordinary tensor ops. Nodes are
 * reference-counted, so a graph lives exactly as long as some live tensor can reach it.
 */
import type { Tensor } from './tensor.js';
import { tidy } from './memory.js';

export type BackwardFn = (grad: Tensor, saved: Tensor[], needsGrad: boolean[]) => (Tensor | null)[];

type Input = { node: Node } | { leaf: Tensor } | null;

export class Node {
  private refs = 1;
  private freed = false;

  constructor(
    readonly op: string,
    readonly inputs: Input[],
    private readonly backwardFn: BackwardFn,
    private saved: Tensor[],
  ) {
    for (const input of inputs) if (input && 'node' in input) input.node.retain();
  }

  retain(): void {
    this.refs++;
  }

  release(): void {
    if (--this.refs > 0) return;
    this.freeSaved();
    for (const input of this.inputs) if (input && 'node' in input) input.node.release();
  }

  get isFreed(): boolean {
    return this.freed;
  }

  freeSaved(): void {
    for (const t of this.saved) t.dispose();
    this.saved = [];
    this.freed = true;
  }

  runBackward(grad: Tensor): (Tensor | null)[] {
    const needs = this.inputs.map((i) => i !== null);
    return this.backwardFn(grad, this.saved, needs);
  }
}

let gradEnabled = true;

export function isGradEnabled(): boolean {
  return gradEnabled;
}

/** Runs fn without recording a graph (inference, optimizer updates). */
export function noGrad<T>(fn: () => T): T {
  const previous = gradEnabled;
  gradEnabled = false;
  try {
    return fn();
  } finally {
    gradEnabled = previous;
  }
}

/** Runs fn with graph recording on, even inside noGrad. */
export function enableGrad<T>(fn: () => T): T {
  const previous = gradEnabled;
  gradEnabled = true;
  try {
    return fn();
  } finally {
    gradEnabled = previous;
  }
}

/**
 * Gives `out` a node when grad is on and some input requires it. `save` lists the tensors backward needs;
 * the node keeps detached views of them, independent of the caller's handles.
 */
export function record(
  op: string,
  out: Tensor,
  inputs: Tensor[],
  backward: BackwardFn,
  save: Tensor[] = [],
): Tensor {
  if (!gradEnabled || !inputs.some((t) => t.requiresGrad)) return out;
  const edges: Input[] = inputs.map((t) => {
    if (!t.requiresGrad) return null;
    return t.node ? { node: t.node } : { leaf: t };
  });
  out.node = new Node(
    op,
    edges,
    backward,
    save.map((t) => t.savedView()),
  );
  return out;
}

/** Nodes reachable from root, each after every node that consumes it. */
function topologicalOrder(root: Node): Node[] {
  const order: Node[] = [];
  const visited = new Set<Node>();
  const stack: [Node, number][] = [[root, 0]];
  visited.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const [node, next] = top;
    if (next < node.inputs.length) {
      top[1]++;
      const input = node.inputs[next];
      if (input && 'node' in input && !visited.has(input.node)) {
        visited.add(input.node);
        stack.push([input.node, 0]);
      }
    } else {
      stack.pop();
      order.push(node);
    }
  }
  return order.reverse();
}

export interface BackwardOptions {
  /** Keep the saved tensors so backward can run through this graph again. */
  retainGraph?: boolean;
}

/** Accumulates d(root)/d(leaf), weighted by `seed`, into the `.grad` of every leaf that requires grad. */
export function backward(root: Tensor, seed: Tensor, options: BackwardOptions = {}): void {
  if (!root.node) {
    accumulateLeafGrad(root, seed.detach());
    return;
  }
  const order = topologicalOrder(root.node);
  if (order.some((n) => n.isFreed)) {
    throw new Error(
      'backward: the graph was already freed by an earlier backward(); pass { retainGraph: true } to the first call to run backward twice',
    );
  }
  const grads = new Map<Node, Tensor>([[root.node, seed.detach()]]);
  noGradTidy(() => {
    for (const node of order) {
      const grad = grads.get(node);
      if (!grad) continue;
      grads.delete(node);
      const inputGrads = tidy(() => ownHandles(grad, node.runBackward(grad)));
      grad.dispose();
      if (!options.retainGraph) node.freeSaved();
      node.inputs.forEach((input, i) => {
        const g = inputGrads[i];
        if (!input || !g) {
          g?.dispose();
          return;
        }
        if ('leaf' in input) accumulateLeafGrad(input.leaf, g);
        else {
          const previous = grads.get(input.node);
          grads.set(input.node, previous ? sumAndDispose(previous, g) : g);
        }
      });
    }
  });
}

/**
 * Backward functions may pass the incoming gradient through, or return one tensor for two inputs (add);
 * each returned gradient gets its own handle so that disposing one never frees another.
 */
function ownHandles(incoming: Tensor, grads: (Tensor | null)[]): (Tensor | null)[] {
  const seen = new Set<Tensor>([incoming]);
  return grads.map((g) => {
    if (!g) return g;
    if (seen.has(g)) return g.detach();
    seen.add(g);
    return g;
  });
}

function noGradTidy(fn: () => void): void {
  const previous = gradEnabled;
  gradEnabled = false;
  try {
    tidy(fn);
  } finally {
    gradEnabled = previous;
  }
}

function sumAndDispose(a: Tensor, b: Tensor): Tensor {
  const s = a.add(b);
  a.dispose();
  b.dispose();
  return s;
}

function accumulateLeafGrad(leaf: Tensor, g: Tensor): void {
  let grad = g.isContiguous ? g : g.contiguous();
  if (grad !== g) g.dispose();
  if (leaf.grad) grad = sumAndDispose(leaf.grad, grad);
  leaf.setGrad(grad);
}
