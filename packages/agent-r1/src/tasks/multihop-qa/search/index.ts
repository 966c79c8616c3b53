/** BM25 retrieval for multi-hop QA: a local index, the `search` tool, and a shared HTTP search service. */
export {
  DEFAULT_SEARCH_INDEX_OPTIONS,
  type ResolvedSearchIndexOptions,
  SEARCH_INDEX_FORMAT,
  SEARCH_INDEX_VERSION,
  type SearchDocument,
  type Searcher,
  type SearchHit,
  SearchIndex,
  type SearchIndexOptions,
  type SearchOptions,
} from './bm25.js';
export { loadSearchIndex, saveSearchIndex } from './index-file.js';
export {
  DEFAULT_MAX_BATCH_QUERIES,
  DEFAULT_QUERY_LIMITS,
  parseQuery,
  type ParsedQuery,
  QueryLimitError,
  type QueryLimits,
  queryLimitProblem,
  resolveQueryLimits,
  SearchTimeoutError,
  tokenize,
} from './query.js';
export { RemoteSearcher, type RemoteSearchOptions, remoteSearcher, remoteSearchTool } from './remote.js';
export { type SearchServer, type SearchServerOptions, startSearchServer } from './server.js';
export {
  formatSearchHits,
  SEARCH_TOOL,
  type SearchArgs,
  searchTool,
  type SearchToolOptions,
} from './tool.js';
