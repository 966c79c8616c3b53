/**
 * The multi-hop QA task's own options (`taskOptions.*` of a run's config): which questions RL draws, the
 * data shaping of each training stage (kind balance, entity renaming), and a user's questions or corpus
 * for evaluation. Each is defined once, like the trainer's keys.
 */
import { type Static, type TSchema, bool, num, section, str } from '../../options/schema.js';

/**
 * The share of the renamings' made-up names that take a punctuated shape (rename.ts' SHAPES) unless a run
 * says otherwise. Here, not in rename.ts: the task registry reads this schema without loading the task.
 */
export const PUNCTUATED_SHARE = 0.25;

/** One setting per training stage, under `warmStart` and `rl`. */
const perStage = <S extends TSchema>(doc: string, make: (stage: string) => S) =>
  section(doc, { warmStart: make('the warm start'), rl: make('RL') });

export const MultihopOptionsSchema = section('Options of the multi-hop QA task.', {
  rlHops: str(
    '',
    "Draw RL prompts only from training questions of these hop counts, comma-separated (e.g. '2,3'); '' draws from all.",
  ),
  renameEntities: perStage(
    "Chance that an episode is played with its entities renamed (consistently in the prompt, the searches and the documents), so that the policy learns to copy names from what it read rather than recall the training set's.",
    (stage) => num(0, `In ${stage}: 0 never, 1 always.`, { min: 0, max: 1 }),
  ),
  vocabularyNames: num(
    0,
    "Share of the renamings' made-up names whose words are glued from the tokenizer's own word pieces (' Camb' + 'ota' → 'Cambota') rather than from syllables ('Brelouk'): a test name is cut into pieces some of which no training text holds ('itzerland', ' Camb'), and a policy has only ever read those as tokens it was never trained on; glued into made-up names, every such part of a word is read as part of a name. A piece that is a whole word of the corpus (' Iran') is never glued on: read only as the start of made-up words, it would teach that the word goes on ('Iranada').",
    { min: 0, max: 1 },
  ),
  punctuatedNames: perStage(
    "Share of the renamings' made-up names that take a punctuated shape of real names ('Tralo K.B.' as 'Washington D.C.', 'St. Mesin's', 'Brelo-de-Kano', 'Tralo and Mesin'): a policy that copies a name must copy through its marks, and stop at the sentence's period after it.",
    (stage) => num(PUNCTUATED_SHARE, `In ${stage}.`, { min: 0, max: 1 }),
  ),
  confusableNames: perStage(
    "Share of the renamed comparisons whose two options get made-up names that begin alike ('Tralo' and 'Tralomesin', 'Tralo Mesin' and 'Tralo Kano', 'Tralo' and 'Tralo Mesin'), as test options do ('Angola' and 'Anguilla', 'United States' beside 'United States Virgin Islands'): a compare call must copy each name from its own first part on. With renameEntities only. Off in the multihop preset: its warm starts were worse with it, blending the two names in answers (docs/history.md).",
    (stage) => num(0, `In ${stage}.`, { min: 0, max: 1 }),
  ),
  typeAdjectives: perStage(
    "Share of the renamed episodes whose places' type adjectives are renamed too, by made-up ones ('the Italian region Lazio' → 'the Brelouian region Tralo', in the documents, searches and question alike): the test split's typed places ('the American state Mississippi', 'the Canadian province Nova Scotia', 60 of its 412 questions) have adjectives the training questions hardly read (American in 3 of 2,151, Canadian in none), and a policy that has read a few others (Italian, French) as fixed words searched 'American languages' where the chain's next search is 'American state Mississippi'. With renameEntities only. The multihop preset sets it in RL only, at 0.5: there it mended a seed's chains; in the warm start at 0.5 the typed searches were copied but the warm starts were weaker over all, one answering comparisons by position (docs/history.md).",
    (stage) => num(0, `In ${stage}.`, { min: 0, max: 1 }),
  ),
  balanceKinds: perStage(
    "Balance the question kinds (templates): a kind's share of the draws goes as (its count)^(1 - balance); 0 keeps the data's mix, 1 draws every kind equally often.",
    (stage) => num(0, `In ${stage}.`, { min: 0, max: 1 }),
  ),
  kindBoost: perStage(
    "Multiply named kinds' shares after balancing: 'kind=factor', comma-separated (e.g. 'compare_area=2'); '' none.",
    (stage) => str('', `In ${stage}.`),
  ),
  swappedComparisons: bool(
    false,
    "Train on each training comparison ('X or Y?') also with its two options swapped, in both stages, so that the answer's position says nothing about it.",
  ),
  compareTool: bool(
    false,
    "A second tool, compare ('<compare>label number ; label number</compare>' → 'Largest: label'): the scripted demonstrations of an area comparison call it with the two areas they read, and the tokenizer makes its verdict ('Largest:') one token, so that the answer can copy the name after it. On in the multihop preset; a pretrained model gets it declared in its chat template.",
  ),
  compareStatements: bool(
    false,
    "With compareTool: the tool compares statements too ('Mongolia is landlocked ; Peru is not landlocked' → 'Only: Mongolia'), the scripted demonstrations of a landlocked comparison call it with the two sentences they read, and 'Only:' is one token of the tokenizer: the policy copies what each page says and the tool tells which one holds.",
  ),
  comparisonsNeedVerdict: bool(
    false,
    "With compareTool: a comparison's answer earns its reward only where it names the verdict of a compare call the episode made ('Largest: Brazil' → 'Brazil'), so that RL does not pay a right answer after a refused call, or against the verdict, which is a guess. The reported EM is unchanged.",
  ),
  plan: bool(
    false,
    "The scripted demonstrations think a plan before each tool call, in the question's words: what the searches still to come are to find ('<think> region country capital</think><search> city Calgary</search>', then 'country capital', then 'capital'), then 'compare' where they call the compare tool ('area area compare', 'area compare', 'compare'), and before the answer the empty plan ('<think></think><answer> …'); '<think>' and '</think>' are tokens of the tokenizer: a chain's last search, whether a second result is compared or answered, and when to answer then follow a goal a few tokens back, not the question's first words. For a policy trained from scratch.",
  ),
  bridgeTypes: bool(
    false,
    "The built-in corpus names the type of the place a part-of sentence links to where that place's title has one ('Gloucester is part of the American state Massachusetts.'), and the scripted demonstrations search it as written ('American state Massachusetts'): without it the next hop's query takes the type from a title the policy never sees.",
  ),
  searchTitleBoost: num(
    1,
    "The search index's weight of a match in a document's title against one in its text: at 2, 'Suriname geography' ranks the page titled 'Suriname (geography)' first, above 'Suriname' and 'Suriname River', which name Suriname more often, so that its area is among the first lines the policy reads rather than cut off.",
    { min: 0 },
  ),
  digitGroups: bool(
    false,
    "The tokenizer reads digits in runs of up to three ('181,035' → '181', ',', '035', each run one to three BPE tokens) rather than one token per digit: a figure is fewer tokens to copy, and fewer of them repeat within it ('1,181,181'). Trains its own tokenizer, cached under its own name. Off in the multihop preset: its warm starts were worse with it (docs/history.md).",
  ),
  questions: str(
    '',
    'A JSONL file of questions ({"question", "golden_answers"}, optional "hops") replacing the test split.',
  ),
  corpus: str('', 'A JSONL corpus ({"id", "contents"}) replacing the search corpus.'),
});

export type MultihopOptions = Static<typeof MultihopOptionsSchema>;
