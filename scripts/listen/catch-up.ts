// What `listen` missed while it was not running: every capture after a remembered id, or received
// since a time, read from the list API page by page (newest first, with the `before` cursor) and
// handed back oldest first, the order they are delivered in.
export interface Listed {
  id: number
}

export type StartPoint = { after: number } | { since: string }

export async function missedCaptures<C extends Listed>(getJson: (path: string) => Promise<any>, from: StartPoint): Promise<C[]> {
  const filter = 'after' in from ? `after=${from.after}` : `since=${encodeURIComponent(from.since)}`
  const out: C[] = []
  let before: number | null = null
  do {
    const page: { requests: C[]; next_before: number | null } = await getJson(`/requests?limit=100&${filter}${before ? `&before=${before}` : ''}`)
    out.push(...page.requests)
    before = page.next_before
  } while (before !== null)
  return out.sort((a, b) => a.id - b.id)
}
