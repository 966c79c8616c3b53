/**
 * `log.traceKernels`: a trace of every kernel call of chosen steps of one stage (`log.traceStage`: RL, the
 * warm start or pretraining), written to a file one call a line, so that two runs that should be identical
 * (one and two threads, before and after a change) can be compared call by call (`agent-r1 compare-traces`,
 * or `firstDivergence` of @agent-r1/tensor/testing). Lines are written synchronously in batches: a training
 * step may never yield to the event loop, where a stream's writes would wait.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { type KernelTrace, assertTraceable, formatTracedCall, traceKernels } from '@agent-r1/tensor/testing';
import { traceStepRange } from './config-schema.js';
import type { TraceStage, TrainConfig } from './config.js';

export interface StepTracer {
  /** Starts tracing if `step` of `stage` is in the range (and it is not already on). */
  begin(stage: TraceStage, step: number): void;
  /** Stops tracing after the range's last step; writes what is pending. */
  end(stage: TraceStage, step: number): void;
  close(): void;
}

/**
 * The tracer `config.log` asks for, or null when `log.traceKernels` is ''. Made before the run trains
 * anything, so a backend that cannot be traced or a file that cannot be written stops it at once.
 */
export function kernelTraceLog(config: Pick<TrainConfig, 'log' | 'backend'>): StepTracer | null {
  const path = config.log.traceKernels;
  if (path === '') return null;
  const [first, last] = traceStepRange(config.log.traceSteps);
  assertTraceable(config.backend);
  const fd = openSync(path, 'w');
  let pending: string[] = [];
  const flush = () => {
    if (pending.length > 0) writeSync(fd, pending.join(''));
    pending = [];
  };
  let trace: KernelTrace | null = null;
  const stop = () => {
    trace?.stop();
    trace = null;
    flush();
  };
  return {
    begin(stage, step) {
      if (trace || stage !== config.log.traceStage || step < first || step > last) return;
      trace = traceKernels((call) => {
        pending.push(`${formatTracedCall(call)}\n`);
        if (pending.length >= 4096) flush();
      }, config.backend);
    },
    end(stage, step) {
      if (stage !== config.log.traceStage) return;
      if (step >= last) stop();
      else flush();
    },
    close() {
      stop();
      closeSync(fd);
    },
  };
}
