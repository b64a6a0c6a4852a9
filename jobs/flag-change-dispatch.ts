// flag-change-dispatch: fans a committed flag or segment change out to the project's webhooks
// (one delivery per matching webhook, src/flags/changes/change-hook-delivery.ts). An entry whose request is
// still between the change and its commit is retried (the contract's backoff); the history sweep
// settles entries whose request died.
import { defineJob } from '../src/platform/queue/job.ts'
import { flagChangeDispatchContract } from '../src/flags/job-contracts.ts'
import { dispatchChange } from '../src/flags/changes/change-hook-delivery.ts'

export const flagChangeDispatchJob = defineJob(flagChangeDispatchContract, {
  concurrency: 5,
  async process({ change_id, project_id }, _job, platform) {
    const r = await dispatchChange(platform, project_id, change_id)
    if (r.state === 'pending') throw new Error('change not committed yet')
    return r
  },
})
