// Root hooks: one embedded redis-server and one MongoDB-compatible engine for the whole run.
// Each test file then gets its own database and queue prefix (test/helpers/system.ts).
// Modules are imported inside the hook so that the environment below is set before the logger
// reads it.
process.env.NODE_ENV = 'test'
process.env.LOG_LEVEL ??= 'silent'

let stops: Array<() => Promise<void>> = []

export async function mochaGlobalSetup() {
  const { startRedisServer } = await import('../src/embedded/redis-server.ts')
  const { startMongoEngine } = await import('../src/embedded/mongo-engine.ts')
  const [redis, mongo] = await Promise.all([startRedisServer(), startMongoEngine()])
  process.env.TEST_REDIS_URL = redis.url
  process.env.TEST_MONGO_URL = mongo.url
  stops = [() => redis.child.stop(), () => mongo.child.stop()]
}

export async function mochaGlobalTeardown() {
  await Promise.all(stops.map((s) => s()))
}
