package bench

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTailBufferKeepsTheLastBytes: a child's output is kept as its last logTailBytes, however
// much of it there was, in at most twice that.
func TestTailBufferKeepsTheLastBytes(t *testing.T) {
	var tb tailBuffer
	var all strings.Builder
	for i := 0; all.Len() < 5*logTailBytes+123; i++ {
		line := fmt.Sprintf("line %d\n", i)
		all.WriteString(line)
		n, err := tb.Write([]byte(line))
		require.NoError(t, err)
		require.Equal(t, len(line), n)
		assert.LessOrEqual(t, len(tb.buf), 2*logTailBytes)
	}
	want := all.String()
	assert.Equal(t, want[len(want)-logTailBytes:], tb.String())

	var short tailBuffer
	_, _ = short.Write([]byte("only this\n"))
	assert.Equal(t, "only this\n", short.String())
}
