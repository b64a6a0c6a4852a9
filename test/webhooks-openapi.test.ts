// The webhooks service's /openapi.json documents the capture URL, which a plain
// middleware (not a router) serves, for every method it answers.
import assert from 'node:assert/strict'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { call, get } from './helpers/http.ts'
import { createEndpoint, signup } from './helpers/webhooks.ts'

describe('webhooks: /openapi.json documents /hook/{token}', () => {
  let sys: TestSystem
  before(async () => {
    sys = await startSystem({ services: ['webhooks'], workers: false })
  })
  after(async () => sys?.stop())

  it('every method the capture URL answers, with its token parameter, body and error answers', async () => {
    const doc = (await get(`${sys.root.webhooks}/openapi.json`)).json
    const hook = doc.paths['/hook/{token}']
    assert.ok(hook, 'no /hook/{token} in the document')
    assert.deepEqual(Object.keys(hook).sort(), ['delete', 'get', 'head', 'options', 'patch', 'post', 'put'])
    const ids = new Set<string>()
    for (const [method, op] of Object.entries<any>(hook)) {
      assert.ok(op.parameters.some((p: any) => p.in === 'path' && p.name === 'token' && p.required), `${method}: token`)
      assert.ok(op.summary, method)
      assert.ok(!ids.has(op.operationId), `${method}: operationId unique`)
      ids.add(op.operationId)
    }
    for (const m of ['post', 'put', 'patch', 'delete']) assert.ok(hook[m].requestBody.content['*/*'], `${m}: any body`)
    assert.equal(hook.get.requestBody, undefined)
    for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
      assert.deepEqual(Object.keys(hook[m].responses).sort(), ['200', '404', '413', '429'], m)
      assert.ok(hook[m].responses['429'].headers['Retry-After'], m)
    }
    assert.ok(hook.options.responses['204'])
    // Every operation id in the whole document is still unique.
    const all = Object.values<Record<string, any>>(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId))
    assert.equal(new Set(all).size, all.length)
  })

  it('the documented path is the real one: a token from POST /endpoints answers every documented method there', async () => {
    const key = await signup(sys)
    const ep = await createEndpoint(sys, key)
    const doc = (await get(`${sys.root.webhooks}/openapi.json`)).json
    for (const method of Object.keys(doc.paths['/hook/{token}'])) {
      const url = `${sys.root.webhooks}${'/hook/{token}'.replace('{token}', ep.endpoint_id)}`
      const r = await call(method.toUpperCase(), url)
      assert.equal(r.status, method === 'options' ? 204 : 200, method)
    }
  })
})
