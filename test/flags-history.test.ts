// Audit history over HTTP: every flag, segment, project, environment, SDK-key and webhook change
// recorded with who, when, before/after and an RFC 6902 diff; per-flag history (newest first,
// cursor pages, readable after the flag's deletion) and the project feed (filters); refused and
// no-op changes record nothing; tenant isolation; bad query input; entries of a request that died
// settled by the sweep; retention by plan.
import assert from 'node:assert/strict'
import { sweepHistory } from '../src/flags/changes/history-sweep.ts'
import { recordChange } from '../src/flags/changes/audit.ts'
import { history, insertPending } from '../src/flags/changes/history-store.ts'
import { flagState } from '../src/flags/changes/change-state.ts'
import { getProject } from '../src/flags/store/project-store.ts'
import { updateFlag } from '../src/flags/store/flag-store.ts'
import { clock } from '../src/platform/clock.ts'
import { assertJsonError, call, get, post } from './helpers/http.ts'
import { flagsAccount, type FlagsAccount } from './helpers/flags.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'

describe('flags: audit history', () => {
  let sys: TestSystem

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
  })
  after(async () => {
    clock.reset()
    await sys?.stop()
  })
  afterEach(() => clock.reset())

  const put = (url: string, json: unknown, key: string) => call('PUT', url, { json, key })
  const del = (url: string, key: string) => call('DELETE', url, { key })
  const historyOf = (t: FlagsAccount, key: string, q = '') => get(`${t.project}/flags/${key}/history${q}`, { key: t.apiKey })
  const feed = (t: FlagsAccount, q = '') => get(`${t.project}/history${q}`, { key: t.apiKey })

  it('records each flag change with who, when, before, after and the diff; newest first; survives deletion', async () => {
    const t = await flagsAccount(sys)
    assert.equal((await post(`${t.project}/flags`, { key: 'checkout', default_value: 'a' }, { key: t.apiKey })).status, 201)
    assert.equal((await put(`${t.project}/flags/checkout`, { enabled: true }, t.apiKey)).status, 200)
    const rules = [{ conditions: [{ attribute: 'country', operator: 'eq', value: 'DE' }], value: 'b' }]
    assert.equal((await put(`${t.project}/flags/checkout`, { rules, name: 'Checkout' }, t.apiKey)).status, 200)
    assert.equal((await del(`${t.project}/flags/checkout`, t.apiKey)).status, 204)
    assertJsonError(await get(`${t.project}/flags/checkout`, { key: t.apiKey }), 404, 'Flag not found')

    const r = await historyOf(t, 'checkout')
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json.history.map((e: any) => e.type), ['flag.deleted', 'flag.updated', 'flag.updated', 'flag.created'])
    assert.equal(r.json.next_before, null)
    const [deleted, second, first, created] = r.json.history
    for (const e of r.json.history) {
      assert.equal(e.kind, 'flag')
      assert.equal(e.target, 'checkout')
      assert.equal(e.actor.account_id, t.accountId)
      assert.equal(e.actor.api_key.hint, `${t.apiKey.slice(0, 7)}…`)
      assert.match(e.actor.api_key.id, /^[0-9a-f]{16}$/)
      assert.ok(!JSON.stringify(e).includes(t.apiKey), 'the API key itself is never in history')
      assert.ok(Date.parse(e.at) > 0)
    }
    assert.ok(created.at <= first.at && first.at <= second.at && second.at <= deleted.at)
    assert.equal(created.before, null)
    assert.deepEqual(created.after, { key: 'checkout', name: 'checkout', environments: { production: { enabled: false, default_value: 'a', rules: [] } } })
    assert.equal(created.environment, null)
    // Turning it on touched production's state alone: that environment is named.
    assert.equal(first.environment, 'production')
    assert.deepEqual(first.changes, [{ op: 'replace', path: '/environments/production/enabled', value: true }])
    assert.equal(first.before.environments.production.enabled, false)
    assert.equal(first.after.environments.production.enabled, true)
    // A rename is shared by all environments.
    assert.equal(second.environment, null)
    assert.deepEqual(
      second.changes.map((c: any) => c.path).sort(),
      ['/environments/production/rules/-', '/name'],
    )
    assert.deepEqual(second.after.environments.production.rules, rules)
    assert.equal(deleted.after, null)
    assert.deepEqual(deleted.before, second.after)
  })

  it('pages newest first with next_before until the last page', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'paged' }, { key: t.apiKey })
    for (let i = 0; i < 4; i++) assert.equal((await put(`${t.project}/flags/paged`, { default_value: `v${i}` }, t.apiKey)).status, 200)
    const seen: string[] = []
    let q = '?limit=2'
    let pages = 0
    for (;;) {
      const r = await historyOf(t, 'paged', q)
      assert.equal(r.status, 200, r.text)
      pages++
      seen.push(...r.json.history.map((e: any) => (e.after.environments.production.default_value as string)))
      if (!r.json.next_before) break
      q = `?limit=2&before=${r.json.next_before}`
    }
    assert.equal(pages, 3)
    assert.deepEqual(seen, ['v3', 'v2', 'v1', 'v0', 'true'])
  })

  it('refused changes and changes that change nothing record nothing', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'f' }, { key: t.apiKey })
    assertJsonError(await post(`${t.project}/flags`, { key: 'f' }, { key: t.apiKey }), 409)
    assertJsonError(await put(`${t.project}/flags/f`, { rules: [{ segments: ['nope'], conditions: [], value: 'x' }] }, t.apiKey), 400)
    assertJsonError(await put(`${t.project}/flags/f`, { enabled: 'yes' }, t.apiKey), 400)
    assertJsonError(await put(`${t.project}/flags/missing`, { enabled: true }, t.apiKey), 404)
    assertJsonError(await post(`${t.project}/segments`, { name: 's', conditions: [{ attribute: 'a', operator: 'gt', value: 'x' }] }, { key: t.apiKey }), 400)
    assert.equal((await put(`${t.project}/flags/f`, { enabled: false }, t.apiKey)).status, 200) // already off
    const r = await feed(t)
    assert.deepEqual(r.json.history.map((e: any) => `${e.type} ${e.target}`), ['flag.created f'])
    assert.equal(await history(sys.platform.db).countDocuments({ project_id: t.projectId, state: 'pending' }), 0)
  })

  it('the project feed has segments, settings, environments, SDK keys and webhooks, filterable by kind and type', async () => {
    const t = await flagsAccount(sys, 'pro')
    await post(`${t.project}/segments`, { name: 'beta', conditions: [{ attribute: 'a', operator: 'eq', value: 'b' }] }, { key: t.apiKey })
    await put(`${t.project}/segments/beta`, { description: 'Beta users' }, t.apiKey)
    assert.equal((await call('PATCH', t.project, { json: { name: 'Renamed' }, key: t.apiKey })).status, 200)
    const env = await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })
    assert.equal(env.status, 201)
    const rot = await post(`${t.project}/sdk-key/rotate`, {}, { key: t.apiKey })
    assert.equal(rot.status, 200)
    assert.equal((await post(`${t.project}/environments/staging/sdk-key/rotate`, {}, { key: t.apiKey })).status, 200)
    const hook = await post(`${t.project}/webhooks`, { url: 'http://127.0.0.1:9/hook' }, { key: t.apiKey })
    assert.equal(hook.status, 201, hook.text)
    await del(`${t.project}/segments/beta`, t.apiKey)

    const all = await feed(t)
    assert.deepEqual(
      all.json.history.map((e: any) => `${e.type} ${e.target}`),
      ['segment.deleted beta', `webhook.created ${hook.json.id}`, 'sdk_key.rotated staging', 'sdk_key.rotated production', 'environment.created staging', `project.updated ${t.projectId}`, 'segment.updated beta', 'segment.created beta'],
    )
    const byType = Object.fromEntries(all.json.history.map((e: any) => [`${e.type} ${e.target}`, e]))
    assert.deepEqual(byType[`project.updated ${t.projectId}`].changes, [{ op: 'replace', path: '/name', value: 'Renamed' }])
    const rotated = byType['sdk_key.rotated production']
    assert.equal(rotated.after.sdk_key_hint, rot.json.sdk_key_hint)
    assert.ok(!JSON.stringify(all.json).includes(rot.json.sdk_key), 'no SDK key in history')
    assert.ok(!JSON.stringify(all.json).includes(hook.json.secret), 'no webhook secret in history')
    assert.equal(byType[`webhook.created ${hook.json.id}`].after.url, 'http://127.0.0.1:9/hook')

    const segs = await feed(t, '?kind=segment')
    assert.deepEqual(segs.json.history.map((e: any) => e.type), ['segment.deleted', 'segment.updated', 'segment.created'])
    const rotations = await feed(t, '?type=sdk_key.rotated&limit=1')
    assert.deepEqual(rotations.json.history.map((e: any) => e.target), ['staging'])
    assert.equal(typeof rotations.json.next_before, 'string')
  })

  it("another account's flag history is a 404; an unknown key without history is a 404", async () => {
    const a = await flagsAccount(sys)
    const b = await flagsAccount(sys)
    await post(`${a.project}/flags`, { key: 'secret-flag' }, { key: a.apiKey })
    assertJsonError(await get(`${a.project}/flags/secret-flag/history`, { key: b.apiKey }), 404, 'Project not found', { exact: true })
    assertJsonError(await get(`${a.project}/history`, { key: b.apiKey }), 404, 'Project not found', { exact: true })
    assertJsonError(await historyOf(a, 'never-existed'), 404, 'Flag not found', { exact: true })
    assertJsonError(await get(`${a.project}/history`), 401)
  })

  it('bad query input is a 400 naming the field', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'q' }, { key: t.apiKey })
    assertJsonError(await historyOf(t, 'q', '?limit=0'), 400, 'limit must be >= 1')
    assertJsonError(await historyOf(t, 'q', '?limit=abc'), 400, /^limit /)
    assertJsonError(await historyOf(t, 'q', '?limit=1000000'), 400, 'limit must be <= 200')
    assertJsonError(await historyOf(t, 'q', `?before=${encodeURIComponent('ü!')}`), 400, 'before must be a next_before value from a previous page')
    assertJsonError(await feed(t, '?kind=flags'), 400, /^kind must be one of: flag, segment/)
    assertJsonError(await feed(t, '?type=flag.exploded'), 400, /^type must be one of: /)
  })

  it('the sweep commits an entry whose request died after its change, and drops one whose change never happened', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'crash' }, { key: t.apiKey })
    const db = sys.platform.db
    const p = (await getProject(db, t.accountId, t.projectId))!
    const before = flagState(p, (await db.collection('flags').findOne({ project_id: t.projectId, key: 'crash' })) as any)
    const actor = { account_id: t.accountId, api_key: { id: '0'.repeat(16), hint: 'fb_test…' } }
    // A request that wrote its entry and its change, then died; and one that died before its change.
    const applied = await insertPending(db, { project_id: t.projectId, account_id: t.accountId, kind: 'flag', target: 'crash', actor, before })
    await updateFlag(db, t.projectId, 'crash', { enabled: true } as any)
    const lost = await insertPending(db, { project_id: t.projectId, account_id: t.accountId, kind: 'segment', target: 'never', actor, before: null })
    assert.deepEqual((await sweepHistory(sys.platform)).settled, 0, 'young entries are left to their requests')
    const r = await sweepHistory(sys.platform, 0)
    assert.equal(r.settled, 2)
    const h = await historyOf(t, 'crash')
    assert.deepEqual(h.json.history.map((e: any) => e.type), ['flag.updated', 'flag.created'])
    assert.equal(h.json.history[0].id, applied._id)
    assert.deepEqual(h.json.history[0].changes, [{ op: 'replace', path: '/environments/production/enabled', value: true }])
    assert.equal(await history(db).of(lost._id).findOne({ _id: lost._id }), null)
  })

  it('a change whose store call failed after writing keeps its entry pending until the sweep commits it', async () => {
    const t = await flagsAccount(sys)
    await post(`${t.project}/flags`, { key: 'lost-answer' }, { key: t.apiKey })
    const db = sys.platform.db
    const account = (await db.collection('accounts').findOne({ _id: t.accountId as any }))!
    const ctx = { state: { account }, get: (h: string) => (h === 'authorization' ? `Bearer ${t.apiKey}` : '') } as any
    // The write reaches the store, then the answer is lost.
    const apply = async () => {
      await updateFlag(db, t.projectId, 'lost-answer', { enabled: true } as any)
      throw new Error('connection lost')
    }
    await assert.rejects(recordChange(sys.platform, ctx, { project_id: t.projectId, kind: 'flag', target: 'lost-answer' }, apply, () => undefined), /connection lost/)
    assert.equal((await historyOf(t, 'lost-answer')).json.history.length, 1, 'a pending entry is not listed')
    assert.equal((await sweepHistory(sys.platform, 0)).settled, 1)
    const h = await historyOf(t, 'lost-answer')
    assert.deepEqual(h.json.history.map((e: any) => e.type), ['flag.updated', 'flag.created'])
    assert.equal(h.json.history[0].actor.api_key.hint, `${t.apiKey.slice(0, 7)}…`)
  })

  it('keeps history for the plan: 7 days on free, 30 on starter', async () => {
    const free = await flagsAccount(sys, 'free')
    const starter = await flagsAccount(sys, 'starter')
    for (const t of [free, starter]) await post(`${t.project}/flags`, { key: 'kept' }, { key: t.apiKey })
    clock.advance(6 * 86_400_000)
    await sweepHistory(sys.platform)
    assert.equal((await historyOf(free, 'kept')).json.history.length, 1, 'free keeps 6-day-old entries')
    clock.advance(2 * 86_400_000)
    await sweepHistory(sys.platform)
    assert.equal((await historyOf(free, 'kept')).json.history.length, 0, 'free drops 8-day-old entries')
    assert.equal((await historyOf(starter, 'kept')).json.history.length, 1, 'starter keeps 8-day-old entries')
    clock.advance(23 * 86_400_000)
    await sweepHistory(sys.platform)
    assert.equal((await historyOf(starter, 'kept')).json.history.length, 0, 'starter drops 31-day-old entries')
  })
  it('records an environment rename and deletion in the project feed', async () => {
    const t = await flagsAccount(sys, 'business')
    assert.equal((await post(`${t.project}/environments`, { name: 'staging' }, { key: t.apiKey })).status, 201)
    assert.equal((await call('PATCH', `${t.project}/environments/staging`, { json: { name: 'stage' }, key: t.apiKey })).status, 200)
    assert.equal((await del(`${t.project}/environments/stage`, t.apiKey)).status, 204)
    // Refused: production cannot go; nothing recorded for it.
    assert.equal((await del(`${t.project}/environments/production`, t.apiKey)).status, 409)
    const r = await feed(t, '?kind=environment')
    assert.equal(r.status, 200, r.text)
    assert.deepEqual(r.json.history.map((e: any) => [e.type, e.target]), [['environment.deleted', 'stage'], ['environment.updated', 'staging'], ['environment.created', 'staging']])
    const [deleted, renamed] = r.json.history
    assert.deepEqual(renamed.changes, [{ op: 'replace', path: '/name', value: 'stage' }])
    assert.equal(renamed.before.name, 'staging')
    assert.equal(deleted.after, null)
    assert.equal(deleted.before.name, 'stage')
  })

  it('shows variants without their internal bucket allocation', async () => {
    const t = await flagsAccount(sys, 'business')
    const variants = (a: number, b: number) => [{ name: 'a', weight: a, value: 'A' }, { name: 'b', weight: b, value: 'B' }]
    assert.equal((await post(`${t.project}/flags`, { key: 'exp', type: 'string', default_value: 'x', fallthrough: { variants: variants(50, 50) } }, { key: t.apiKey })).status, 201)
    assert.equal((await put(`${t.project}/flags/exp`, { fallthrough: { variants: variants(30, 70) } }, t.apiKey)).status, 200)
    const [updated] = (await historyOf(t, 'exp')).json.history
    assert.deepEqual(updated.after.environments.production.fallthrough, { variants: variants(30, 70) })
    assert.deepEqual(updated.changes.map((c: any) => c.path).sort(), ['/environments/production/fallthrough/variants/0/weight', '/environments/production/fallthrough/variants/1/weight'])
  })
})
