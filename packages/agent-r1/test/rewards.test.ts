import { describe, expect, it } from 'vitest';
import { exactMatch, f1Score, normalizeAnswer } from '../src/index.js';

describe('QA rewards', () => {
  it('normalises case, punctuation, articles and spaces', () => {
    expect(normalizeAnswer('  The  Eiffel-Tower! ')).toBe('eiffel tower');
  });

  it('exact match takes the best gold alias', () => {
    expect(exactMatch('the United Kingdom', ['UK', 'United Kingdom'])).toBe(1);
    expect(exactMatch('United States', ['UK', 'United Kingdom'])).toBe(0);
  });

  it('F1 counts shared tokens with multiplicity', () => {
    expect(f1Score('paris france', ['Paris'])).toBeCloseTo(2 / 3, 10);
    expect(f1Score('paris paris', ['paris'])).toBeCloseTo(2 / 3, 10);
    expect(f1Score('rome', ['paris'])).toBe(0);
    expect(f1Score('', [''])).toBe(1);
  });
});
