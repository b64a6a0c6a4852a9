// logo_url end to end against a real HTTP server on 127.0.0.1: PNG and JPEG are embedded; other
// types, oversize files, HTTP errors and private addresses (when not allowed) are a 400 naming the
// reason, and a 400 is never charged. Logos are fetched once per URL (cached in the worker).
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSystem, type TestSystem } from './helpers/system.ts'
import { get, post } from './helpers/http.ts'
import { qpdfCheck } from './helpers/pdf.ts'

const item = { description: 'Logo test', quantity: 1, unit_price: 1 }

/** Rasterise page 1 of a PDF with poppler: real PNG/JPEG files without an image library. */
function rasterise(pdf: Buffer, format: 'png' | 'jpeg'): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'qw-logo-'))
  writeFileSync(join(dir, 'in.pdf'), pdf)
  execFileSync('pdftoppm', [`-${format}`, '-r', '20', '-singlefile', join(dir, 'in.pdf'), join(dir, 'out')])
  return readFileSync(join(dir, `out.${format === 'png' ? 'png' : 'jpg'}`))
}

function imageCount(pdf: Buffer): number {
  const dir = mkdtempSync(join(tmpdir(), 'qw-img-'))
  writeFileSync(join(dir, 'doc.pdf'), pdf)
  const out = execFileSync('pdfimages', ['-list', join(dir, 'doc.pdf')], { encoding: 'utf8' })
  return out.trim().split('\n').length - 2 // two header lines
}

describe('invoice logo_url', () => {
  let sys: TestSystem
  let base: string
  let key: string
  let server: Server
  let origin: string
  const hits = new Map<string, number>()
  const files = new Map<string, { type: string; body: Buffer; chunked?: boolean; status?: number }>()

  before(async () => {
    sys = await startSystem({ services: ['invoice'], env: { OUTBOUND_ALLOW_PRIVATE: 'true' } })
    base = sys.url.invoice!
    key = (await post(`${base}/signup`, { email: 'logo@example.com' })).json.api_key
    await sys.platform.db.collection('accounts').updateOne({ email: 'logo@example.com' }, { $set: { plan: 'starter' } })

    server = createServer((req, res) => {
      const path = req.url ?? '/'
      hits.set(path, (hits.get(path) ?? 0) + 1)
      if (path === '/redirect') return res.writeHead(302, { location: '/logo.png' }).end()
      const f = files.get(path)
      if (!f) return res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      const headers: Record<string, string | number> = { 'content-type': f.type }
      if (!f.chunked) headers['content-length'] = f.body.length
      res.writeHead(f.status ?? 200, headers)
      if (f.chunked) {
        for (let i = 0; i < f.body.length; i += 64 * 1024) res.write(f.body.subarray(i, i + 64 * 1024))
        res.end()
      } else res.end(f.body)
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

    // A real invoice to rasterise into the PNG and JPEG logos.
    const seed = await post(`${base}/invoice`, { items: [item], from: { name: 'Logo Seed' } }, { key })
    assert.equal(seed.status, 200, seed.text)
    const png = rasterise(seed.body, 'png')
    const jpeg = rasterise(seed.body, 'jpeg')
    const pngMagic = png.subarray(0, 8)
    files.set('/logo.png', { type: 'image/png', body: png })
    files.set('/logo.jpg', { type: 'image/jpeg', body: jpeg })
    files.set('/png-as-octets', { type: 'application/octet-stream', body: png })
    files.set('/logo.gif', { type: 'image/gif', body: Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1') })
    files.set('/logo.txt', { type: 'image/png', body: Buffer.from('this is not an image') })
    files.set('/big.png', { type: 'image/png', body: Buffer.concat([pngMagic, Buffer.alloc(3 * 1024 * 1024)]) })
    files.set('/big-chunked.png', { type: 'image/png', body: Buffer.concat([pngMagic, Buffer.alloc(3 * 1024 * 1024)]), chunked: true })
    files.set('/corrupt.png', { type: 'image/png', body: Buffer.concat([pngMagic, Buffer.from('garbage that is not a PNG')]) })
    files.set('/corrupt.jpg', { type: 'image/jpeg', body: Buffer.concat([jpeg.subarray(0, 3), Buffer.from('garbage that is not a JPEG')]) })
    files.set('/error.png', { type: 'image/png', body: png, status: 500 })
  })
  after(async () => {
    await sys?.stop()
    server?.close()
  })

  const usage = async () => (await get(`${base}/usage`, { key })).json.invoices_this_month as number

  it('embeds a PNG logo', async () => {
    const res = await post(`${base}/invoice`, { items: [item], logo_url: `${origin}/logo.png` }, { key })
    assert.equal(res.status, 200, res.text)
    qpdfCheck(res.body)
    assert.equal(imageCount(res.body), 1)
  })

  it('embeds a JPEG logo, recognised by its bytes not its Content-Type', async () => {
    const jpg = await post(`${base}/invoice`, { items: [item], logo_url: `${origin}/logo.jpg` }, { key })
    assert.equal(jpg.status, 200, jpg.text)
    assert.equal(imageCount(jpg.body), 1)
    const octets = await post(`${base}/invoice`, { items: [item], logo_url: `${origin}/png-as-octets` }, { key })
    assert.equal(octets.status, 200, octets.text)
    assert.equal(imageCount(octets.body), 1)
  })

  it('follows a redirect to the logo', async () => {
    const res = await post(`${base}/invoice`, { items: [item], logo_url: `${origin}/redirect` }, { key })
    assert.equal(res.status, 200, res.text)
    assert.equal(imageCount(res.body), 1)
  })

  it('fetches a logo once for many invoices (per-worker cache)', async () => {
    files.set('/cached.png', files.get('/logo.png')!)
    const all = await Promise.all(
      Array.from({ length: 4 }, () => post(`${base}/invoice`, { items: [item], logo_url: `${origin}/cached.png` }, { key })),
    )
    assert.deepEqual(all.map((r) => r.status), [200, 200, 200, 200])
    assert.equal(hits.get('/cached.png'), 1)
  })

  const refused: [string, string, string][] = [
    ['a GIF', '/logo.gif', 'logo_url must point to a PNG or JPEG image'],
    ['text served as image/png', '/logo.txt', 'logo_url must point to a PNG or JPEG image'],
    ['a file over 2 MB (Content-Length)', '/big.png', 'logo_url image exceeds 2 MB'],
    ['a file over 2 MB (chunked)', '/big-chunked.png', 'logo_url image exceeds 2 MB'],
    ['a corrupt PNG', '/corrupt.png', 'logo_url is not a valid PNG or JPEG image'],
    ['a corrupt JPEG', '/corrupt.jpg', 'logo_url is not a valid PNG or JPEG image'],
    ['a 404', '/missing.png', 'logo_url could not be fetched (HTTP 404)'],
    ['a 500', '/error.png', 'logo_url could not be fetched (HTTP 500)'],
  ]
  for (const [name, path, message] of refused) {
    it(`400 for ${name}, naming the reason, and not charged`, async () => {
      const before = await usage()
      const res = await post(`${base}/invoice`, { items: [item], logo_url: `${origin}${path}` }, { key })
      assert.equal(res.status, 400, res.text)
      assert.deepEqual(res.json, { error: message })
      assert.equal(await usage(), before)
    })
  }

  it('400 for a URL that is not http(s), and for a host that does not resolve', async () => {
    const before = await usage()
    const ftp = await post(`${base}/invoice`, { items: [item], logo_url: 'ftp://example.com/logo.png' }, { key })
    assert.equal(ftp.status, 400, ftp.text)
    assert.deepEqual(ftp.json, { error: 'logo_url is not a valid http(s) URL' })
    const nohost = await post(`${base}/invoice`, { items: [item], logo_url: 'http://no-such-host.invalid/logo.png' }, { key })
    assert.equal(nohost.status, 400, nohost.text)
    assert.match(nohost.json.error, /^logo_url could not be fetched/)
    assert.equal(await usage(), before)
  })

  it('400 on /demo-invoice too', async () => {
    const res = await post(`${base}/demo-invoice`, { items: [item], logo_url: `${origin}/logo.gif` })
    assert.equal(res.status, 400, res.text)
    assert.deepEqual(res.json, { error: 'logo_url must point to a PNG or JPEG image' })
  })

  describe('with OUTBOUND_ALLOW_PRIVATE=false (the production default)', () => {
    let strict: TestSystem
    let strictKey: string
    before(async () => {
      strict = await startSystem({ services: ['invoice'], env: { OUTBOUND_ALLOW_PRIVATE: 'false' } })
      strictKey = (await post(`${strict.url.invoice}/signup`, { email: 'ssrf@example.com' })).json.api_key
    })
    after(async () => strict?.stop())

    for (const [name, url] of [
      ['a loopback IP', () => `${origin}/logo.png`],
      ['localhost', () => `${origin.replace('127.0.0.1', 'localhost')}/logo.png`],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
      ['a private network address', () => 'http://10.0.0.1/logo.png'],
    ] as const) {
      it(`refuses ${name} with a 400 naming the reason, not charged`, async () => {
        const before = hits.get('/logo.png') ?? 0
        const res = await post(`${strict.url.invoice}/invoice`, { items: [item], logo_url: url() }, { key: strictKey })
        assert.equal(res.status, 400, res.text)
        assert.deepEqual(res.json, { error: 'logo_url points to a private or reserved address' })
        assert.equal(hits.get('/logo.png') ?? 0, before, 'the private server was never contacted')
        const u = await get(`${strict.url.invoice}/usage`, { key: strictKey })
        assert.equal(u.json.invoices_this_month, 0)
      })
    }
  })
})
