package cli

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestACapAboveTheOpenFilesLimitIsWarnedAbout(t *testing.T) {
	limit, ok := openFilesLimit()
	if !ok {
		t.Skip("no open-files limit on this platform")
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	warnIfFilesRunOut(logger, int(limit)) // no room left for the listener and the rest
	assert.Contains(t, logs.String(), "open-files limit is below --max-connections")
	assert.Contains(t, logs.String(), fmt.Sprintf("raise the limit to at least %d (", limit+spareFiles), "the sentence names the limit to set")
	assert.Contains(t, logs.String(), fmt.Sprintf("needed=%d ", limit+spareFiles))
	logs.Reset()
	warnIfFilesRunOut(logger, 1)
	assert.Empty(t, logs.String())
}
