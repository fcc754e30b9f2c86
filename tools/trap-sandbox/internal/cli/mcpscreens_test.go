package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"trap-sandbox/internal/hostapi"
	"trap-sandbox/internal/protocol"
	"trap-sandbox/internal/screen"
	"trap-sandbox/internal/server"
)

// screenFrame is one frame of the host API's screen stream, a one-row screen showing text.
func screenFrame(seq int, text string) string {
	return fmt.Sprintf("event: frame\ndata: {\"seq\":%d,\"width\":5,\"height\":1,\"colour\":true,\"cursor\":{\"x\":1,\"y\":1,\"blink\":false},\"rows\":[{\"text\":%q,\"fg\":\"00000\",\"bg\":\"fffff\"}]}\n\n", seq, text)
}

// answerJSON is the host API's answer of why, as the gateway writes it.
func answerJSON(t *testing.T, why *protocol.Error) string {
	t.Helper()
	data, err := json.Marshal(server.Answer{Error: why})
	require.NoError(t, err)
	return string(data)
}

// TestTheBridgeReadsAComputerGoneByItsMark: the bridge tells a computer gone from the stream's
// other ends by the end's mark (Left), which the gateway sets, never by its words, which it
// compared before: a rewording of the gateway's words reached the agent as the gateway's,
// without the wait's words of a computer that left. The words alone (a gateway of a build before
// the mark) are passed on as the gateway said them.
func TestTheBridgeReadsAComputerGoneByItsMark(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ends := map[string]string{
		"7:reworded": `{"ok":false,"error":{"code":"not_connected","message":"computer 7:reworded went away","left":true}}`,
		"7:old":      `{"ok":false,"error":{"code":"not_connected","message":"computer 7:old disconnected"}}`,
	}
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Path[len("/trapos/computers/") : len(r.URL.Path)-len("/screen")]
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, screenFrame(1, "one"), "event: end\ndata: "+ends[id]+"\n\n")
	}))
	defer gw.Close()
	screens := streamedScreens{hostapi.HTTP{URL: gw.URL, ListedIDs: true}}
	for id, want := range map[string]struct {
		left    bool
		message string
	}{
		"7:reworded": {true, "computer 7:reworded disconnected before it answered; it may have done what it was asked all the same: check before you ask again"},
		"7:old":      {false, "computer 7:old disconnected"},
	} {
		w, err := screens.WatchScreen(t.Context(), id, "", 0)
		require.NoError(t, err)
		_, err = w.Next(t.Context())
		require.NoError(t, err)
		_, err = w.Next(t.Context())
		pe, ok := err.(*protocol.Error)
		require.True(t, ok, "%v", err)
		assert.Equal(t, want.left, pe.Left, id)
		assert.Equal(t, want.message, pe.Message, id)
		w.Close()
	}
}

// TestTheBridgeWaitsOnTheScreensStream: the stdio bridge's wait_for_screen reads the host
// API's stream of the computer's screen (its listed traposId in the path in its shown form,
// the monitor as the query's), words a computer that went away as every tool's request whose
// computer left, the owner's withdrawal as the computer's words, and leaves no goroutine
// behind, whether the stream ended or is still open when the wait closes it.
func TestTheBridgeWaitsOnTheScreensStream(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ends := map[string]string{
		"7:gone":   answerJSON(t, screen.Disconnected("7:gone")), // the gateway's own, its mark with its words
		"7:denied": `{"ok":false,"error":{"code":"forbidden","message":"computer 7:denied says the screen watch ended: the owner withdrew sandbox.allow_screen"}}`,
	}
	held := make(chan struct{})
	paths := make(chan string, 8)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.RequestURI()
		id := r.URL.Path[len("/trapos/computers/") : len(r.URL.Path)-len("/screen")]
		if id == "7:refused" {
			server.WriteError(w, http.StatusForbidden, protocol.CodeForbidden, "screen.watch needs sandbox.allow_screen view")
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, screenFrame(1, "one"), screenFrame(2, "two"))
		if end, ok := ends[id]; ok {
			fmt.Fprint(w, "event: end\ndata: "+end+"\n\n")
			return
		}
		w.(http.Flusher).Flush()
		select { // held open until the wait leaves
		case <-r.Context().Done():
		case <-held:
		}
	}))
	defer gw.Close()
	defer close(held)
	screens := streamedScreens{hostapi.HTTP{URL: gw.URL, ListedIDs: true}}

	w, err := screens.WatchScreen(t.Context(), "7:gone", "", 0)
	require.NoError(t, err)
	s, err := w.Next(t.Context())
	require.NoError(t, err)
	assert.Equal(t, "one", s.Text())
	_, err = w.Next(t.Context())
	require.NoError(t, err)
	_, err = w.Next(t.Context())
	pe, ok := err.(*protocol.Error)
	require.True(t, ok, "%v", err)
	assert.True(t, pe.Left, "as a request whose computer left")
	assert.Equal(t, "not_connected: computer 7:gone disconnected before it answered; it may have done what it was asked all the same: check before you ask again", pe.Error())
	w.Close()

	w, err = screens.WatchScreen(t.Context(), "7:denied", "", 0)
	require.NoError(t, err)
	for range 2 {
		_, err = w.Next(t.Context())
		require.NoError(t, err)
	}
	_, err = w.Next(t.Context())
	pe, ok = err.(*protocol.Error)
	require.True(t, ok, "%v", err)
	assert.Equal(t, protocol.CodeForbidden, pe.Code)
	assert.True(t, pe.ByComputer, "the computer ended the watch")
	w.Close()

	_, err = screens.WatchScreen(t.Context(), "7:refused", "", 0)
	assert.EqualError(t, err, "forbidden: screen.watch needs sandbox.allow_screen view")

	// Still open, one frame unread: Close ends the reader all the same.
	w, err = screens.WatchScreen(t.Context(), "7:a\\x41", "top", 0)
	require.NoError(t, err)
	_, err = w.Next(t.Context())
	require.NoError(t, err)
	w.Close()
	for range 3 {
		<-paths
	}
	assert.Equal(t, "/trapos/computers/7:a%5Cx5cx41/screen?monitor=top", <-paths, "a listed traposId's backslash escaped, as the API reads it back")
}
