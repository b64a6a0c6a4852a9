// @queueworks/openfeature-provider: in-process evaluation of queueworks feature flags for the
// OpenFeature server SDK (packages/openfeature-provider/README.md).
export { QueueworksProvider, type QueueworksProviderOptions } from './provider.ts'
export type { SyncOptions, SyncStatus } from './sync-options.ts'
export type { UsageOptions } from './usage-reporter.ts'
