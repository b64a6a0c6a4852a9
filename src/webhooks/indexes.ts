// Every index the webhook-capture service needs.
import type { IndexSpec } from '../platform/store/mongo.ts'
import { captureIndexes } from './store/capture-store.ts'
import { endpointIndexes } from './store/endpoint-store.ts'
import { forwardStatsIndexes } from './store/forward-stats.ts'
import { limitIndexes } from './store/limit-store.ts'
import { replayIndexes } from './store/replay-store.ts'
import { recoveryIndexes } from './forward/dead-letter-recovery.ts'
import { searchIndexes } from './search/search.ts'

export const webhooksServiceIndexes: IndexSpec[] = [endpointIndexes, ...captureIndexes, limitIndexes, replayIndexes, searchIndexes, recoveryIndexes, forwardStatsIndexes]
