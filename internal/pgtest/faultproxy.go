package pgtest

import (
	"fmt"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy on loopback in front of a test server's socket that
// can delay, stall or drop the traffic, to test what a slow or broken
// network does to a client. Its zero faults forward everything at once.
type Proxy struct {
	ln       net.Listener
	target   string // the server's unix socket
	accepted atomic.Int64

	mu      sync.Mutex
	changed *sync.Cond // signalled when a fault changes
	delay   time.Duration
	stalled bool
	refuse  bool
	conns   map[net.Conn]bool
}

// Proxy starts a fault proxy in front of s that lives until tb's cleanup.
func (s *Server) Proxy(tb testing.TB) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{ln: ln, target: filepath.Join(s.dir, ".s.PGSQL.5432"), conns: map[net.Conn]bool{}}
	p.changed = sync.NewCond(&p.mu)
	go p.serve()
	tb.Cleanup(func() {
		ln.Close()
		p.Drop()
		p.Stall(false)
	})
	return p
}

// URL is the connection string of database db as role user, through p.
func (p *Proxy) URL(user, db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", user, p.ln.Addr(), db)
}

// Accepted is how many connections clients have opened through p.
func (p *Proxy) Accepted() int64 { return p.accepted.Load() }

// Delay holds every chunk of traffic, each way, for d before passing it on.
func (p *Proxy) Delay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = d
}

// Stall stops passing traffic on, without closing anything, until it is
// called with false: a network that drops every packet, or a frozen server.
func (p *Proxy) Stall(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = on
	p.changed.Broadcast()
}

// Refuse closes every new connection at once while on: a server that is down.
func (p *Proxy) Refuse(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = on
}

// Drop closes every open connection: a server restart, a broken network.
func (p *Proxy) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.accepted.Add(1)
		p.mu.Lock()
		refuse := p.refuse
		p.mu.Unlock()
		if refuse {
			client.Close()
			continue
		}
		server, err := net.Dial("unix", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.track(client, server)
		go p.pump(server, client)
		go p.pump(client, server)
	}
}

func (p *Proxy) track(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		p.conns[c] = true
	}
}

// pump copies from src to dst chunk by chunk, applying the faults to each.
func (p *Proxy) pump(dst, src net.Conn) {
	defer func() {
		dst.Close()
		src.Close()
		p.mu.Lock()
		delete(p.conns, dst)
		delete(p.conns, src)
		p.mu.Unlock()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			for p.stalled {
				p.changed.Wait()
			}
			delay := p.delay
			p.mu.Unlock()
			time.Sleep(delay)
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
