// The API client's public surface, for `import ... from './index.js'`.
export { createApiClient, createApiClientFromConfig } from './client.js';
export type { ApiClient, ApiClientOptions, RawReport } from './client.js';
export * from './errors.js';
export { ApiPaginationError } from './pages.js';
export type { AttemptInfo } from './http.js';
export type { DimensionsEncoding } from './query.js';
export * from './types.js';
