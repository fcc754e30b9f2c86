package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"trap-sandbox/internal/files"
)

func TestListingAlignsSizesRightAndNamesLeft(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, writeListing(&out, []files.Entry{
		{Name: "rom", IsDir: true},
		{Name: "startup.lua", Size: 1532},
		{Name: "a", Size: 7},
		{Name: "\u00ff.bin", Size: 0},
		{Name: "\u001b[2Jx", IsDir: true},
	}))
	assert.Equal(t, ""+
		"      rom/\n"+
		"1532  startup.lua\n"+
		"   7  a\n"+
		"   0  \\xff.bin\n"+
		"      \\x1b[2Jx/\n", out.String(), "bytes a terminal would act on are shown escaped")
}

func TestFileErrorsShowControlBytesEscaped(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"ok":false,"error":{"code":"fs_error","message":"/\u001b]0;pwned\u0007: No such file"}}`))
	}))
	defer srv.Close()
	_, err := APIFlags{URL: srv.URL}.getFile(t.Context(), "7:", "/x")
	require.Error(t, err)
	assert.Equal(t, `read /x on 7:: fs_error: /\x1b]0;pwned\x07: No such file`, err.Error())
}

func TestAbandonedChunkNamesTheTimeoutFlag(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"ok":false,"error":{"code":"timeout","message":"it ran past its timeout of 1000 ms and was abandoned"}}`))
	}))
	defer srv.Close()
	var out bytes.Buffer
	cmd := ExecCmd{APIFlags: APIFlags{URL: srv.URL}, TraposID: "7:", Code: "sleep(3)", Timeout: time.Second}
	err := cmd.Run(t.Context(), Stdout{&out}, Stdin{strings.NewReader("")})
	assert.EqualError(t, err, "lua.exec on 7: failed: the computer answered timeout: it ran past its timeout of 1000 ms and was abandoned (--timeout gives it longer, at most 60s)")
}
