// deploy/kubernetes/ cannot be applied here (no cluster): render the kustomize base and every
// overlay offline, validate each object against the Kubernetes, KEDA and Prometheus Operator
// schemas (kubernetes-models), and check what a schema cannot: commands against src/main.ts,
// probes and ports against the config, the grace period against the drain, env against the config
// schema, KEDA queries against the metrics /metrics exports, and the budgets, autoscalers and
// network policies each role needs. Every problem names the manifest file and the field.
//
// Rendering: a small renderer of the kustomize subset deploy/kubernetes uses (resources, components,
// strategic-merge patches of maps), so the test needs no binary; where `kubectl` exists, its
// `kubectl kustomize` output must equal ours, which keeps the renderer honest.
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { parse, parseAllDocuments } from 'yaml'
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1'
import { Deployment, StatefulSet } from 'kubernetes-models/apps/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1'
import { ScaledObject } from '@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject'
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor'
import { JOBS } from '../jobs/index.ts'
import { parseCommand } from '../src/main.ts'
import { loadConfig } from '../src/platform/config.ts'
import { registry } from '../src/platform/ops/metrics.ts'
import '../src/platform/ops/queue-signal.ts'
import '../src/platform/ops/queue-depth.ts'
import { SERVICES } from '../src/services.ts'
import { API_RSS_PEAK_MB, WORKER_RSS_PEAK_MB } from '../scripts/capacity/measured.ts'
import { API_POD_CORES, RENDER_POD_CORES } from '../scripts/capacity/pod-rates.ts'

const ROOT = 'deploy/kubernetes'
const TARGETS = ['base', 'overlays/redis-standalone', 'overlays/redis-sentinel', 'overlays/redis-cluster']
/** The image of the Dockerfile; its ENTRYPOINT is `node --import tsx src/main.ts`, so `args` are the CLI's. */
const IMAGE = 'queueworks'

type Obj = Record<string, any>
/** A rendered object and the manifest file it came from (patches keep the file of the object they patch). */
interface Item {
  file: string
  obj: Obj
}

// ---------------------------------------------------------------- the kustomize subset

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'components', 'patches'])

function readKustomization(dir: string): Obj {
  const file = path.join(dir, 'kustomization.yaml')
  const k = parse(readFileSync(file, 'utf8')) as Obj
  for (const key of Object.keys(k)) {
    if (!SUPPORTED.has(key)) throw new Error(`${file}: "${key}" is outside the kustomize subset this test renders (resources, components, patches): extend the renderer or drop it`)
  }
  return k
}

const keyOf = (o: Obj) => `${o.apiVersion} ${o.kind} ${o.metadata?.name}`

/** A strategic-merge patch of maps only (what the overlays use): lists would need merge keys. */
function mergeMaps(target: Obj, patch: Obj, where: string): void {
  for (const [k, v] of Object.entries(patch)) {
    if (Array.isArray(v)) throw new Error(`${where}: patches a list at "${k}", which this renderer does not merge`)
    if (v && typeof v === 'object' && target[k] && typeof target[k] === 'object') mergeMaps(target[k], v, where)
    else if (v === null) delete target[k]
    else target[k] = v
  }
}

function applyPatches(items: Item[], dir: string, patches: Obj[] = []): void {
  for (const p of patches) {
    if (!p.path || p.target || p.patch) throw new Error(`${dir}: only "patches: - path: <strategic merge file>" is rendered`)
    const file = path.join(dir, p.path)
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const patch = doc.toJS() as Obj
      const hit = items.find((i) => keyOf(i.obj) === keyOf(patch))
      if (!hit) throw new Error(`${file}: patches ${keyOf(patch)}, which no resource defines`)
      mergeMaps(hit.obj, patch, file)
    }
  }
}

/** What `kubectl kustomize <dir>` renders, for the subset above, each object with its file. */
export function render(dir: string): Item[] {
  const k = readKustomization(dir)
  const items: Item[] = []
  for (const r of k.resources ?? []) {
    const p = path.join(dir, r)
    if (statSync(p).isDirectory()) items.push(...render(p))
    else for (const doc of parseAllDocuments(readFileSync(p, 'utf8'))) items.push({ file: p, obj: doc.toJS() as Obj })
  }
  for (const c of k.components ?? []) {
    const cdir = path.join(dir, c)
    const ck = readKustomization(cdir)
    if (ck.kind !== 'Component') throw new Error(`${cdir}: listed under components but is a ${ck.kind}`)
    for (const r of ck.resources ?? []) for (const doc of parseAllDocuments(readFileSync(path.join(cdir, r), 'utf8'))) items.push({ file: path.join(cdir, r), obj: doc.toJS() as Obj })
    applyPatches(items, cdir, ck.patches)
  }
  applyPatches(items, dir, k.patches)
  const seen = new Set<string>()
  for (const i of items) {
    if (seen.has(keyOf(i.obj))) throw new Error(`${i.file}: ${keyOf(i.obj)} is defined twice`)
    seen.add(keyOf(i.obj))
  }
  return items
}

// ---------------------------------------------------------------- schemas

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1 ConfigMap': ConfigMap,
  'v1 Secret': Secret,
  'v1 Service': Service,
  'apps/v1 Deployment': Deployment,
  'apps/v1 StatefulSet': StatefulSet,
  'autoscaling/v2 HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1 PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1 NetworkPolicy': NetworkPolicy,
  'keda.sh/v1alpha1 ScaledObject': ScaledObject,
  'monitoring.coreos.com/v1 ServiceMonitor': ServiceMonitor,
}

function schemaProblems(items: Item[]): string[] {
  const out: string[] = []
  for (const { file, obj } of items) {
    const model = MODELS[`${obj.apiVersion} ${obj.kind}`]
    if (!model) {
      out.push(`${file} ${obj.kind}/${obj.metadata?.name}: apiVersion ${obj.apiVersion} kind ${obj.kind} has no schema here`)
      continue
    }
    try {
      new model(obj).validate()
    } catch (err) {
      out.push(`${file} ${obj.kind}/${obj.metadata?.name}: schema: ${(err as Error).message}`)
    }
  }
  return out
}

// ---------------------------------------------------------------- invariants

/** Variables the code reads outside the config schema (checked below to be read in src/). */
const READ_OUTSIDE_CONFIG = ['OTEL_SERVICE_NAME']
/** Valid stand-ins for values a Secret leaves empty, so that the config schema checks their names. */
const SECRET_SAMPLES: Record<string, string> = {
  ADMIN_TOKEN: 'a'.repeat(24),
  SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  STRIPE_SECRET_KEY: 'sk_live_sample',
  STRIPE_WEBHOOK_SECRET: 'whsec_sample',
}
const SERVICE_PORT_VAR: Record<string, string> = { invoice: 'INVOICE_PORT', flags: 'FLAGS_PORT', webhooks: 'WEBHOOKS_PORT' }

const cpuCores = (q: unknown) => (typeof q === 'number' ? q : String(q).endsWith('m') ? Number(String(q).slice(0, -1)) / 1000 : Number(q))
const memMiB = (q: unknown) => {
  const m = /^(\d+(?:\.\d+)?)(Mi|Gi|M|G)?$/.exec(String(q))
  if (!m) return NaN
  const n = Number(m[1])
  return { Mi: n, Gi: n * 1024, M: (n * 1e6) / 2 ** 20, G: (n * 1e9) / 2 ** 20, undefined: n / 2 ** 20 }[String(m[2])]!
}
const matches = (selector: Record<string, string> = {}, labels: Record<string, string> = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v)

/** PromQL metric names of a query: identifiers followed by `{`, or bare inside an aggregation. */
function promMetrics(query: string): { name: string; labels: Record<string, string[]> }[] {
  const out: { name: string; labels: Record<string, string[]> }[] = []
  for (const m of query.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}/g)) {
    const labels: Record<string, string[]> = {}
    for (const l of m[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)) labels[l[1]!] = l[3]!.split('|')
    out.push({ name: m[1]!, labels })
  }
  for (const m of query.matchAll(/\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\)/g)) out.push({ name: m[1]!, labels: {} })
  return out
}

export function invariantProblems(items: Item[]): string[] {
  const out: string[] = []
  const at = (i: Item, field: string, msg: string) => out.push(`${i.file} ${i.obj.kind}/${i.obj.metadata?.name}: ${field}: ${msg}`)
  const of = (kind: string) => items.filter((i) => i.obj.kind === kind)
  const configMaps = new Map(of('ConfigMap').map((i) => [i.obj.metadata.name, i.obj.data ?? {}]))
  const secrets = new Map(of('Secret').map((i) => [i.obj.metadata.name, { ...(i.obj.stringData ?? {}), ...(i.obj.data ?? {}) }]))
  const allQueues = JOBS.map((j) => j.queue)
  const metricNames = new Set(Object.keys((registry as any)._metrics ?? {}))
  const apps = of('Deployment').filter((d) => d.obj.spec?.template?.spec?.containers?.some((c: Obj) => String(c.image).split(':')[0] === IMAGE))
  const consumed = new Map<string, string[]>() // Deployment name → queues its workers consume
  const apiOf = new Map<string, string>() // Deployment name → service

  for (const d of apps) {
    const pod = d.obj.spec.template
    const labels = pod.metadata?.labels ?? {}
    if (labels['queueworks.io/store-client'] !== 'true') at(d, 'spec.template.metadata.labels', 'queueworks.io/store-client: "true" missing: the stores\' NetworkPolicy would refuse this pod')
    if (!matches(d.obj.spec.selector?.matchLabels, labels)) at(d, 'spec.selector', 'does not match the pod template\'s labels')
    d.obj.spec.template.spec.containers.forEach((c: Obj, ci: number) => {
      const field = (f: string) => `spec.template.spec.containers[${ci}].${f}`
      if (c.command) at(d, field('command'), 'set: it would replace the image\'s entry point (node --import tsx src/main.ts); put the CLI arguments in args')
      let cmd: ReturnType<typeof parseCommand> = null
      try {
        cmd = parseCommand(c.args ?? [])
      } catch (err) {
        at(d, field('args'), `src/main.ts refuses ${JSON.stringify(c.args)}: ${(err as Error).message}`)
        return
      }
      if (!cmd || cmd.cmd === 'start') return at(d, field('args'), `${JSON.stringify(c.args)} is not an api or worker command of src/main.ts`)

      // The environment the process sees: envFrom then env.
      const env: Record<string, string> = {}
      for (const src of c.envFrom ?? []) {
        const ref = src.configMapRef ?? src.secretRef
        const data = src.configMapRef ? configMaps.get(ref.name) : secrets.get(ref.name)
        if (!data) at(d, field('envFrom'), `${src.configMapRef ? 'ConfigMap' : 'Secret'} ${ref.name} is not among the manifests`)
        // An empty Secret value is unset for the config; a stand-in checks that its name is read.
        else for (const [k, v] of Object.entries(data)) env[k] = v === '' && src.secretRef ? (SECRET_SAMPLES[k] ?? 'stand-in') : String(v)
      }
      for (const e of c.env ?? []) env[e.name] = e.value ?? 'from-a-reference'
      let config: ReturnType<typeof loadConfig>
      try {
        config = loadConfig(env)
      } catch (err) {
        return at(d, field('env'), `the config schema refuses it: ${(err as Error).message}`)
      }
      for (const k of Object.keys(env)) {
        if (env[k] !== '' && !(k in config) && !READ_OUTSIDE_CONFIG.includes(k)) at(d, field('env'), `${k} is read by no code (not in src/platform/config.ts)`)
      }
      for (const k of ['REDIS_URL', 'MONGO_URL']) if (!env[k]) at(d, field('env'), `${k} is required by the ${cmd.cmd} role and not set`)
      if (config.HOST !== '0.0.0.0') at(d, field('env'), `HOST is ${config.HOST}: probes and Services could not reach the pod`)

      // The port the process listens on, which probes and Services must use.
      let port: number | undefined
      if (cmd.cmd === 'api') {
        if (cmd.services.length !== 1) at(d, field('args'), 'an API Deployment runs exactly one service (each scales on its own)')
        const def = SERVICES.find((s) => s.name === cmd.services[0])
        if (!def) return at(d, field('args'), `unknown service ${cmd.services[0]}`)
        port = def.port(config)
        apiOf.set(d.obj.metadata.name, def.name)
        if (config.TRUST_PROXY !== true) at(d, field('env'), 'TRUST_PROXY is not true: behind the Ingress every client would share its address')
      } else {
        const unknown = cmd.queues.filter((q) => !allQueues.includes(q))
        if (unknown.length) at(d, field('args'), `--queues names ${unknown.join(', ')}, which jobs/index.ts does not define`)
        consumed.set(d.obj.metadata.name, cmd.queues.length ? cmd.queues : allQueues)
        port = config.WORKER_PORT
        if (port === undefined) return at(d, field('env'), 'WORKER_PORT is not set: a worker would serve no probes or metrics')
      }
      const named = new Map<string, number>((c.ports ?? []).map((p: Obj) => [p.name, p.containerPort]))
      if (![...named.values()].includes(port)) at(d, field('ports'), `no containerPort ${port}, the port the process listens on`)
      const portOf = (p: unknown) => (typeof p === 'number' ? p : named.get(String(p)))
      for (const [probe, wanted] of [['livenessProbe', '/healthz'], ['readinessProbe', '/readyz'], ['startupProbe', '/healthz']] as const) {
        const get = c[probe]?.httpGet
        if (!get) {
          if (probe !== 'startupProbe') at(d, field(probe), `missing: it must be an httpGet on ${wanted}`)
          continue
        }
        if (get.path !== wanted) at(d, field(`${probe}.httpGet.path`), `${get.path}, not ${wanted}`)
        if (portOf(get.port) !== port) at(d, field(`${probe}.httpGet.port`), `${get.port} is not the process's port ${port}`)
      }

      // The drain: preStop, then SIGTERM → SHUTDOWN_TIMEOUT_MS, then exit 1 at +2 s. SIGKILL must come after.
      const pre = c.lifecycle?.preStop
      const preStopS = pre?.exec ? Number(/^sleep$/.test(pre.exec.command?.[0]) ? pre.exec.command[1] : NaN) : (pre?.sleep?.seconds ?? 0)
      if (Number.isNaN(preStopS)) at(d, field('lifecycle.preStop'), 'only a sleep is understood here')
      const grace = d.obj.spec.template.spec.terminationGracePeriodSeconds ?? 30
      const needed = preStopS + (config.SHUTDOWN_TIMEOUT_MS + 2_000) / 1000
      if (!(grace > needed)) at(d, 'spec.template.spec.terminationGracePeriodSeconds', `${grace} s does not exceed preStop ${preStopS} s + SHUTDOWN_TIMEOUT_MS ${config.SHUTDOWN_TIMEOUT_MS} ms + 2 s`)
      if (cmd.cmd === 'api' && preStopS < 1) at(d, field('lifecycle.preStop'), 'an API needs a preStop wait, or new connections meet a closed port until the endpoints update')

      // Resources from the measured figures.
      const req = c.resources?.requests ?? {}
      const lim = c.resources?.limits ?? {}
      if (!req.cpu || !req.memory || !lim.memory) at(d, field('resources'), 'requests.cpu, requests.memory and limits.memory are all required')
      const peak = cmd.cmd === 'api' ? API_RSS_PEAK_MB : WORKER_RSS_PEAK_MB
      if (lim.memory && memMiB(lim.memory) < (peak * 1e6) / 2 ** 20) at(d, field('resources.limits.memory'), `${lim.memory} is under the measured peak RSS of ${peak} MB`)
      if (cmd.cmd === 'worker' && cmd.queues.includes('invoice-render') && cpuCores(req.cpu) < config.RENDER_CONCURRENCY) {
        at(d, field('resources.requests.cpu'), `${req.cpu} is less than RENDER_CONCURRENCY (${config.RENDER_CONCURRENCY}) cores of render threads`)
      }
      // The capacity planner sizes pods by these requests (scripts/capacity/pod-rates.ts).
      const planned = cmd.cmd === 'api' ? API_POD_CORES : cmd.queues.includes('invoice-render') ? RENDER_POD_CORES : undefined
      if (planned !== undefined && req.cpu && cpuCores(req.cpu) !== planned) at(d, field('resources.requests.cpu'), `${req.cpu}, but the capacity planner sizes this role with ${planned} core(s) per pod`)
    })
  }

  // Every queue is consumed; every queue a request waits on by a pool that never scales to zero.
  const everyConsumed = new Set([...consumed.values()].flat())
  for (const q of allQueues) if (!everyConsumed.has(q)) out.push(`${ROOT}: no worker Deployment consumes ${q} (args --queues)`)
  for (const [name, service] of apiOf) {
    for (const q of SERVICES.find((s) => s.name === service)!.awaits) {
      const pools = [...consumed].filter(([, qs]) => qs.includes(q)).map(([n]) => n)
      const floor = (n: string) => {
        const so = of('ScaledObject').find((s) => s.obj.spec?.scaleTargetRef?.name === n)
        return so ? (so.obj.spec.minReplicaCount ?? 0) : (apps.find((a) => a.obj.metadata.name === n)?.obj.spec.replicas ?? 1)
      }
      if (!pools.some((p) => floor(p) >= 1)) out.push(`${ROOT}: ${name}'s requests wait on ${q}, and no pool consuming it keeps a replica (minReplicaCount ≥ 1)`)
    }
  }

  // Services reach pods on ports they have.
  for (const s of of('Service')) {
    const pods = [...apps, ...of('StatefulSet')].filter((d) => matches(s.obj.spec?.selector, d.obj.spec.template.metadata?.labels))
    if (!pods.length) at(s, 'spec.selector', 'selects no pod template')
    for (const p of s.obj.spec?.ports ?? []) {
      const names = pods.flatMap((d) => d.obj.spec.template.spec.containers.flatMap((c: Obj) => (c.ports ?? []).flatMap((cp: Obj) => [cp.name, cp.containerPort])))
      if (pods.length && !names.includes(p.targetPort ?? p.port)) at(s, `spec.ports[${p.name}].targetPort`, `${p.targetPort} is no container port of the pods it selects`)
    }
  }

  // A disruption budget per Deployment that lets a node drain go on.
  for (const d of apps) {
    const pdbs = of('PodDisruptionBudget').filter((p) => matches(p.obj.spec?.selector?.matchLabels, d.obj.spec.template.metadata?.labels))
    if (pdbs.length !== 1) at(d, 'PodDisruptionBudget', `${pdbs.length} budgets select its pods; one is needed`)
    for (const p of pdbs) if (!(Number(p.obj.spec.maxUnavailable) >= 1)) at(p, 'spec.maxUnavailable', 'must be ≥ 1, or a pool of one replica blocks every node drain')
  }

  // Autoscalers: an HPA per API, a ScaledObject per autoscaled pool, never both on one Deployment.
  const hpaTargets = of('HorizontalPodAutoscaler').map((h) => h.obj.spec.scaleTargetRef?.name)
  const soTargets = of('ScaledObject').map((s) => s.obj.spec.scaleTargetRef?.name)
  for (const name of apiOf.keys()) if (!hpaTargets.includes(name)) out.push(`${ROOT}: the API Deployment ${name} has no HorizontalPodAutoscaler`)
  for (const h of of('HorizontalPodAutoscaler')) if (!apps.some((a) => a.obj.metadata.name === h.obj.spec.scaleTargetRef?.name)) at(h, 'spec.scaleTargetRef.name', 'names no Deployment')
  for (const n of hpaTargets) if (soTargets.includes(n)) out.push(`${ROOT}: ${n} has both an HPA and a ScaledObject`)
  for (const so of of('ScaledObject')) {
    const target = so.obj.spec.scaleTargetRef?.name
    const queues = consumed.get(target)
    if (!queues) {
      at(so, 'spec.scaleTargetRef.name', `${target} is no worker Deployment`)
      continue
    }
    if (queues.includes('invoice-render') && !(so.obj.spec.minReplicaCount >= 1)) at(so, 'spec.minReplicaCount', 'the render pool must never scale to zero: single invoices are refused while no worker consumes invoice-render')
    so.obj.spec.triggers.forEach((t: Obj, ti: number) => {
      const field = `spec.triggers[${ti}]`
      if (t.type !== 'prometheus') return at(so, `${field}.type`, `${t.type}: only the prometheus scaler on the queue signal is expected`)
      if (t.metadata?.ignoreNullValues !== 'false') at(so, `${field}.metadata.ignoreNullValues`, 'must be "false": a missing series (exporter handover) must not read as 0')
      if (!(Number(t.metadata?.threshold) > 0)) at(so, `${field}.metadata.threshold`, 'must be a number > 0')
      const used = promMetrics(String(t.metadata?.query ?? ''))
      if (!used.length) at(so, `${field}.metadata.query`, 'names no metric')
      for (const m of used) {
        // A histogram's series are its name with _count, _sum or _bucket.
        const name = metricNames.has(m.name) ? m.name : m.name.replace(/_(count|sum|bucket)$/, '')
        if (!metricNames.has(name) || (name !== m.name && (registry.getSingleMetric(name) as any)?.constructor?.name !== 'Histogram')) {
          at(so, `${field}.metadata.query`, `${m.name} is not a metric /metrics exports (src/platform/ops/)`)
          continue
        }
        const labelNames: string[] = (registry.getSingleMetric(name) as any)?.labelNames ?? []
        for (const [label, values] of Object.entries(m.labels)) {
          if (!labelNames.includes(label)) at(so, `${field}.metadata.query`, `${name} has no label ${label}`)
          if (label === 'queue') {
            for (const q of values) {
              if (!allQueues.includes(q)) at(so, `${field}.metadata.query`, `queue "${q}" is no queue of jobs/index.ts`)
              else if (!queues.includes(q)) at(so, `${field}.metadata.query`, `queue "${q}" is not consumed by ${target}, which this scales`)
            }
          }
        }
      }
    })
  }

  // Network: APIs open on their port; stores only from the system's pods.
  const apiPolicy = of('NetworkPolicy').find((n) => apps.some((a) => apiOf.has(a.obj.metadata.name) && matches(n.obj.spec.podSelector?.matchLabels, a.obj.spec.template.metadata.labels)))
  if (!apiPolicy) out.push(`${ROOT}: no NetworkPolicy selects the API pods`)
  const storePolicy = of('NetworkPolicy').find((n) => n.obj.spec.podSelector?.matchLabels?.['queueworks.io/store'] === 'true')
  if (!storePolicy) out.push(`${ROOT}: no NetworkPolicy restricts the stores (queueworks.io/store)`)
  else {
    const from = storePolicy.obj.spec.ingress?.flatMap((r: Obj) => r.from ?? [null]) ?? []
    if (from.some((f: Obj | null) => !f || !f.podSelector || f.namespaceSelector || Object.keys(f.podSelector.matchLabels ?? {}).length === 0)) {
      at(storePolicy, 'spec.ingress', 'lets pods other than the system\'s reach the stores')
    }
  }
  for (const s of of('StatefulSet')) {
    const labels = s.obj.spec.template.metadata?.labels ?? {}
    if (labels['queueworks.io/store'] !== 'true') at(s, 'spec.template.metadata.labels', 'a store must carry queueworks.io/store: "true" so that its NetworkPolicy applies')
  }
  return out
}

// ---------------------------------------------------------------- tests

const rendered = new Map(TARGETS.map((t) => [t, render(path.join(ROOT, t))]))
const clone = (items: Item[]) => items.map((i) => ({ file: i.file, obj: structuredClone(i.obj) }))
const find = (items: Item[], kind: string, name: string) => items.find((i) => i.obj.kind === kind && i.obj.metadata.name === name)!.obj

const hasKubectl = spawnSync('kubectl', ['version', '--client'], { stdio: 'ignore' }).status === 0
const sortKey = (o: Obj) => `${o.kind}/${o.metadata?.name}`

describe('deploy/kubernetes: manifests render offline, validate against the schemas and agree with the code', () => {
  for (const target of TARGETS) {
    describe(target, () => {
      const items = rendered.get(target)!

      it('every object validates against its Kubernetes, KEDA or Prometheus Operator schema', () => {
        assert.ok(items.length >= 20, `${items.length} objects`)
        assert.deepEqual(schemaProblems(items), [])
      })

      it('commands, probes, ports, drain, env, resources, budgets, autoscalers and network policies agree with the code', () => {
        assert.deepEqual(invariantProblems(items), [])
      })

      it(`renders as \`kubectl kustomize\` does${hasKubectl ? '' : ' (skipped: no kubectl here)'}`, function () {
        if (!hasKubectl) return this.skip()
        const theirs = parseAllDocuments(execFileSync('kubectl', ['kustomize', path.join(ROOT, target)], { encoding: 'utf8' })).map((d) => d.toJS() as Obj)
        const ours = items.map((i) => i.obj)
        assert.deepEqual([...ours].sort((a, b) => sortKey(a).localeCompare(sortKey(b))), theirs.sort((a, b) => sortKey(a).localeCompare(sortKey(b))))
      })
    })
  }

  it('the overlays point every pod at their Redis and at a MongoDB replica set through the ConfigMap alone', () => {
    const url = (t: string, k: string) => find(rendered.get(t)!, 'ConfigMap', 'queueworks-config').data[k]
    assert.match(url('overlays/redis-sentinel', 'REDIS_URL'), /^redis\+sentinel:\/\/([\w.-]+:\d+,){2}[\w.-]+:\d+\/mymaster$/)
    assert.match(url('overlays/redis-cluster', 'REDIS_URL'), /^redis\+cluster:\/\//)
    assert.equal(url('overlays/redis-standalone', 'REDIS_URL'), 'redis://redis:6379')
    for (const t of TARGETS.slice(1)) assert.match(url(t, 'MONGO_URL'), /[?&]replicaSet=\w+/, t)
    const redis = find(rendered.get('overlays/redis-standalone')!, 'StatefulSet', 'redis').spec.template.spec.containers[0].args.join(' ')
    assert.match(redis, /--appendonly yes .*--maxmemory \d+[mg]b --maxmemory-policy noeviction/)
  })

  it('the variables read outside the config schema are read in src/', () => {
    const src = execFileSync('grep', ['-rhoE', 'process\\.env\\.[A-Z_]+', 'src'], { encoding: 'utf8' })
    for (const v of READ_OUTSIDE_CONFIG) assert.ok(src.includes(`process.env.${v}`), v)
  })
})

describe('deploy/kubernetes: each check fails, naming the manifest and the field', () => {
  const base = rendered.get('overlays/redis-standalone')!
  const RENDER = 'deploy/kubernetes/base/worker-render.yaml'
  const INVOICE = 'deploy/kubernetes/base/api-invoice.yaml'
  const cases: [string, (items: Item[]) => void, RegExp][] = [
    ['a container port as text', (i) => (find(i, 'Deployment', 'queueworks-invoice').spec.template.spec.containers[0].ports[0].containerPort = '3001'), /api-invoice\.yaml Deployment\/queueworks-invoice: schema: .*containerPort must be integer/],
    ['a KEDA minReplicaCount as text', (i) => (find(i, 'ScaledObject', 'queueworks-render').spec.minReplicaCount = 'one'), /worker-render\.yaml ScaledObject\/queueworks-render: schema: .*minReplicaCount/],
    ['a grace period under the drain', (i) => (find(i, 'Deployment', 'queueworks-worker-render').spec.template.spec.terminationGracePeriodSeconds = 27), new RegExp(`${RENDER} Deployment/queueworks-worker-render: spec.template.spec.terminationGracePeriodSeconds: 27 s`)],
    ['SHUTDOWN_TIMEOUT_MS raised past the grace period', (i) => (find(i, 'ConfigMap', 'queueworks-config').data.SHUTDOWN_TIMEOUT_MS = '40000'), /terminationGracePeriodSeconds: 40 s does not exceed preStop 5 s \+ SHUTDOWN_TIMEOUT_MS 40000/],
    ['a liveness probe on /readyz', (i) => (find(i, 'Deployment', 'queueworks-invoice').spec.template.spec.containers[0].livenessProbe.httpGet.path = '/readyz'), new RegExp(`${INVOICE} Deployment/queueworks-invoice: spec.template.spec.containers\\[0\\].livenessProbe.httpGet.path: /readyz, not /healthz`)],
    ['a probe on another port', (i) => (find(i, 'Deployment', 'queueworks-flags').spec.template.spec.containers[0].readinessProbe.httpGet.port = 3001), /readinessProbe\.httpGet\.port: 3001 is not the process's port 3002/],
    ['a queue that does not exist', (i) => (find(i, 'Deployment', 'queueworks-worker-io').spec.template.spec.containers[0].args[2] = 'capture-forward,capture-replays'), /worker-io\.yaml Deployment\/queueworks-worker-io: spec.template.spec.containers\[0\].args: --queues names capture-replays/],
    ['a flag main.ts refuses', (i) => (find(i, 'Deployment', 'queueworks-worker-io').spec.template.spec.containers[0].args[4] = '1000'), /args: src\/main\.ts refuses .*--concurrency must be an integer/],
    ['a command that is not a role', (i) => (find(i, 'Deployment', 'queueworks-flags').spec.template.spec.containers[0].args = ['serve']), /api-flags\.yaml Deployment\/queueworks-flags: .*args: \["serve"\] is not an api or worker command/],
    ['a queue no pool consumes', (i) => (find(i, 'Deployment', 'queueworks-worker-ops').spec.template.spec.containers[0].args[2] = 'usage-reset'), /no worker Deployment consumes outbox-sweep/],
    ['an env var no code reads', (i) => find(i, 'Deployment', 'queueworks-invoice').spec.template.spec.containers[0].env.push({ name: 'RENDER_THREADS', value: '4' }), /api-invoice\.yaml Deployment\/queueworks-invoice: spec.template.spec.containers\[0\].env: RENDER_THREADS is read by no code/],
    ['a required env var missing', (i) => delete find(i, 'ConfigMap', 'queueworks-config').data.MONGO_URL, /env: MONGO_URL is required by the api role and not set/],
    ['a value the config refuses', (i) => (find(i, 'ConfigMap', 'queueworks-config').data.RENDER_CONCURRENCY = 'two'), /env: the config schema refuses it: Invalid configuration: RENDER_CONCURRENCY/],
    ['a Secret key no code reads', (i) => (find(i, 'Secret', 'queueworks-secrets').stringData.STRIPE_KEY = ''), /env: STRIPE_KEY is read by no code/],
    ['a KEDA query on a metric nobody exports', (i) => (find(i, 'ScaledObject', 'queueworks-render').spec.triggers[0].metadata.query = 'sum(queue_waiting{queue="invoice-render"})'), new RegExp(`${RENDER} ScaledObject/queueworks-render: spec.triggers\\[0\\].metadata.query: queue_waiting is not a metric`)],
    ['a KEDA query on a _count of a gauge', (i) => (find(i, 'ScaledObject', 'queueworks-render').spec.triggers[1].metadata.query = 'sum(rate(queue_waiting_jobs_count{queue="invoice-render"}[1m]))'), /spec.triggers\[1\].metadata.query: queue_waiting_jobs_count is not a metric/],
    ['a KEDA query on a queue the pool does not consume', (i) => (find(i, 'ScaledObject', 'queueworks-io').spec.triggers[0].metadata.query = 'sum(queue_waiting_jobs{queue="invoice-render"})'), /ScaledObject\/queueworks-io: spec.triggers\[0\].metadata.query: queue "invoice-render" is not consumed by queueworks-worker-io/],
    ['a KEDA query on a label the metric lacks', (i) => (find(i, 'ScaledObject', 'queueworks-render').spec.triggers[2].metadata.query = 'max(queue_oldest_waiting_age_seconds{state="waiting"})'), /queue_oldest_waiting_age_seconds has no label state/],
    ['the render pool allowed to reach zero', (i) => (find(i, 'ScaledObject', 'queueworks-render').spec.minReplicaCount = 0), /ScaledObject\/queueworks-render: spec.minReplicaCount: the render pool must never scale to zero/],
    ['null values read as 0', (i) => (find(i, 'ScaledObject', 'queueworks-io').spec.triggers[0].metadata.ignoreNullValues = 'true'), /worker-io\.yaml ScaledObject\/queueworks-io: spec.triggers\[0\].metadata.ignoreNullValues/],
    ['a Deployment without its budget', (i) => i.splice(i.findIndex((x) => x.obj.kind === 'PodDisruptionBudget' && x.obj.metadata.name === 'queueworks-worker-io'), 1), /worker-io\.yaml Deployment\/queueworks-worker-io: PodDisruptionBudget: 0 budgets/],
    ['a budget that blocks drains', (i) => (find(i, 'PodDisruptionBudget', 'queueworks-worker-render').spec.maxUnavailable = 0), /PodDisruptionBudget\/queueworks-worker-render: spec.maxUnavailable/],
    ['an API without its HPA', (i) => i.splice(i.findIndex((x) => x.obj.kind === 'HorizontalPodAutoscaler' && x.obj.metadata.name === 'queueworks-webhooks'), 1), /queueworks-webhooks has no HorizontalPodAutoscaler/],
    ['a Service onto a port the pods lack', (i) => (find(i, 'Service', 'invoice').spec.ports[0].targetPort = 'web'), /api-invoice\.yaml Service\/invoice: spec.ports\[http\].targetPort: web is no container port/],
    ['a memory limit under the measured peak', (i) => (find(i, 'Deployment', 'queueworks-worker-render').spec.template.spec.containers[0].resources.limits.memory = '512Mi'), /resources.limits.memory: 512Mi is under the measured peak RSS of 608 MB/],
    ['render threads without their cores', (i) => (find(i, 'Deployment', 'queueworks-worker-render').spec.template.spec.containers[0].resources.requests.cpu = '1'), /resources.requests.cpu: 1 is less than RENDER_CONCURRENCY \(2\)/],
    ['an API pod sized apart from the planner', (i) => (find(i, 'Deployment', 'queueworks-flags').spec.template.spec.containers[0].resources.requests.cpu = '1500m'), /api-flags\.yaml .*resources.requests.cpu: 1500m, but the capacity planner sizes this role with 1 core/],
    ['an API pod outside the stores\' clients', (i) => delete find(i, 'Deployment', 'queueworks-flags').spec.template.metadata.labels['queueworks.io/store-client'], /api-flags\.yaml Deployment\/queueworks-flags: spec.template.metadata.labels: queueworks.io\/store-client/],
    ['stores open to any pod', (i) => (find(i, 'NetworkPolicy', 'queueworks-stores').spec.ingress = [{}]), /network-policies\.yaml NetworkPolicy\/queueworks-stores: spec.ingress: lets pods other than the system's/],
    ['a command replacing the entry point', (i) => (find(i, 'Deployment', 'queueworks-invoice').spec.template.spec.containers[0].command = ['node']), /containers\[0\].command: set/],
    ['an API without a preStop wait', (i) => delete find(i, 'Deployment', 'queueworks-webhooks').spec.template.spec.containers[0].lifecycle, /api-webhooks\.yaml .*lifecycle.preStop: an API needs a preStop wait/],
    ['an API that trusts no proxy', (i) => (find(i, 'Deployment', 'queueworks-invoice').spec.template.spec.containers[0].env[1].value = 'false'), /env: TRUST_PROXY is not true/],
  ]
  for (const [what, breakIt, expected] of cases) {
    it(what, () => {
      const items = clone(base)
      breakIt(items)
      const problems = [...schemaProblems(items), ...invariantProblems(items)]
      assert.ok(problems.some((p) => expected.test(p)), `expected a problem matching ${expected}, got:\n${problems.join('\n') || '(none)'}`)
    })
  }

  it('the renderer refuses kustomize features it does not render instead of ignoring them', () => {
    assert.throws(() => mergeMaps({ a: [1] }, { a: [2] }, 'x.yaml'), /x\.yaml: patches a list at "a"/)
    assert.ok(existsSync(path.join(ROOT, 'base/kustomization.yaml')))
  })
})
