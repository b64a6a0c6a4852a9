// Unleash's client specification (@unleash/client-specification) run against this service: every
// constraint case of the spec files is translated into this service's flags and rules (IN → in,
// inverted → negate, caseInsensitive → case_insensitive, …), created through the management API
// and evaluated through POST /api/v1/evaluate. Cases that cannot be expressed (the service refuses
// the flag with a 400, where Unleash stores it and evaluates it to false) are listed below and in
// docs/flags.md; the test checks that exactly those are refused.
import assert from 'node:assert/strict'
import { setPlan } from '../src/platform/accounts.ts'
import { sha256 } from '../src/platform/ids.ts'
import { post } from './helpers/http.ts'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { contextOf, NOT_EXPRESSIBLE, SPEC_FILES, specFile, translateFeature } from './helpers/unleash-spec.ts'

describe('flags: Unleash client specification (constraint operators)', function () {
  this.timeout(120_000)
  let sys: TestSystem
  let base: string
  let apiKey: string
  let sdkKey: string
  let projectId: string

  before(async () => {
    sys = await startSystem({ services: ['flags'], workers: false })
    base = sys.url.flags
    const r = await post(`${base}/api/v1/signup`, { email: 'unleash-spec@example.com' })
    assert.equal(r.status, 201, r.text)
    apiKey = r.json.api_key
    const acc = await sys.platform.db.collection('accounts').findOne({ key_hash: sha256(apiKey) })
    await setPlan(sys.platform.db, String(acc!._id), 'business')
  })
  after(async () => {
    await sys?.stop()
  })

  const refused: string[] = []

  for (const file of SPEC_FILES) {
    const spec = specFile(file)
    const tag = file.slice(0, 2)
    it(`${file}: ${spec.tests.length} cases`, async () => {
      // One project per file: toggle names repeat across files.
      const p = await post(`${base}/api/v1/projects`, { name: `unleash ${tag}` }, { key: apiKey })
      assert.equal(p.status, 201, p.text)
      projectId = p.json.id
      sdkKey = p.json.sdk_key
      const stored = new Set<string>()
      for (const f of spec.state.features) {
        const r = await post(`${base}/api/v1/projects/${projectId}/flags`, translateFeature(f), { key: apiKey })
        const id = `${tag}/${f.name}`
        if (NOT_EXPRESSIBLE[id]) {
          assert.equal(r.status, 400, `${id} should be refused: ${r.text}`)
          assert.match(r.json.error, NOT_EXPRESSIBLE[id]!, id)
          refused.push(id)
          continue
        }
        assert.equal(r.status, 201, `${id}: ${r.text}`)
        stored.add(f.name)
      }
      let checked = 0
      for (const t of spec.tests) {
        if (NOT_EXPRESSIBLE[`${tag}/${t.toggleName}`]) continue
        const r = await post(`${base}/api/v1/evaluate`, { sdk_key: sdkKey, flags: [t.toggleName], context: contextOf(t) })
        assert.equal(r.status, 200, r.text)
        const result = r.json.flags[t.toggleName]
        // Unleash answers false for a toggle it does not know; this service says FLAG_NOT_FOUND.
        const enabled = result.reason === 'FLAG_NOT_FOUND' ? false : result.value
        assert.equal(enabled, t.expectedResult, `${tag}: ${t.description} (context ${JSON.stringify(contextOf(t))}) → ${JSON.stringify(result)}`)
        if (stored.has(t.toggleName)) checked++
      }
      assert.ok(checked > 0)
    })
  }

  it('refuses exactly the cases listed as not expressible', () => {
    assert.deepEqual(refused.sort(), Object.keys(NOT_EXPRESSIBLE).sort())
  })
})
