// What the endpoints list and an endpoint's page both do: pause or resume forwarding, delete, and
// the sentence that names what a deletion loses.
import { api, seg } from '../ui/api.ts'
import type { Endpoint } from './types.ts'

export const label = (ep: Endpoint) => ep.name || ep.endpoint_id

export async function setPaused(ep: Endpoint, paused: boolean): Promise<void> {
  await api('POST', `/api/v1/endpoints/${seg(ep.endpoint_id)}/forwarding/${paused ? 'pause' : 'resume'}`)
}

export async function deleteEndpoint(ep: Endpoint): Promise<number> {
  const r = await api<{ requests_deleted: number }>('DELETE', `/api/v1/endpoints/${seg(ep.endpoint_id)}`)
  return r.data.requests_deleted
}

export function whatIsLost(ep: Endpoint): string {
  const n = ep.request_count ?? 0
  const dead = ep.forward_health?.dead_lettered ?? 0
  return (
    `Its capture URL stops answering (senders posting to it get 404), and ${n} captured request${n === 1 ? '' : 's'} go with it: bodies, headers and forward attempts` +
    (dead ? `, ${dead} of them dead-lettered and never delivered` : '') +
    '. This cannot be undone.'
  )
}
