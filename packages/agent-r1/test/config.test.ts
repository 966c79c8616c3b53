import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  DEFAULT_CONFIG,
  configKeys,
  loadConfigFile,
  parseOverrides,
  presets,
  resolveConfig,
  type TrainConfig,
  validateConfig,
} from '../src/trainer/config.js';
import { configReferenceMarkdown } from '../src/trainer/config-docs.js';
import { presetConfig } from '../src/trainer/preset-config.js';
import { Capture } from './support/capture.js';
import { runCli } from '../src/cli/run.js';

const dir = mkdtempSync(join(tmpdir(), 'agent-r1-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('defaults and presets', () => {
  it('resolves to the defaults with nothing given, and the defaults are valid', () => {
    const c = resolveConfig();
    expect(c).toEqual(DEFAULT_CONFIG);
    expect(c).not.toBe(DEFAULT_CONFIG);
    expect(c.seed).toBe(0);
    expect(c.backend).toBe('cpu');
    expect(c.task).toBe('reveal');
    expect(c.algorithm.name).toBe('grpo');
    expect(c.model.ffnHidden).toBeUndefined();
    expect(() => validateConfig(structuredClone(DEFAULT_CONFIG))).not.toThrow();
  });

  it('does not let a resolved config alias the defaults', () => {
    const c = resolveConfig();
    c.model.dModel = 999;
    expect(DEFAULT_CONFIG.model.dModel).not.toBe(999);
    expect(resolveConfig().model.dModel).toBe(DEFAULT_CONFIG.model.dModel);
  });

  it('has smoke and default presets, each valid, smoke smaller than the defaults', () => {
    expect(Object.keys(presets)).toEqual(expect.arrayContaining(['smoke', 'default']));
    expect(resolveConfig({ preset: 'default' })).toEqual(DEFAULT_CONFIG);
    const smoke = resolveConfig({ preset: 'smoke' });
    expect(smoke.train.steps).toBeLessThan(DEFAULT_CONFIG.train.steps);
    expect(smoke.model.dModel).toBeLessThan(DEFAULT_CONFIG.model.dModel);
    // Keys the preset does not name keep their defaults.
    expect({ ...smoke.algorithm, klCoef: DEFAULT_CONFIG.algorithm.klCoef }).toEqual(DEFAULT_CONFIG.algorithm);
    expect(smoke.train.ppoEpochs).toBe(DEFAULT_CONFIG.train.ppoEpochs);
  });

  it('rejects an unknown preset with a suggestion', () => {
    expect(() => resolveConfig({ preset: 'smok' })).toThrow(
      'config: unknown preset "smok" (did you mean "smoke"?); known: default, reveal, multihop, smoke',
    );
  });

  it('presetConfig (no files, no task registry: for a page) resolves a toy preset as resolveConfig does', () => {
    expect(presetConfig('reveal')).toEqual(resolveConfig({ preset: 'reveal' }));
    expect(presetConfig('reveal', { seed: 3, train: { steps: 5 } })).toEqual(
      resolveConfig({ preset: 'reveal', overrides: ['seed=3', 'train.steps=5'] }),
    );
    expect(() => presetConfig('revel')).toThrow('config: unknown preset "revel" (did you mean "reveal"?)');
    expect(() => presetConfig('reveal', { train: { steps: -1 } })).toThrow('"train.steps"');
  });

  it('lists every leaf key', () => {
    const keys = configKeys();
    expect(keys).toContain('train.lr');
    expect(keys).toContain('model.ffnHidden');
    expect(keys).not.toContain('train');
  });
});

describe('layering: defaults <- preset <- file <- overrides', () => {
  it('applies each layer over the one before', () => {
    const path = file('layers.yaml', 'train:\n  steps: 7\n  lr: 0.01\nrollout:\n  n: 3\n');
    const c = resolveConfig({ preset: 'smoke', file: path, overrides: ['train.lr=3e-4', 'seed=5'] });
    expect(c.seed).toBe(5); // override
    expect(c.train.lr).toBe(3e-4); // override beats file
    expect(c.train.steps).toBe(7); // file beats preset (smoke: 2)
    expect(c.rollout.n).toBe(3); // file beats preset (smoke: 2)
    expect(c.train.promptsPerStep).toBe(presets.smoke.train!.promptsPerStep); // preset beats default
    expect(c.train.schedule).toBe(DEFAULT_CONFIG.train.schedule); // default
  });

  it('accepts overrides as a partial object too', () => {
    const c = resolveConfig({ overrides: { algorithm: { name: 'ppo' }, train: { lr: 1e-5 } } });
    expect(c.algorithm.name).toBe('ppo');
    expect(c.train.lr).toBe(1e-5);
    expect(c.algorithm.gamma).toBe(DEFAULT_CONFIG.algorithm.gamma);
  });
});

describe('files', () => {
  it('reads YAML (.yaml and .yml) and JSON', () => {
    const y = file(
      'a.yaml',
      '# a run\nalgorithm:\n  name: rloo\n  klType: k3\nmodel:\n  tiedEmbeddings: false\n',
    );
    const yml = file('b.yml', 'log: { dir: out/b, progress: lines }\n');
    const json = file(
      'c.json',
      JSON.stringify({ rollout: { temperature: 0.7, topP: 0.9 }, task: 'secret-number' }),
    );
    expect(resolveConfig({ file: y }).algorithm).toMatchObject({ name: 'rloo', klType: 'k3' });
    expect(resolveConfig({ file: y }).model.tiedEmbeddings).toBe(false);
    expect(resolveConfig({ file: yml }).log).toEqual({
      dir: 'out/b',
      progress: 'lines',
      traceKernels: '',
      traceSteps: '',
      traceStage: 'rl',
    });
    const c = resolveConfig({ file: json });
    expect(c.rollout.temperature).toBe(0.7);
    expect(c.rollout.topP).toBe(0.9);
    expect(c.task).toBe('secret-number');
  });

  it('treats an empty file as no settings', () => {
    expect(resolveConfig({ file: file('empty.yaml', '') })).toEqual(DEFAULT_CONFIG);
  });

  it('names the file when it is malformed, missing or not an object', () => {
    const badJson = file('bad.json', '{"train": {"lr": 0.1,}}');
    expect(() => loadConfigFile(badJson)).toThrow(`config: cannot parse "${badJson}"`);
    const badYaml = file('bad.yaml', 'train:\n  lr: [1, 2\n');
    expect(() => resolveConfig({ file: badYaml })).toThrow(`config: cannot parse "${badYaml}"`);
    const missing = join(dir, 'nope.yaml');
    expect(() => resolveConfig({ file: missing })).toThrow(`config: cannot read "${missing}"`);
    const list = file('list.yaml', '- 1\n- 2\n');
    expect(() => resolveConfig({ file: list })).toThrow(`config: "${list}" must hold an object of settings`);
  });

  it('names the key and the file for a bad value in a file', () => {
    const path = file('typo.yaml', 'train:\n  lrr: 0.1\n');
    expect(() => resolveConfig({ file: path })).toThrow(
      `config: unknown key "train.lrr" (did you mean "train.lr"?) (in "${path}")`,
    );
    const range = file('range.json', '{"rollout": {"n": 0}}');
    expect(() => resolveConfig({ file: range })).toThrow(
      'config: "rollout.n" must be an integer >= 1, got 0',
    );
  });
});

describe('overrides', () => {
  it('parses numbers, booleans, strings and nested keys', () => {
    expect(
      parseOverrides([
        'algorithm.name=ppo',
        'train.lr=3e-4',
        'rollout.n=4',
        'critic.shareTrunk=false',
        'algorithm.klInReward=true',
        'seed=12',
        'task=multihop-qa',
      ]),
    ).toEqual({
      algorithm: { name: 'ppo', klInReward: true },
      train: { lr: 3e-4 },
      rollout: { n: 4 },
      critic: { shareTrunk: false },
      seed: 12,
      task: 'multihop-qa',
    });
  });

  it('keeps the text of string keys even when it parses as JSON, and splits at the first "="', () => {
    expect(parseOverrides(['checkpoint.dir=2024', 'log.dir=a=b', 'task="quoted"'])).toEqual({
      checkpoint: { dir: '2024' },
      log: { dir: 'a=b' },
      task: 'quoted',
    });
  });

  it('sets a whole section from a JSON object, merged with earlier overrides', () => {
    const c = resolveConfig({ overrides: ['model.layers=3', 'model={"dModel":96,"heads":6,"kvHeads":3}'] });
    expect(c.model).toMatchObject({ dModel: 96, heads: 6, kvHeads: 3, layers: 3 });
  });

  it('sets and unsets an optional key', () => {
    expect(resolveConfig({ overrides: ['model.ffnHidden=96'] }).model.ffnHidden).toBe(96);
    const c = resolveConfig({ overrides: ['model.ffnHidden=96', 'model.ffnHidden=null'] });
    expect(c.model.ffnHidden).toBeUndefined();
    expect('ffnHidden' in c.model).toBe(false);
  });

  it('applies later overrides of the same key last', () => {
    expect(resolveConfig({ overrides: ['rollout.n=2', 'rollout.n=8'] }).rollout.n).toBe(8);
  });

  it('rejects malformed overrides', () => {
    expect(() => parseOverrides(['train.lr'])).toThrow(
      'config: override "train.lr" must look like key.sub=value',
    );
    expect(() => parseOverrides(['=3'])).toThrow('must look like key.sub=value');
    expect(() => parseOverrides(['train..lr=3'])).toThrow('must look like key.sub=value');
    expect(() => parseOverrides(['train.lr=null'])).toThrow('"train.lr" cannot be null');
  });
});

describe('error messages name the full key path', () => {
  const fails = (overrides: string[]) => {
    try {
      resolveConfig({ overrides });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('expected an error');
  };

  it('unknown keys, with a suggestion when one is close', () => {
    expect(fails(['train.lrr=1'])).toBe('config: unknown key "train.lrr" (did you mean "train.lr"?)');
    expect(fails(['trian.lr=1'])).toBe('config: unknown key "trian.lr" (did you mean "train.lr"?)');
    expect(fails(['lr=1'])).toBe('config: unknown key "lr" (did you mean "train.lr"?)');
    expect(fails(['rollout.temprature=1'])).toBe(
      'config: unknown key "rollout.temprature" (did you mean "rollout.temperature"?)',
    );
    expect(fails(['zzz.qqqqq=1'])).toBe('config: unknown key "zzz.qqqqq"');
    expect(() => resolveConfig({ overrides: { model: { dmodel: 3 } } as never })).toThrow(
      'config: unknown key "model.dmodel" (did you mean "model.dModel"?)',
    );
  });

  it('wrong types', () => {
    expect(fails(['train.lr=fast'])).toBe('config: "train.lr" must be a number, got string "fast"');
    expect(fails(['critic.shareTrunk=1'])).toBe(
      'config: "critic.shareTrunk" must be a boolean (true or false), got number 1',
    );
    expect(fails(['model=3'])).toBe('config: "model" must be an object, got number 3');
    expect(fails(['rollout.n=[4]'])).toBe('config: "rollout.n" must be a number, got an array [4]');
  });

  it('out of range and non-integers', () => {
    expect(fails(['rollout.n=0'])).toBe('config: "rollout.n" must be an integer >= 1, got 0');
    expect(fails(['rollout.n=2.5'])).toBe('config: "rollout.n" must be an integer, got 2.5');
    expect(fails(['train.lr=0'])).toBe('config: "train.lr" must be a number > 0, got 0');
    expect(fails(['algorithm.gamma=1.5'])).toBe(
      'config: "algorithm.gamma" must be a number in [0, 1], got 1.5',
    );
    expect(fails(['rollout.topP=0'])).toBe('config: "rollout.topP" must be a number in (0, 1], got 0');
    expect(fails(['algorithm.dualClip=0.5'])).toBe(
      'config: "algorithm.dualClip" must be 0 (off) or a number > 1, got 0.5',
    );
  });

  it('unknown enum values', () => {
    expect(fails(['algorithm.name=ppx'])).toBe(
      'config: "algorithm.name" must be one of "grpo", "ppo", "reinforce++", "reinforce++-baseline", "rloo", got "ppx" (did you mean "ppo"?)',
    );
    expect(fails(['model.norm=batch'])).toBe(
      'config: "model.norm" must be one of "rms", "layer", got "batch"',
    );
    expect(fails(['train.schedule=3'])).toContain('"train.schedule" must be one of');
    expect(fails(['sft.schedule=step'])).toContain('"sft.schedule" must be one of');
    expect(fails(['sft.minLrRatio=2'])).toContain('"sft.minLrRatio" must be');
  });

  it('empty strings and relations between keys', () => {
    expect(fails(['backend=""'])).toBe('config: "backend" must be a non-empty string');
    expect(fails(['model.heads=3'])).toBe(
      'config: "model.dModel" (64) must be a multiple of "model.heads" (3)',
    );
    expect(fails(['model.kvHeads=3', 'model.heads=4'])).toBe(
      'config: "model.heads" (4) must be a multiple of "model.kvHeads" (3)',
    );
    expect(fails(['rollout.maxLength=4096'])).toContain(
      '"rollout.maxLength" (4096) must be <= "model.maxLength"',
    );
    expect(fails(['train.microBatchSize=64'])).toContain('must be <= "train.miniBatchSize"');
    expect(fails(['model.copyMatch=true'])).toBe('config: "model.copyMatch" needs "model.copyHead"');
    expect(fails(['model.copyHead=true', 'model.copyMatchSpan=true'])).toBe(
      'config: "model.copyMatchSpan" needs "model.copyMatch"',
    );
  });

  it('missing keys of a complete config', () => {
    const c = structuredClone(DEFAULT_CONFIG) as Partial<TrainConfig>;
    delete c.train;
    expect(() => validateConfig(c)).toThrow('config: "train" is missing');
  });
});

describe("a task's own options (taskOptions)", () => {
  const fails = (overrides: string[], preset = 'multihop') => {
    try {
      resolveConfig({ preset, overrides });
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      return (e as Error).message;
    }
    throw new Error('resolved without an error');
  };

  it("resolve to the task's defaults under what was given, from any layer", () => {
    const c = resolveConfig({ preset: 'multihop', overrides: ['taskOptions.rlHops=2,3'] });
    expect(c.taskOptions).toEqual({
      rlHops: '2,3',
      renameEntities: { warmStart: 0.9, rl: 0.9 },
      vocabularyNames: 1,
      punctuatedNames: { warmStart: 0.25, rl: 0.25 },
      confusableNames: { warmStart: 0, rl: 0 },
      typeAdjectives: { warmStart: 0, rl: 0.5 },
      balanceKinds: { warmStart: 0.5, rl: 0.5 },
      kindBoost: { warmStart: 'compare_area=2,compare_landlocked=2', rl: '' },
      swappedComparisons: false,
      compareTool: true,
      compareStatements: true,
      comparisonsNeedVerdict: false,
      plan: true,
      bridgeTypes: true,
      searchTitleBoost: 2,
      digitGroups: false,
      questions: '',
      corpus: '',
    });
    // A string option keeps its text even where it parses as JSON.
    expect(
      resolveConfig({ preset: 'multihop', overrides: ['taskOptions.rlHops=3'] }).taskOptions?.rlHops,
    ).toBe('3');
    const y = file('task.yaml', 'task: multihop-qa\ntaskOptions:\n  renameEntities: { rl: 0.25 }\n');
    expect(resolveConfig({ file: y }).taskOptions?.renameEntities).toEqual({ warmStart: 0, rl: 0.25 });
    expect(resolveConfig().taskOptions).toEqual({});
  });

  it('name the full key, the task and a near key when wrong', () => {
    expect(fails(['taskOptions.renameEntity.rl=1'])).toBe(
      'config: unknown key "taskOptions.renameEntity.rl" of task "multihop-qa" (did you mean "taskOptions.renameEntities.rl"?)',
    );
    expect(fails(['taskOptions.renameEntities.rl=2'])).toBe(
      'config: "taskOptions.renameEntities.rl" must be a number in [0, 1], got 2',
    );
    expect(fails(['taskOptions.balanceKinds=0.5'])).toBe(
      'config: "taskOptions.balanceKinds" must be an object, got number 0.5',
    );
    expect(fails(['taskOptions.rlHops=2'], 'reveal')).toBe(
      'config: unknown key "taskOptions.rlHops": task "reveal" has no options',
    );
    // The task may be named after its options: they are checked against the task finally chosen.
    expect(
      resolveConfig({ overrides: ['taskOptions.rlHops=2', 'task=multihop-qa'] }).taskOptions?.rlHops,
    ).toBe('2');
  });

  it('an unknown task is named, with the registered ones and how to add one', () => {
    expect(fails(['task=multihop'], 'default')).toMatch(
      /^config: unknown task "multihop" \(did you mean "multihop-qa"\?\); registered: reveal, secret-number, multihop-qa\. A task of your own: registerTask/,
    );
  });
});

describe('the reference: docs and `agent-r1 keys` from the schemas', () => {
  const echoModule = fileURLToPath(new URL('./support/echo-task.ts', import.meta.url));

  it('docs/config.md is the reference written from the schemas (npm run docs:config)', () => {
    const page = readFileSync(fileURLToPath(new URL('../../../docs/config.md', import.meta.url)), 'utf8');
    expect(page).toBe(configReferenceMarkdown());
    for (const key of configKeys()) expect(page).toContain(`| \`${key}\` |`);
    expect(page).toContain('| `taskOptions.renameEntities.rl` | number in [0, 1] | `0` |');
  });

  it('keys lists a task module’s options; train --task-module resolves them', async () => {
    const keys = new Capture();
    expect(
      await runCli(['keys', '--task-module', echoModule, '--task', 'echo'], {} as never, { stdout: keys }),
    ).toBe(0);
    expect(keys.text).toContain('taskOptions.times  integer >= 1  (default 2)\n    How often.');
    // --task: that task's options alone; without it, every trainer key too.
    expect(keys.text).not.toContain('train.lr');
    const all = new Capture();
    expect(await runCli(['keys'], {} as never, { stdout: all })).toBe(0);
    expect(all.text).toContain('train.lr  number > 0  (default 0.0003)');
    expect(all.text).toContain('taskOptions.rlHops  string');
    const out = new Capture();
    const err = new Capture();
    const argv = ['train', '--task-module', echoModule, 'task=echo', 'taskOptions.times=3', '--print-config'];
    expect(await runCli(argv, {} as never, { stdout: out, stderr: err })).toBe(0);
    expect(out.text).toContain('taskOptions:\n  word: hello\n  times: 3\n');
    const bad = new Capture();
    await runCli(['train', '--task-module', echoModule, 'task=echo', 'taskOptions.time=3'], {} as never, {
      stderr: bad,
    });
    expect(bad.text).toBe(
      'agent-r1: config: unknown key "taskOptions.time" of task "echo" (did you mean "taskOptions.times"?)\n',
    );
  });
});
