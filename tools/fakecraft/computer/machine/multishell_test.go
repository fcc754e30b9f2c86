package machine

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMultishellAtBoot: the bios starts multishell only where the host lets it and CC's
// bios would (a colour computer with bios.use_multishell); the program runs in its first
// tab either way.
func TestMultishellAtBoot(t *testing.T) {
	const probe = `print(multishell and ("tab " .. multishell.getCurrent() .. " of " .. multishell.getCount()) or "no multishell")`
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"allowed", Options{Multishell: true}, "tab 1 of 1"},
		{"not allowed (a transcript)", Options{}, "no multishell"},
		{"basic computer", Options{Multishell: true, Basic: true}, "no multishell"},
		{"setting off", Options{Multishell: true, Settings: map[string]string{"bios.use_multishell": "false"}}, "no multishell"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var out bytes.Buffer
			opts := tc.opts
			opts.Files = map[string]string{"/probe.lua": probe}
			opts.Program = "/probe.lua"
			opts.Stdout = &out
			m, err := New(opts)
			require.NoError(t, err)
			res, err := m.Run(ctx)
			require.NoError(t, err)
			assert.True(t, res.OK, out.String())
			assert.Contains(t, out.String(), tc.want)
		})
	}
}
