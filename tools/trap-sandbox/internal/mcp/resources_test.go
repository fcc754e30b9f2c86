package mcp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yosida95/uritemplate/v3"
)

func TestFileURIRoundTrip(t *testing.T) {
	tests := []struct {
		name, traposID, path, uri string
	}{
		{"plain", "7:kitchen", "/startup.lua", "trapos://7%3Akitchen/startup.lua"},
		{"nested", "0:", "/a/b c/d.txt", "trapos://0%3A/a/b%20c/d.txt"},
		{"root", "12:x/y", "/", "trapos://12%3Ax%2Fy/"},
		{"bytes", "1:\xfcber", "/f\xff%", "trapos://1%3A%FCber/f%FF%25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uri := FileURI(tt.traposID, tt.path)
			assert.Equal(t, tt.uri, uri)
			id, p, err := ParseFileURI(uri)
			require.NoError(t, err)
			assert.Equal(t, tt.traposID, id)
			assert.Equal(t, tt.path, p)
			// The SDK routes a resources/read by matching the template.
			assert.True(t, uritemplate.MustNew(fileTemplate).Regexp().MatchString(uri), "template does not match %s", uri)
		})
	}
}

func TestParseFileURIRefusesOthers(t *testing.T) {
	for _, uri := range []string{"file:///x", "trapos:///x", "trapos://%zz/x", "trapos://1%3Aa/%zz"} {
		_, _, err := ParseFileURI(uri)
		assert.Error(t, err, uri)
	}
}
