/** Data types of the multi-hop QA task: retrieval documents and question/answer examples. */

/** One retrieval document (FlashRAG / Search-R1 corpus layout plus a title). */
export interface Doc {
  id: string;
  title: string;
  contents: string;
}

/** Question kinds of the built-in dataset; user data loaded from JSONL gets `'user'`. */
export type QaKind =
  | 'capital'
  | 'currency'
  | 'place_country'
  | 'capital_currency'
  | 'capital_language'
  | 'place_capital'
  | 'place_currency'
  | 'sole_neighbor'
  | 'compare_area'
  | 'compare_landlocked'
  | 'place_mid_capital'
  | 'place_mid_currency'
  | 'neighbor_capital'
  | 'user';

export interface QaExample {
  id: string;
  question: string;
  /** Gold answer first, then aliases; any of them counts as correct. */
  answers: string[];
  /** Number of documents (facts) needed to answer; 0 when unknown (user data). */
  hops: number;
  kind: QaKind;
  /** Ids of the documents holding the fact of each hop, in hop order (distinct). */
  supportingDocs: string[];
  /** For each supporting doc, a string that doc contains and that the hop yields (bridge entity / answer). */
  evidence?: string[];
  /** Named entities (countries, capitals, places) the question involves, used to keep splits disjoint. */
  entities?: string[];
}

export interface QaSplits {
  train: QaExample[];
  validation: QaExample[];
  test: QaExample[];
}

export interface MultihopDataset {
  corpus: Doc[];
  questions: QaSplits;
}
