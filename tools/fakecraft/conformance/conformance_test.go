package conformance

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	lua "github.com/yuin/gopher-lua"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func statuses(rep Report) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Results {
		out[r.Name] = r.Status
	}
	return out
}

func TestRunDrivesMcflyAndSurvivesHangsAndShutdowns(t *testing.T) {
	rep, err := Run(context.Background(), Options{TestROM: "testdata/fake-rom", TestTimeout: 5 * time.Second}) // generous: only "hangs" waits it out
	require.NoError(t, err)
	assert.Equal(t, map[string]string{
		"a › passes":             StatusOK,
		"a › fails":              StatusFail,
		"a › golden case":        StatusOK,
		"b › hangs":              StatusError,
		"b › is pending":         StatusPending,
		"b › stops the computer": StatusError,
		"b › passes after":       StatusOK,
	}, statuses(rep))
	assert.Equal(t, 3, rep.Boots, "a hang and a shutdown each cost a fresh computer")
	p, f, s := rep.Count()
	assert.Equal(t, []int{3, 3, 1}, []int{p, f, s})
	files, by := rep.ByFile()
	assert.Equal(t, []string{"a_spec.lua", "b_spec.lua"}, files, "a helper's test counts for the spec file that called it")
	assert.Len(t, by["a_spec.lua"].Results, 3)
}

func TestRunSelectsSpecs(t *testing.T) {
	rep, err := Run(context.Background(), Options{TestROM: "testdata/fake-rom", Specs: []string{"a_spec.lua"}})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"a › passes": StatusOK, "a › fails": StatusFail, "a › golden case": StatusOK}, statuses(rep))
}

func TestRunRefusesADirectoryWithoutMcfly(t *testing.T) {
	_, err := Run(context.Background(), Options{TestROM: t.TempDir()})
	assert.ErrorContains(t, err, "not a test-rom")
}

func TestRunGivesTheComputerTheHarnessDriveSize(t *testing.T) {
	// A one-test mcfly that passes when the drive is as big as CC's harness makes it.
	rom := t.TempDir()
	mcfly := `local root = ...;
cct_test.start({ ["drive\0is the harness's size"] = { idx = 1, definition = "/" .. root .. "/fs_spec.lua:1" } });
local _, name = os.pullEvent("cct_test_run");
local capacity = fs.getCapacity("");
if capacity == 10000000 then
  cct_test.submit({ name = name, status = "pass" });
else
  cct_test.submit({ name = name, status = "fail", message = tostring(capacity) });
end
os.pullEvent("cct_test_run");
cct_test.finish();
`
	require.NoError(t, os.WriteFile(filepath.Join(rom, "mcfly.lua"), []byte(mcfly), 0o644))
	rep, err := Run(context.Background(), Options{TestROM: rom})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, StatusOK, rep.Results[0].Status, rep.Results[0].Message)
}

// TestFileOfACutDefinition: mcfly writes a test's definition from debug's short_src, which
// cuts a path of more than 22 bytes to "..." and its last 22, as Cobalt's does; the runner
// finds the test-rom file that ends so.
func TestFileOfACutDefinition(t *testing.T) {
	files := []string{"mcfly.lua", "spec/apis/http_spec.lua", "spec/programs/http/wget_spec.lua", "spec/programs/gps_spec.lua"}
	for def, want := range map[string]string{
		"/test-rom/spec/base_spec.lua:3": "base_spec.lua",
		".../apis/http_spec.lua:12":      "apis/http_spec.lua",
		"...ams/http/wget_spec.lua:40":   "programs/http/wget_spec.lua",
		".../programs/gps_spec.lua:5":    "programs/gps_spec.lua",
		"...t-rom/spec/nowhere_x.lua:1":  "...t-rom/spec/nowhere_x.lua",
	} {
		assert.Equal(t, want, fileOf("a test", lua.LString(def), files), def)
	}
	assert.Equal(t, "spec/broken_spec.lua", fileOf("spec/broken_spec.lua", lua.LNil, files))
}
