package embeddednats

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
)

// clusterWait bounds the wait for a cluster's routes and its JetStream meta leader: it only
// guards against a cluster that never forms, so it is generous for a loaded machine.
const clusterWait = time.Minute

// Cluster is a NATS cluster of servers with JetStream in one test, whose routes pass through
// proxies of the test's, so that it can hold the Raft traffic one server sends another
// (HoldRaft): a stream follower that stops hearing from its leader, deterministically, as a
// slow or cut-off follower does, while everything else on the route passes.
type Cluster struct {
	t       *testing.T
	servers []*natsserver.Server

	mu sync.Mutex
	// holding are the Raft groups whose messages from, to (server IDs) are held; "" is every
	// group.
	holding map[[2]string]map[string]bool
	ways    []*routeWay // every way of every route, for a release to flush
}

// StartCluster runs n servers (named s1…sn) with JetStream in one cluster on loopback ports
// until the test ends, and waits for their routes and their JetStream meta leader. Each
// server's routes reach it through a proxy in front of its cluster port, which it advertises
// to the others, so every route passes one proxy whichever side dialled it.
func StartCluster(t *testing.T, n int) *Cluster {
	t.Helper()
	c := &Cluster{t: t, holding: map[[2]string]map[string]bool{}}
	proxies := make([]*routeProxy, n)
	for i := range proxies {
		proxies[i] = startRouteProxy(t, c)
	}
	for i, p := range proxies {
		// Each server routes to the others (a clustered JetStream wants routes configured);
		// each route that two of them dial at once is made one by the servers.
		var routes []*url.URL
		for j, other := range proxies {
			if j != i {
				routes = append(routes, &url.URL{Scheme: "nats-route", Host: other.addr()})
			}
		}
		opts := &natsserver.Options{ServerName: fmt.Sprintf("s%d", i+1), Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: t.TempDir(), Routes: routes,
			Cluster: natsserver.ClusterOpts{Name: "trap", Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, Advertise: p.addr(),
				// Plain bytes on the routes, so that HoldRaft can tell the Raft messages.
				Compression: natsserver.CompressionOpts{Mode: natsserver.CompressionOff}}}
		ns, err := natsserver.NewServer(opts)
		if err != nil {
			t.Fatalf("embedded NATS server %s: %v", opts.ServerName, err)
		}
		go ns.Start()
		t.Cleanup(func() {
			ns.Shutdown()
			ns.WaitForShutdown()
		})
		if !ns.ReadyForConnections(readyWait) {
			t.Fatalf("the embedded NATS server %s did not start", opts.ServerName)
		}
		p.serve(ns)
		c.servers = append(c.servers, ns)
	}
	require.Eventually(t, c.formed, clusterWait, 10*time.Millisecond, "the NATS cluster of %d servers did not form", n)
	return c
}

// formed reports whether every server routes to every other and the JetStream meta leader
// sees every other server current, so that a stream of n replicas can be placed.
func (c *Cluster) formed() bool {
	for _, ns := range c.servers {
		if !ns.JetStreamIsCurrent() || ns.NumRemotes() != len(c.servers)-1 || !ns.JetStreamIsLeader() {
			continue
		}
		jsz, err := ns.Jsz(nil)
		if err != nil || jsz.Meta == nil || len(jsz.Meta.Replicas) != len(c.servers)-1 {
			return false
		}
		for _, peer := range jsz.Meta.Replicas {
			if !peer.Current || peer.Offline {
				return false
			}
		}
		return true
	}
	return false
}

// URL is the client URL of the server named name (s1…sn).
func (c *Cluster) URL(name string) string {
	return c.server(name).ClientURL()
}

func (c *Cluster) server(name string) *natsserver.Server {
	for _, ns := range c.servers {
		if ns.Name() == name {
			return ns
		}
	}
	c.t.Fatalf("the cluster has no server %q", name)
	return nil
}

// HoldRaft holds the Raft messages ($NRG.…: appends, heartbeats, votes) that server from
// sends server to over their routes, until the returned release (or the test's end) lets
// them through in order. Everything else on the route passes: a client of to reaches from
// and is answered, while to's replicas apply nothing from's replicas send them; a KeyValue
// Get that to answers itself is answered from what it had applied.
func (c *Cluster) HoldRaft(from, to string) (release func()) {
	c.t.Helper()
	return c.hold(from, to, "")
}

// HoldStreamRaft is HoldRaft for the Raft group of stream alone: to's replica of the stream
// applies nothing its leader on from sends it, while every other group (the JetStream meta
// group, which places consumers and streams, and the consumers') goes on as before, as when a
// stream's follower is slow. A KeyValue listing whose consumer the servers place on to lists
// what to had applied.
func (c *Cluster) HoldStreamRaft(from, to, stream string) (release func()) {
	c.t.Helper()
	jsz, err := c.server(from).Jsz(&natsserver.JSzOptions{Accounts: true, Streams: true, RaftGroups: true})
	if err != nil {
		c.t.Fatalf("JetStream state of %s: %v", from, err)
	}
	for _, acc := range jsz.AccountDetails {
		for _, st := range acc.Streams {
			if st.Name == stream && st.RaftGroup != "" {
				return c.hold(from, to, st.RaftGroup)
			}
		}
	}
	c.t.Fatalf("%s holds no replicated stream %s", from, stream)
	return nil
}

// hold holds the Raft messages of group ("": every group) from → to until release.
func (c *Cluster) hold(from, to, group string) (release func()) {
	key := [2]string{c.server(from).ID(), c.server(to).ID()}
	c.mu.Lock()
	if c.holding[key] == nil {
		c.holding[key] = map[string]bool{}
	}
	c.holding[key][group] = true
	c.mu.Unlock()
	release = sync.OnceFunc(func() {
		c.mu.Lock()
		delete(c.holding[key], group)
		if len(c.holding[key]) == 0 {
			delete(c.holding, key)
		}
		ways := slices.Clone(c.ways)
		c.mu.Unlock()
		for _, w := range ways {
			w.flush()
		}
	})
	c.t.Cleanup(release)
	return release
}

// holds reports whether the Raft message on subject ($NRG.<kind>.<group>) from → to is held.
func (c *Cluster) holds(from, to, subject string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := c.holding[[2]string{from, to}]
	return groups[""] || groups[raftGroup(subject)]
}

// raftGroup is the Raft group a Raft message's subject names ($NRG.AE.<group>, …); a reply's
// inbox names none that a hold names.
func raftGroup(subject string) string {
	tokens := strings.SplitN(subject, ".", 4)
	if len(tokens) < 3 {
		return ""
	}
	return tokens[2]
}

// LastSeq is the last sequence of stream as the server named name holds it: a follower that
// lags its leader reports less than the leader.
func (c *Cluster) LastSeq(name, stream string) uint64 {
	c.t.Helper()
	jsz, err := c.server(name).Jsz(&natsserver.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		c.t.Fatalf("JetStream state of %s: %v", name, err)
	}
	for _, acc := range jsz.AccountDetails {
		for _, st := range acc.Streams {
			if st.Name == stream {
				return st.State.LastSeq
			}
		}
	}
	c.t.Fatalf("%s holds no stream %s", name, stream)
	return 0
}

// DirectGets is how many direct gets of stream the servers have answered, together: a read
// through the stream leader ($JS.API.STREAM.MSG.GET) counts none.
func (c *Cluster) DirectGets(stream string) uint64 {
	c.t.Helper()
	var n uint64
	for _, ns := range c.servers {
		sz, err := ns.Subsz(&natsserver.SubszOptions{Subscriptions: true, Test: "$JS.API.DIRECT.GET." + stream + ".x"})
		if err != nil {
			c.t.Fatalf("subscriptions of %s: %v", ns.Name(), err)
		}
		for _, sub := range sz.Subs {
			if strings.HasPrefix(sub.Subject, "$JS.API.DIRECT.GET.") {
				n += uint64(sub.Msgs)
			}
		}
		sz, err = ns.Subsz(&natsserver.SubszOptions{Subscriptions: true, Test: "$JS.API.DIRECT.GET." + stream})
		if err != nil {
			c.t.Fatalf("subscriptions of %s: %v", ns.Name(), err)
		}
		for _, sub := range sz.Subs {
			if strings.HasPrefix(sub.Subject, "$JS.API.DIRECT.GET.") {
				n += uint64(sub.Msgs)
			}
		}
	}
	return n
}

// routeProxy passes the routes dialled to one server's cluster port, each connection told
// apart by the server ID that the dialling server names in its route CONNECT, its first line.
type routeProxy struct {
	ln      net.Listener
	cluster *Cluster
	target  *natsserver.Server // the server behind it, set before ready is closed
	ready   chan struct{}      // closed once the server behind it listens
	done    chan struct{}      // closed when the test ends
}

func startRouteProxy(t *testing.T, c *Cluster) *routeProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("route proxy: %v", err)
	}
	p := &routeProxy{ln: ln, cluster: c, ready: make(chan struct{}), done: make(chan struct{})}
	var wg sync.WaitGroup
	var connsMu sync.Mutex
	conns := map[net.Conn]bool{}
	t.Cleanup(func() {
		close(p.done)
		_ = ln.Close()
		connsMu.Lock()
		for conn := range conns {
			_ = conn.Close()
		}
		connsMu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			connsMu.Lock()
			conns[conn] = true
			connsMu.Unlock()
			wg.Go(func() { p.pass(conn, &wg) })
		}
	})
	return p
}

func (p *routeProxy) addr() string { return p.ln.Addr().String() }

// serve sets the server the proxy passes to; a route dialled before waits for it.
func (p *routeProxy) serve(ns *natsserver.Server) {
	p.target = ns
	close(p.ready)
}

// pass joins the dialled connection in to the target's cluster port until either closes.
func (p *routeProxy) pass(in net.Conn, wg *sync.WaitGroup) {
	select {
	case <-p.ready:
	case <-p.done:
		_ = in.Close()
		return
	}
	target := p.target
	out, err := net.Dial("tcp", target.ClusterAddr().String())
	if err != nil {
		_ = in.Close()
		return
	}
	defer func() {
		_ = in.Close()
		_ = out.Close()
	}()
	// The target's INFO comes at once, before the dialler's CONNECT has named it: no Raft
	// message comes before it.
	back := p.cluster.way(out, in, target.ID())
	wg.Go(func() {
		back.copy()
		_ = in.Close()
		_ = out.Close()
	})
	r := bufio.NewReader(in)
	line, err := r.ReadString('\n')
	if err != nil {
		return
	}
	dialer := routeConnectName(line)
	back.setTo(dialer)
	there := p.cluster.way(r, out, dialer)
	there.setTo(target.ID())
	if _, err := io.WriteString(out, line); err != nil {
		return
	}
	there.copy()
}

// routeWay is one direction of one route: what server from sends on it, to server to.
type routeWay struct {
	cluster *Cluster
	src     *bufio.Reader
	from    string

	mu         sync.Mutex // guards to, held, heldGroups and the writes to dst
	dst        io.Writer
	to         string
	held       [][]byte        // Raft messages held, in order
	heldGroups map[string]bool // the Raft groups of the messages held
}

func (c *Cluster) way(src io.Reader, dst io.Writer, from string) *routeWay {
	w := &routeWay{cluster: c, src: bufio.NewReader(src), from: from, dst: dst}
	c.mu.Lock()
	c.ways = append(c.ways, w)
	c.mu.Unlock()
	return w
}

func (w *routeWay) setTo(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.to = id
}

// copy passes each protocol message of the route, holding the Raft ones while the cluster
// holds them on this way (and every one of a group after a held one, so they keep their
// order).
func (w *routeWay) copy() {
	for {
		msg, subject, err := readRouteMessage(w.src)
		if err != nil {
			return
		}
		w.mu.Lock()
		raft := strings.HasPrefix(subject, "$NRG.")
		if raft && (w.heldGroups[raftGroup(subject)] || w.cluster.holds(w.from, w.to, subject)) {
			w.held = append(w.held, msg)
			if w.heldGroups == nil {
				w.heldGroups = map[string]bool{}
			}
			w.heldGroups[raftGroup(subject)] = true
			w.mu.Unlock()
			continue
		}
		_, err = w.dst.Write(msg)
		w.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// flush sends what this way holds unless the cluster still holds it.
func (w *routeWay) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cluster.mu.Lock()
	holding := len(w.cluster.holding[[2]string{w.from, w.to}]) > 0
	w.cluster.mu.Unlock()
	if holding {
		return
	}
	for _, msg := range w.held {
		if _, err := w.dst.Write(msg); err != nil {
			break
		}
	}
	w.held, w.heldGroups = nil, nil
}

// readRouteMessage reads one protocol message of a route, whole: a line, and for RMSG and
// HMSG (RMSG account subject [reply] size, HMSG … header-size size) the payload after it. It
// returns the subject of a Raft message ($NRG.…; another message's is its second field), ""
// for the other operations. A route dedicated to one account, as the servers make one for the
// Raft traffic of a stream's group, leaves the account out (RMSG subject [reply] size); no
// account's name starts with $NRG.
func readRouteMessage(r *bufio.Reader) (msg []byte, subject string, err error) {
	line, err := r.ReadBytes('\n')
	if err != nil {
		return nil, "", err
	}
	fields := strings.Fields(string(line))
	if len(fields) < 3 || (fields[0] != "RMSG" && fields[0] != "HMSG") {
		return line, "", nil
	}
	size, err := strconv.Atoi(fields[len(fields)-1])
	if err != nil || size < 0 {
		return nil, "", fmt.Errorf("route message %q: no size", line)
	}
	payload := make([]byte, size+2) // and its CRLF
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, "", err
	}
	subject = fields[1]
	if !strings.HasPrefix(subject, "$NRG.") {
		subject = fields[2]
	}
	return append(line, payload...), subject, nil
}

// routeConnectName is the server ID a route's CONNECT line names ("" when it names none).
func routeConnectName(line string) string {
	js, ok := strings.CutPrefix(line, "CONNECT ")
	if !ok {
		return ""
	}
	var connect struct {
		Name string `json:"name"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(js)), &connect) != nil {
		return ""
	}
	return connect.Name
}

// ReplicatedBucket makes the key-value bucket named bucket with three stream replicas (as
// scale-out.md has the operator make it on a cluster) and waits for its stream's leader and
// two current followers; it returns the leader's name and one follower's.
func (c *Cluster) ReplicatedBucket(bucket string) (leader, follower string) {
	c.t.Helper()
	ctx := c.t.Context()
	setup := JetStream(c.t, c.URL("s1"))
	// The meta leader places a stream on servers it has heard report in (else "no suitable
	// peers for placement, peer offline"), which a formed cluster's servers do shortly after.
	require.Eventually(c.t, func() bool {
		_, err := setup.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1, Replicas: 3})
		return err == nil
	}, clusterWait, 10*time.Millisecond, "the bucket is made with three stream replicas")
	st, err := setup.Stream(ctx, "KV_"+bucket)
	require.NoError(c.t, err)
	require.Eventually(c.t, func() bool {
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
			return false
		}
		for _, r := range info.Cluster.Replicas {
			if !r.Current {
				return false
			}
		}
		leader, follower = info.Cluster.Leader, info.Cluster.Replicas[0].Name
		return true
	}, clusterWait, 10*time.Millisecond, "the bucket's stream has a leader and two current followers")
	// The leader takes the bucket's writes once every server has heard of its interest in
	// them; before that, a write through another server is answered "no responders".
	require.Eventually(c.t, func() bool {
		for _, ns := range c.servers {
			if !ns.GlobalAccount().SubscriptionInterest("$KV." + bucket + ".probe") {
				return false
			}
		}
		return true
	}, clusterWait, 10*time.Millisecond, "every server routes the bucket's writes to its stream's leader")
	return leader, follower
}
