// mocha runs TypeScript through tsx; test/setup.ts starts the embedded Redis and MongoDB once.
module.exports = {
  'node-option': ['import=tsx'],
  require: ['test/setup.ts'],
  spec: ['test/**/*.test.ts'],
  timeout: 60000,
  reporter: 'test/reporter.cjs',
  exit: true,
}
