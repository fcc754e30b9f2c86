package scaleout

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/testkit/daemonfake"

	"tests/internal/browser"
	"tests/internal/harness"
)

// TestTheWebConsoleSaysAReplicasListIsPartial: the web console of a replica cut off from NATS
// (its link alone: the other replica stays on it) says above its computer list the gateway's
// words on it, X-Trapos-Partial-List's (docs/scale-out.md), as trap-sandbox computers and
// list_computers do, where the other replica's computer vanished from the list and "No
// computer is connected" read as none anywhere; once the replica reaches NATS again its list is
// whole and the words go. The replica's name, küche, is not ASCII: the header is UTF-8.
func TestTheWebConsoleSaysAReplicasListIsPartial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*waitLimit)
	defer cancel()
	nats := harness.StartNATS(t, natsBin)
	link := startNATSLink(t, nats)
	a := harness.Start(t, gatewayBin, harness.Options{
		Args: append([]string{"--nats", link.url, "--replica", "küche"}, replicaFlags...),
	})
	b := startReplica(t, nats, "b")
	d := &harness.Daemon{Daemon: daemonfake.Daemon{ID: 7, Label: "kitchen"}}
	stop, err := d.Serve(ctx, b.WebSocketURL(), "")
	require.NoError(t, err)
	defer stop()

	page, until := browser.ConsolePage(ctx, t)
	require.NoError(t, chromedp.Do(page, chromedp.Navigate(a.URL("/console/"))))
	const listed = `[...document.querySelectorAll("#computer-list a")].some((a) => a.textContent === "7:kitchen")`
	const partialShown = `!document.getElementById("partial-list").hidden`
	until(t, "küche's console to list b's computer, saying nothing of a partial list", listed+" && !"+partialShown)
	// Its row names the replica that holds its socket, as trap-sandbox computers' REPLICA does.
	columns, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#computers th")].filter((th) => !th.hidden).map((th) => th.textContent)`))
	require.NoError(t, err)
	assert.Equal(t, []string{"traposId", "account", "state", "connected since", "last frame", "address", "replica"}, columns)
	row, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[...document.querySelector("#computer-list tr").cells].map((td) => td.textContent)`))
	require.NoError(t, err)
	require.Len(t, row, 7)
	assert.Equal(t, []string{"7:kitchen", "local", "connected", "b"}, []string{row[0], row[1], row[2], row[6]})

	link.cut()
	// A lists B's computer no more from the moment it sees the link drop: it cannot reach it.
	until(t, "küche's console to say its list is partial, b's computer gone from it", partialShown+" && !"+listed)
	words, err := chromedp.Run(page, chromedp.Evaluate[[]string](`[document.getElementById("partial-list").textContent,
		document.getElementById("no-computers").hidden ? "" : document.getElementById("no-computers").textContent]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"Replica küche cannot reach NATS: only the computers it holds are listed; see /healthz.", "No computer is connected."}, words)

	link.restore()
	until(t, "küche's console to list b's computer again, the words gone", listed+" && !"+partialShown)
}

// natsLink is a TCP link between one replica and NATS that the test can cut (every connection
// closed, new ones refused) and restore, the other replicas' connections untouched: a replica
// cut off from NATS by the network, as a stopped nats-server cuts off every replica.
type natsLink struct {
	url string // nats://127.0.0.1:PORT, the replica's --nats

	listener net.Listener
	to       string // NATS's host:port
	mu       sync.Mutex
	isCut    bool
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
}

// startNATSLink listens on a free loopback port for a link to nats; the test's cleanup closes it
// and waits for its goroutines.
func startNATSLink(t *testing.T, nats *harness.NATS) *natsLink {
	t.Helper()
	u, err := url.Parse(nats.URL)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	link := &natsLink{url: "nats://" + l.Addr().String(), listener: l, to: u.Host, conns: map[net.Conn]struct{}{}}
	link.wg.Go(link.accept)
	t.Cleanup(func() {
		_ = l.Close()
		link.cut()
		link.wg.Wait()
	})
	return link
}

// accept links each connection to NATS, until the listener closes; while cut, it closes them.
func (l *natsLink) accept() {
	for {
		c, err := l.listener.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		l.wg.Go(func() { l.serve(c) })
	}
}

// serve pipes c to NATS and back until either end, or cut, closes it.
func (l *natsLink) serve(c net.Conn) {
	defer c.Close()
	up, err := net.Dial("tcp", l.to)
	if err != nil {
		return
	}
	defer up.Close()
	l.mu.Lock()
	if l.isCut {
		l.mu.Unlock()
		return
	}
	l.conns[c], l.conns[up] = struct{}{}, struct{}{}
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.conns, c)
		delete(l.conns, up)
		l.mu.Unlock()
	}()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); _ = up.Close(); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); _ = c.Close(); done <- struct{}{} }()
	<-done
	<-done
}

// cut closes every connection of the link and refuses new ones until restore.
func (l *natsLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.isCut = true
	for c := range l.conns {
		_ = c.Close()
	}
}

// restore lets the replica connect to NATS again.
func (l *natsLink) restore() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.isCut = false
}
