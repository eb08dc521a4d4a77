// A throwaway PostgreSQL 17 server with pgvector, for acolyte's tests:
// PGlite (PostgreSQL compiled to WASM) in memory, served on the wire
// protocol at 127.0.0.1 on a free port. It prints the port on stdout once
// it accepts connections, and exits when stdin closes, so a test's
// cleanup, or the death of the test process, stops it.
//
// PGlite is a single PostgreSQL session, so this serves one connection at
// a time (clients use pool_max_conns=1) and any password is accepted.
// Two things the pinned pglite-socket 0.0.22 does not do are done here:
//   - A connection that arrives while another is open waits for it to
//     close instead of being refused. The stock limit is counted when a
//     closed connection's cleanup runs, later than the client sees the
//     close, so a client that reconnects at once (pgx after Init) was
//     refused with "connection reset by peer".
//   - Each connection starts a fresh session (ROLLBACK, DISCARD ALL, then
//     PGlite's own session settings), as on a real server. Otherwise pgx's cached prepared statements from
//     the previous connection collide: "prepared statement
//     stmtcache_... already exists" (SQLSTATE 42P05).
// This relies on the server's handleConnection and handlers, which the
// package.json pins.
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite/vector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

class OneAtATime extends PGLiteSocketServer {
  constructor(options) {
    // The gate below is the limit; the stock one would refuse a client
    // while a closed connection is still being cleaned up.
    super({ ...options, maxConnections: 1000 })
    this.waiting = []
    this.busy = false
    this.sessionSettings = []
  }

  // PGlite's session starts with settings (search_path = public) that
  // DISCARD ALL would reset to its command line's (pg_catalog alone, so
  // the next client's tables went into pg_catalog and its queries did not
  // find public's). Record them to restore after each reset.
  // Two of PGlite's command-line settings differ from a stock server's
  // in ways a client sees: enable_seqscan is off, so the planner would
  // pick indexes no real server picks (and timings would mislead), and
  // client_min_messages is debug3, which sends every client a stream of
  // DEBUG notices. Both get PostgreSQL's defaults.
  async start() {
    await this.db.waitReady
    await this.db.exec('SET enable_seqscan = on; SET client_min_messages = notice')
    const r = await this.db.query(`SELECT name, setting FROM pg_settings WHERE source = 'session'`)
    this.sessionSettings = r.rows
    return super.start()
  }

  async handleConnection(socket) {
    if (this.busy) {
      this.waiting.push(socket)
      socket.once('close', () => {
        this.waiting = this.waiting.filter((s) => s !== socket)
      })
      return
    }
    this.busy = true
    const before = new Set(this.handlers)
    await super.handleConnection(socket)
    const handler = [...this.handlers].find((h) => !before.has(h))
    if (!handler) {
      await this.next()
      return
    }
    let ended = false
    const end = async () => {
      if (ended) return
      ended = true
      // The handler rolls back its open transaction and drops its queued
      // messages when it detaches; wait for that before resetting.
      while (handler.isAttached) await new Promise((r) => setTimeout(r, 1))
      this.handlers.delete(handler)
      await this.next()
    }
    handler.addEventListener('close', end)
    handler.addEventListener('error', end)
  }

  async next() {
    try {
      // Unconditionally: db.isInTransaction() does not see a transaction
      // begun over the wire, and outside one ROLLBACK only warns.
      await this.db.exec('ROLLBACK')
      await this.db.exec('DISCARD ALL')
      for (const { name, setting } of this.sessionSettings) {
        await this.db.query('SELECT set_config($1, $2, false)', [name, setting])
      }
    } catch (err) {
      process.stderr.write(`pglite: resetting the session: ${err}\n`)
    }
    this.busy = false
    const socket = this.waiting.shift()
    if (socket) await this.handleConnection(socket)
  }
}

const db = await PGlite.create({ extensions: { vector } })
// Port 0: the system picks a free port, and start() records it.
const server = new OneAtATime({ db, port: 0, host: '127.0.0.1' })
server.addEventListener('listening', (e) => {
  process.stdout.write(`${e.detail.port}\n`)
})
await server.start()

let stopping = false
const stop = async () => {
  if (stopping) return
  stopping = true
  await server.stop()
  await db.close()
  process.exit(0)
}
process.stdin.on('end', stop)
process.stdin.on('close', stop)
process.stdin.resume()
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, stop)
