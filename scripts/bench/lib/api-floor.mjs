// @ts-check
// The floor under the invoice API process's CPU per request (bench:invoice, docs/benchmarks.md
// "Invoice rendering, end to end"): a bare Koa app doing the least an API that hands the render to
// a worker and answers with the PDF needs — read and parse the JSON body, one MongoDB update (the
// quota unit), one Redis push (the job), wait for the worker's pub/sub message carrying the PDF,
// answer it. No validation, key lookup, logging, metrics, admission or retry of any kind: what the
// same machine charges for the round trips and the HTTP exchange alone. Plain JavaScript, a
// process of its own like the measured API.
//
//   node api-floor.mjs api     listens on 127.0.0.1:QW_FLOOR_PORT (0: a free port), prints "listening <url>"
//   node api-floor.mjs worker  pops the jobs and publishes the bytes of the file QW_FLOOR_PDF for
//                              each (its CPU is not the floor's: the bench measures the api process)
//
// Both read REDIS_URL, MONGO_URL, MONGO_DB and QW_FLOOR_PREFIX (keys and channel names).
import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import Koa from 'koa'
import { Redis } from 'ioredis'
import { MongoClient } from 'mongodb'

const prefix = process.env.QW_FLOOR_PREFIX ?? 'floor'
const jobs = `${prefix}:jobs`
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

if (process.argv[2] === 'worker') {
  const pdf = readFileSync(process.env.QW_FLOOR_PDF ?? '')
  const pop = new Redis(redisUrl)
  const pub = new Redis(redisUrl)
  process.stdin.on('end', () => process.exit(0)).resume()
  for (;;) {
    const got = await pop.brpop(jobs, 0)
    if (!got) continue
    const { channel, id } = JSON.parse(got[1])
    await pub.publish(channel, Buffer.concat([Buffer.from(`${id}\n`), pdf]))
  }
} else {
  const mongo = await MongoClient.connect(process.env.MONGO_URL ?? 'mongodb://127.0.0.1:27017')
  const usage = mongo.db(process.env.MONGO_DB ?? 'floor').collection('floor_usage')
  await usage.updateOne({ _id: /** @type {any} */ ('account') }, { $setOnInsert: { count: 0 } }, { upsert: true })
  const redis = new Redis(redisUrl)
  const sub = new Redis(redisUrl)
  const channel = `${prefix}:wake:${randomBytes(6).toString('hex')}`
  /** @type {Map<string, (pdf: Buffer) => void>} */
  const waiting = new Map()
  sub.on('messageBuffer', (_ch, message) => {
    const cut = message.indexOf(10)
    const id = message.toString('utf8', 0, cut)
    waiting.get(id)?.(message.subarray(cut + 1))
    waiting.delete(id)
  })
  await sub.subscribe(channel)
  let n = 0

  const app = new Koa()
  app.silent = true
  app.use(async (ctx) => {
    const chunks = []
    for await (const c of ctx.req) chunks.push(c)
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    await usage.updateOne({ _id: /** @type {any} */ ('account') }, { $inc: { count: 1 } })
    const id = String(++n)
    const answered = new Promise((resolve) => waiting.set(id, resolve))
    await redis.lpush(jobs, JSON.stringify({ id, channel, request }))
    ctx.type = 'application/pdf'
    ctx.body = await answered
  })
  const server = app.listen(Number(process.env.QW_FLOOR_PORT ?? 0), '127.0.0.1', () => {
    const a = /** @type {import('node:net').AddressInfo} */ (server.address())
    console.log(`listening http://127.0.0.1:${a.port}`)
  })
  process.stdin.on('end', () => process.exit(0)).resume()
}
